"""Reading a Stable-Baselines3 ``.zip`` model with its card (needs the ``train`` extra, imported on use)."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card


def zip_path(model_path: str | Path) -> Path:
    """``model_path`` with the ``.zip`` suffix SB3 uses."""
    p = Path(model_path)
    return p if p.suffix == ".zip" else p.with_name(p.name + ".zip")


def load_model(
    model_path: str | Path,
    num_players: int | None = None,
    env: Any = None,
    custom_objects: Mapping[str, Any] | None = None,
) -> tuple[Any, dict]:
    """Load a MaskablePPO checkpoint after checking its card; returns ``(model, card)``.

    ``custom_objects`` replaces saved attributes (e.g. ``learning_rate`` when resuming).
    """
    zp = zip_path(model_path)
    if not zp.is_file():
        raise FileNotFoundError(f"no checkpoint at {zp}")
    card = load_card(zp, num_players)
    if not zipfile.is_zipfile(zp):
        raise CheckpointMismatchError(
            f"{zp} is not a model file: a training checkpoint is a .zip archive as `shelfie train` writes it"
        )
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(zp), env=env, device="cpu", custom_objects=dict(custom_objects or {}))
    size = model.observation_space.shape
    if size != (card["observation_size"],):
        raise CheckpointMismatchError(
            f"{zp}: the network takes observations of shape {size}, the card says "
            f"({card['observation_size']},)"
        )
    return model, card
