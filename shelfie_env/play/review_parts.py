"""Pieces every review text shares: the luck marks, the prose width, where a decision was taken."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MARKS = {"very lucky": "++", "lucky": "+", "unlucky": "-", "very unlucky": "--", "": ""}
"""Short marks of a turn's luck in the table."""
WIDTH = 80
"""Prose lines are wrapped to this width."""


def situation(m: Mapping[str, Any]) -> str:
    """Where a decision was taken: the dice and the rerolls left, or the dice left to circle with."""
    dice = " ".join(m["dice"])
    if m["phase"] == "reroll":
        left = m["rolls_left"]
        return f"dice {dice}, {left} reroll{'s' if left != 1 else ''} left"
    if m["phase"] == "circle":
        return f"dice left {dice}" if dice else "no dice left"
    return f"dice {dice}, nothing to circle"


__all__ = ["MARKS", "WIDTH", "situation"]
