"""Checked values of the ``shelfie play`` and ``shelfie replay`` options.

Each function is an argparse ``type=``: a bad value raises ``ArgumentTypeError``, which
argparse prints as ``shelfie play: error: argument --seed: ...`` (naming the option) and
exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import unicodedata
from collections.abc import Callable
from pathlib import Path

from shelfie_env.game.engine import MAX_PLAYERS

MAX_NAME = 24
"""Longest name a player may give (it heads a shelf and prefixes every logged move)."""


def whole_number(low: int, high: int | None = None, what: str = "") -> Callable[[str], int]:
    """A ``type=`` accepting whole numbers from ``low`` (to ``high``, if given)."""
    span = f"{low} to {high}" if high is not None else f"{low} or more"
    why = f" ({what})" if what else ""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number {span}{why}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {span}{why}, got {value}")
        return value

    parse.__name__ = "whole number"  # argparse's fallback message names the type
    return parse


players = whole_number(1, MAX_PLAYERS, "players in total, you included; 1 is the solo game")
seat = whole_number(1, MAX_PLAYERS, "seat 1 starts")
seed = whole_number(0, None, "the same seed deals the same dice")


def player_name(text: str) -> str:
    """A name for the table: printable, 1 to :data:`MAX_NAME` characters (spaces collapsed)."""
    name = " ".join(text.split())
    if not name:
        raise argparse.ArgumentTypeError("give a name of at least one visible character")
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise argparse.ArgumentTypeError(f"{text!r} holds control characters; use letters, digits and spaces")
    if len(name) > MAX_NAME:
        raise argparse.ArgumentTypeError(f"at most {MAX_NAME} characters, got {len(name)}")
    return name


def bot_list(text: str) -> str:
    """``--opponents``: one or more comma-separated bot names (checked against the table later)."""
    if not [n for n in text.split(",") if n.strip()]:
        raise argparse.ArgumentTypeError("give at least one bot name, e.g. --opponents greedy,random")
    return text


def bot_spec(text: str) -> str:
    """A bot spec (``planner`` or ``ppo:path=my.npz``): at least a name."""
    spec = text.strip()
    head, _, rest = spec.partition(":")
    if not head.partition("#")[0]:
        raise argparse.ArgumentTypeError(f"{text!r} names no bot, e.g. greedy or ppo:path=my.npz")
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not key.strip() or not eq or not value.strip():
            raise argparse.ArgumentTypeError(f"{text!r}: options are key=value, got {item!r}")
    return spec


def replay_file(text: str) -> str:
    """A replay file that exists and is a file (its contents are checked when read)."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a file")
    return text


def save_file(text: str) -> str:
    """A file to write a replay to: not a folder, in a folder that exists (an existing file is replaced)."""
    path = Path(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("give a file name, e.g. --save game.json")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name, e.g. {path / 'game.json'}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"no such folder: {path.parent}")
    return text
