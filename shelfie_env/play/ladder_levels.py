"""The ladder's levels as the tables offer them: each level's name and shipped rating per table
size, the level a first game suggests and the level nearest a rating.

The ratings are read from the shipped ladder (:func:`shelfie_env.arena.ladder.shipped_ladder`),
once per table size and process; a table size without a shipped ladder has no ratings (its
levels are still bots, but no game against them is rated).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from shelfie_env.bots.levels import LEVELS, TABLE_SIZES, Level, find_level

FIRST_LEVEL = LEVELS[(len(LEVELS) - 1) // 2].spec
"""The level a first game suggests: the middle of the ladder (``level-3``, intermediate)."""


@functools.lru_cache(maxsize=8)
def anchors(players: int) -> dict[str, tuple[float, float]] | None:
    """``{spec: (rating, se)}`` of the levels at ``players`` (None: no shipped ladder there)."""
    if players not in TABLE_SIZES:
        return None
    from shelfie_env.arena.ladder import level_ratings

    try:
        return level_ratings(players)
    except (FileNotFoundError, KeyError, ValueError):
        return None


@functools.lru_cache(maxsize=8)
def calibration(players: int) -> dict[str, Any] | None:
    """The shipped error rate → rating calibration at ``players`` (None: none there yet)."""
    if players not in TABLE_SIZES:
        return None
    from shelfie_env.arena.ladder import shipped_ladder

    try:
        return shipped_ladder(players).get("calibration")
    except (FileNotFoundError, ValueError):
        return None


def is_level(spec: object) -> bool:
    """Whether ``spec`` names one of the ladder's levels (``level-1`` … ``level-6``)."""
    return isinstance(spec, str) and spec in {lv.spec for lv in LEVELS}


def level_rows(players: int) -> list[dict[str, Any]]:
    """The levels at ``players`` as ``{"spec", "name", "rating", "ci95"}`` (empty: no ladder there)."""
    ratings = anchors(players)
    if ratings is None:
        return []
    return [
        {
            "spec": lv.spec,
            "name": lv.name,
            "rating": round(ratings[lv.spec][0], 1),
            "ci95": [round(ratings[lv.spec][0] - 1.96 * ratings[lv.spec][1], 1),
                     round(ratings[lv.spec][0] + 1.96 * ratings[lv.spec][1], 1)],
        }
        for lv in LEVELS
        if lv.spec in ratings
    ]


def level_label(spec: str, players: int) -> str:
    """``level-3 · intermediate · 1420`` (without the rating where the table size has no ladder)."""
    level = find_level(spec)
    ratings = anchors(players) or {}
    rating = ratings.get(level.spec)
    tail = f" · {math.floor(rating[0] + 0.5)}" if rating is not None else ""  # rounded as the pages round
    return f"{level.spec} · {level.name}{tail}"


def nearest(rating: float | None, players: int) -> str:
    """The level whose rating at ``players`` is nearest ``rating``; :data:`FIRST_LEVEL` without a
    rating or a ladder."""
    if rating is None or not anchors(players):
        return FIRST_LEVEL
    from shelfie_env.arena.ladder import nearest_level

    return nearest_level(rating, players)


def table_level(text: str, players: int) -> Level:
    """The level ``text`` names (``3``, ``level-3``, ``intermediate``), checked against a table of
    ``players``; ``ValueError`` says what is wrong in one line."""
    level = find_level(text)
    if players not in TABLE_SIZES:
        sizes = ", ".join(map(str, TABLE_SIZES))
        raise ValueError(f"the levels play tables of {sizes} players, not {players}")
    return level


__all__ = ["FIRST_LEVEL", "anchors", "calibration", "is_level", "level_label", "level_rows", "nearest",
           "table_level"]
