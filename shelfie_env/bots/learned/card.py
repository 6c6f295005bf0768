"""Model cards: the JSON that travels with every model file (``x.npz`` or ``x.zip`` -> ``x.json``).

The card says what the network was trained on (env id, observation layout
version and size, action layout, number of players), how (training config,
steps, wall time) and how well it plays (evaluation results with the command
that produced them). :func:`load_card` checks the card against the current
package and refuses a mismatch with :class:`CheckpointMismatchError`, so a
model is never silently fed observations it was not trained on.

Reading and checking cards needs only the standard library.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shelfie_env.game.actions import NUM_ACTIONS
from shelfie_env.game.reroll_keep import REROLL_MODES
from shelfie_env.jsonfile import JSONFileError, read_json_file
from shelfie_env.observation.features import OBS_MODES, obs_size
from shelfie_env.observation.vector import OBS_VERSION

CARD_FORMAT = 1
ACTION_LAYOUT_VERSION = 1
ENV_VERSION = "v0"


class CheckpointMismatchError(ValueError):
    """A checkpoint's card does not fit the current environment (or is missing/malformed)."""


def env_id(num_players: int) -> str:
    """Gymnasium id of the single-agent env a ``num_players`` model plays."""
    if not 1 <= num_players <= 4:
        raise ValueError(f"num_players must be 1..4, got {num_players!r}")
    return f"shelfie/Solo-{ENV_VERSION}" if num_players == 1 else f"shelfie/Versus-{ENV_VERSION}"


MAX_CARD_BYTES = 4 * 2**20
"""Largest card read: a card is a few KB, some tens of KB with many recorded evaluations."""
MODEL_SUFFIXES = (".npz", ".zip")
"""``.npz``: the weights as numpy arrays (what ships and plays); ``.zip``: a Stable-Baselines3
checkpoint with optimiser state (what a training run writes and resumes from)."""


def card_path(model_path: str | Path) -> Path:
    """The card that belongs to ``model_path`` (``x.npz`` or ``x.zip`` -> ``x.json``)."""
    p = Path(model_path)
    return p.with_suffix(".json") if p.suffix in MODEL_SUFFIXES else p.with_name(p.name + ".json")


def make_card(
    num_players: int,
    *,
    algo: str = "MaskablePPO",
    config: Mapping[str, Any] | None = None,
    steps: int = 0,
    wall_time_s: float = 0.0,
    evaluation: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    obs: str = "default",
) -> dict[str, Any]:
    """A card describing a model for the current env layout (``obs``: the env's observation option)."""
    from shelfie_env import __version__

    card: dict[str, Any] = {
        "card_format": CARD_FORMAT,
        "package_version": __version__,
        "env_id": env_id(num_players),
        "env_version": ENV_VERSION,
        "num_players": num_players,
        "obs_version": OBS_VERSION,
        "obs": obs,
        "observation_size": obs_size(num_players, obs),
        "action_layout_version": ACTION_LAYOUT_VERSION,
        "num_actions": NUM_ACTIONS,
        "algo": algo,
        "steps": int(steps),
        "wall_time_s": round(float(wall_time_s), 1),
        "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": dict(config or {}),
        "evaluation": dict(evaluation or {}),
    }
    if extra:
        card.update(extra)
    return card


def check_card(card: Mapping[str, Any], num_players: int | None = None, source: str = "card") -> None:
    """Raise :class:`CheckpointMismatchError` naming the field if ``card`` does not fit the current env."""
    if not isinstance(card, Mapping):
        raise CheckpointMismatchError(f"{source}: a card must be a JSON object, got {type(card).__name__}")
    for key in ("num_players", "env_id", "obs_version", "observation_size", "num_actions"):
        if key not in card:
            raise CheckpointMismatchError(f"{source}: missing field {key!r}")
    players = card["num_players"]
    if not isinstance(players, int) or not 1 <= players <= 4:
        raise CheckpointMismatchError(f"{source}: num_players must be 1..4, got {players!r}")
    obs = card.get("obs", "default")
    if obs not in OBS_MODES:
        raise CheckpointMismatchError(
            f"{source}: obs is {obs!r}, but this version of shelfie-env has {', '.join(OBS_MODES)}"
        )
    reroll = card.get("reroll", "ids")
    if reroll not in REROLL_MODES:
        raise CheckpointMismatchError(
            f"{source}: reroll is {reroll!r}, but this version of shelfie-env has {', '.join(REROLL_MODES)}"
        )
    expected = {
        "env_id": env_id(players),
        "obs_version": OBS_VERSION,
        "observation_size": obs_size(players, obs),
        "num_actions": NUM_ACTIONS,
        "action_layout_version": ACTION_LAYOUT_VERSION,
    }
    for key, want in expected.items():
        got = card.get(key, want)
        if got != want:
            raise CheckpointMismatchError(
                f"{source}: {key} is {got!r} but this version of shelfie-env has {want!r}; "
                "the model was trained on a different observation/action layout - retrain it "
                "or install the matching shelfie-env version"
            )
    if num_players is not None and players != num_players:
        raise CheckpointMismatchError(
            f"{source}: the model was trained for {players} player(s), not {num_players}"
        )


def load_card(model_path: str | Path, num_players: int | None = None) -> dict[str, Any]:
    """Read and check the card of ``model_path``."""
    path = card_path(model_path)
    if not path.is_file():
        raise CheckpointMismatchError(f"no model card {path} next to the checkpoint {model_path}")
    try:
        card = read_json_file(path, "model card", MAX_CARD_BYTES)
    except JSONFileError as exc:
        raise CheckpointMismatchError(str(exc)) from None
    check_card(card, num_players, source=str(path))
    return card


def write_card(model_path: str | Path, card: Mapping[str, Any]) -> Path:
    """Write ``card`` as the JSON next to ``model_path``; returns its path."""
    path = card_path(model_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(card, indent=2, sort_keys=False) + "\n")
    tmp.replace(path)
    return path


def models_dir() -> Path:
    """The folder of the models shipped with the package (``shelfie_env/models``)."""
    from importlib import resources

    return Path(str(resources.files("shelfie_env") / "models"))


def shipped_file(bot: str, shipped: Mapping[int, str], num_players: int, train: str) -> Path:
    """The ``.npz`` of ``bot``'s shipped model for ``num_players`` (``shipped``: player count -> name).

    ``FileNotFoundError`` names the table sizes that have one and how to train one (``train``).
    """
    name = shipped.get(num_players)
    if name is None:
        have = ", ".join(f"{n} ({shipped[n]})" for n in sorted(shipped))
        raise FileNotFoundError(
            f"no shipped {bot} model for {num_players}-player games; shipped: {have}. "
            f"Train one with `{train}` and play it as {bot}:path=..."
        )
    path = models_dir() / f"{name}.npz"
    if not path.is_file():
        raise FileNotFoundError(f"the shipped model {name}.npz is missing from this installation")
    return path


def shipped_sizes(shipped: Mapping[int, str]) -> tuple[int, ...]:
    """The table sizes of ``shipped`` whose model file is present in this installation."""
    return tuple(n for n, name in sorted(shipped.items()) if (models_dir() / f"{name}.npz").is_file())
