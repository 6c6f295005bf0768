"""Exact value of a player's last turn: expected final score with optimal play.

When the end is triggered and a rival still has its final turn, only its
final score matters to it, so its best play is known: circle the set of cells
that scores most, after rerolling to maximise the expectation. This module
computes that expectation exactly over the dice (fresh roll, two rerolls),
the same way :mod:`.search` does for the player on turn.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from shelfie_env.bots.planner.dice import (
    KEEP_INDEX,
    SUB_KEEPS,
    TRANSITION,
    best_keep_value,
    expected_after_roll,
)
from shelfie_env.bots.planner.lines import line_points, line_tables, shelf_values
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS
from shelfie_env.game.scoring import FULL

_FRESH = KEEP_INDEX[(0,) * 6]  # keep nothing: the turn's first roll


@lru_cache(maxsize=4096)
def _final_scores(points: tuple[tuple[int, ...], ...], circled: int, crossed: int) -> np.ndarray:
    """Best final score for each of the 462 final dice multisets (a forced cross changes nothing).

    Cached and shared by the callers: treat the array as read-only."""
    zero = line_tables(np.zeros(25), line_points(points))
    free = FULL & ~(circled | crossed)
    now = float(shelf_values(zero, np.array([circled]), np.array([crossed]))[0])
    sel = np.flatnonzero((SET_MASKS & ~free) == 0)
    if sel.size == 0:
        return np.full(FEASIBLE.shape[0], now)
    sets = SET_MASKS[sel]
    scores = shelf_values(zero, circled | sets, np.full(sets.shape, crossed))
    feas = FEASIBLE[:, sel]
    v0 = np.where(feas, scores[None, :], -np.inf).max(axis=1)
    v0[~feas.any(axis=1)] = now
    return v0


def _follow(values: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One roll back: the best keep by ``values`` for each multiset, and ``other`` under that choice."""
    ev, ew = np.append(TRANSITION @ values, -np.inf), np.append(TRANSITION @ other, 0.0)
    pick = SUB_KEEPS[np.arange(len(SUB_KEEPS)), ev[SUB_KEEPS].argmax(axis=1)]
    return ev[pick], ew[pick]


@lru_cache(maxsize=8192)
def last_turn_edge(points: tuple[tuple[int, ...], ...], circled: int, crossed: int, target: float) -> float:
    """``P(final < target) - P(final > target)`` for a shelf whose owner plays one more
    whole turn maximising its expected score (as :func:`last_turn_value` assumes).

    From the point of view of a player whose final score is ``target``: the
    expected rank reward against this rival (win 1, tie 0, loss -1).
    """
    v0 = _final_scores(points, circled, crossed)
    w0 = np.sign(target - v0)
    v1, w1 = _follow(v0, w0)
    _, w2 = _follow(v1, w1)
    return float(TRANSITION[_FRESH] @ w2)


@lru_cache(maxsize=4096)
def last_turn_value(points: tuple[tuple[int, ...], ...], circled: int, crossed: int) -> float:
    """Expected final score of a shelf whose owner plays one more whole turn, maximising its score."""
    v0 = _final_scores(points, circled, crossed)
    if v0.min() == v0.max():  # nothing to roll for (no free cell): the score as it stands
        return float(v0[0])
    v2 = best_keep_value(expected_after_roll(best_keep_value(expected_after_roll(v0))))
    return float(TRANSITION[_FRESH] @ v2)
