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

from ..scoring import FULL
from .dice import KEEP_INDEX, TRANSITION, best_keep_value, expected_after_roll
from .lines import line_points, line_tables, shelf_values
from .placements import FEASIBLE, SET_MASKS

_FRESH = KEEP_INDEX[(0,) * 6]  # keep nothing: the turn's first roll


@lru_cache(maxsize=4096)
def last_turn_value(points: tuple[tuple[int, ...], ...], circled: int, crossed: int) -> float:
    """Expected final score of a shelf whose owner plays one more whole turn, maximising its score."""
    zero = line_tables(np.zeros(25), line_points(points))
    free = FULL & ~(circled | crossed)
    now = float(shelf_values(zero, np.array([circled]), np.array([crossed]))[0])
    sel = np.flatnonzero((SET_MASKS & ~free) == 0)
    if sel.size == 0:
        return now
    sets = SET_MASKS[sel]
    scores = shelf_values(zero, circled | sets, np.full(sets.shape, crossed))
    feas = FEASIBLE[:, sel]
    v0 = np.where(feas, scores[None, :], -np.inf).max(axis=1)
    v0[~feas.any(axis=1)] = now  # a forced cross-out never changes the score
    v2 = best_keep_value(expected_after_roll(best_keep_value(expected_after_roll(v0))))
    return float(TRANSITION[_FRESH] @ v2)
