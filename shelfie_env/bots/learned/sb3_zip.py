"""Reading a Stable-Baselines3 ``.zip`` model with its card (needs the ``train`` extra, imported on use).

An SB3 ``.zip`` holds ``policy.pth`` (the policy's torch state dict) and a ``data`` JSON whose
entries may be base64 pickles. A model given by path is read by :func:`read_zip_weights`:
``policy.pth`` through torch's weights-only loader, shapes from the state dict and the card,
``data`` never opened, so a model file is data and cannot run code. :func:`load_model` builds
the whole SB3 object and unpickles ``data``: it is for a run folder's own checkpoints only
(resuming, exporting), which are trusted like code.
"""

from __future__ import annotations

import io
import pickle
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card

POLICY_ENTRY = "policy.pth"
"""The member of an SB3 ``.zip`` that holds the policy's state dict."""
MAX_POLICY_BYTES = 256 * 2**20
"""Largest ``policy.pth`` (uncompressed) a model file may hold; this package's networks take a few MB."""


def zip_path(model_path: str | Path) -> Path:
    """``model_path`` with the ``.zip`` suffix SB3 uses."""
    p = Path(model_path)
    return p if p.suffix == ".zip" else p.with_name(p.name + ".zip")


def _not_a_model(zp: Path, why: str) -> CheckpointMismatchError:
    return CheckpointMismatchError(
        f"{zp} is not a model file: {why} (a training checkpoint is a .zip archive as `shelfie train` writes it)"
    )


def read_zip_weights(model_path: str | Path) -> dict[str, np.ndarray]:
    """The policy's state dict of the SB3 ``.zip`` at ``model_path``, as numpy arrays by torch name.

    Only ``policy.pth`` is read, with ``torch.load(weights_only=True)``: tensors and plain
    containers, never arbitrary objects. Anything else is refused with
    :class:`CheckpointMismatchError` in one line.
    """
    import torch

    zp = zip_path(model_path)
    if not zp.is_file():
        raise FileNotFoundError(f"no model file at {zp}")
    try:
        with zipfile.ZipFile(zp) as archive:
            info = archive.getinfo(POLICY_ENTRY)
            if info.file_size > MAX_POLICY_BYTES:
                raise _not_a_model(zp, f"its {POLICY_ENTRY} is over {MAX_POLICY_BYTES // 2**20} MB")
            raw = archive.read(info)
    except KeyError:
        raise _not_a_model(zp, f"it has no {POLICY_ENTRY}") from None
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, NotImplementedError, RuntimeError):
        raise _not_a_model(zp, "it is not a readable zip archive") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch's note on a file's pickle protocol
            state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, ValueError, TypeError, EOFError, AttributeError):
        raise _not_a_model(zp, f"its {POLICY_ENTRY} is not a state dict of tensors") from None
    if not isinstance(state, Mapping) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise _not_a_model(zp, f"its {POLICY_ENTRY} is not a state dict of tensors")
    try:
        return {k: v.detach().cpu().numpy() for k, v in state.items()}
    except TypeError:  # a dtype numpy has not (bfloat16, ...)
        raise _not_a_model(zp, f"its {POLICY_ENTRY} holds tensors of a type numpy cannot read") from None


def load_model(
    model_path: str | Path,
    num_players: int | None = None,
    env: Any = None,
    custom_objects: Mapping[str, Any] | None = None,
) -> tuple[Any, dict]:
    """Load a run folder's own MaskablePPO checkpoint after checking its card; returns ``(model, card)``.

    SB3 unpickles the checkpoint's ``data`` entry, so the file must be trusted like code: this is
    for resuming and exporting a run, never for a model given by path (:func:`read_zip_weights`).
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
