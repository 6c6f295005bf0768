"""How a bot seat is named on the table and in replays.

A built-in bot is its name (``greedy``, ``td``); a bot playing a model file is named by
the model's card (its ``name`` field) or else the file's stem, with the kind of bot after
it: ``ppo:path=runs/x/mine.npz`` sits as ``mine (ppo)``. Other specs are shown as typed.
"""

from __future__ import annotations

from pathlib import Path, PurePath

from shelfie_env.clip import printable
from shelfie_env.jsonfile import JSONFileError, read_json_file

MODEL_SUFFIXES = (".npz", ".zip")
MAX_CARD_BYTES = 4 * 2**20
"""Largest card read for a seat's name (as :data:`shelfie_env.bots.learned.card.MAX_CARD_BYTES`)."""


def _card_name(path: str) -> str | None:
    """The ``name`` in the model card next to ``path`` (``x.npz`` -> ``x.json``), if it has one."""
    model = Path(path)
    card = (
        model.with_suffix(".json")
        if model.suffix in MODEL_SUFFIXES
        else model.with_name(model.name + ".json")
    )
    try:
        data = read_json_file(card, "model card", MAX_CARD_BYTES)
    except JSONFileError:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return printable(" ".join(name.split())) if isinstance(name, str) and name.strip() else None


def bot_label(spec: str) -> str:
    """The seat label of bot ``spec``: ``mine (ppo)`` for ``ppo:path=runs/x/mine.npz``, else the spec."""
    head, _, rest = spec.strip().partition(":")
    kind = head.partition("#")[0]
    options = dict(item.partition("=")[::2] for item in rest.split(",") if "=" in item)
    path = options.get("path", "").strip()
    if not kind or not path:
        return printable(spec.strip())
    stem = PurePath(path.replace("\\", "/")).stem
    name = _card_name(path) or stem or path
    return printable(f"{name} ({kind})")
