"""Chance that a turn cannot circle anything (a forced cross-out), by shelf shape.

Whether some cell of row ``r`` can be circled depends only on the row's
lowest free column ``m_r``: it needs ``m_r + 1`` dice of face ``r``, or ``m_r``
plus a joker when ``m_r >= 1`` (six jokers circle any free cell). Rows are
symmetric (faces 0-4 play the same role), so the chance depends on the sorted
5-tuple of ``m_r`` (5 = no free cell): 252 shapes, computed together, exactly,
for a player who rerolls to be able to circle something.

``stuck_table()[code]`` with ``code = sum(m_r * 6**r)`` is the chance that the whole
turn (roll and two rerolls) still ends with nothing circleable.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement, permutations

import numpy as np

from shelfie_env.bots.planner.dice import FINAL, KEEP_INDEX, TRANSITION, best_keep_value, expected_after_roll

NONE = 5  # a row without a free cell
# MIN_FREE_COL[free5]: lowest free column of a row pattern (5 if none).
MIN_FREE_COL = np.array([next((c for c in range(5) if f >> c & 1), NONE) for f in range(32)], dtype=np.int64)


def _build() -> np.ndarray:
    shapes = list(combinations_with_replacement(range(NONE + 1), 5))
    m = np.array(shapes, dtype=np.int64)  # (S, 5), row r of the shape played by face r
    counts = FINAL[:, :5][:, None, :]  # (462, 1, 5)
    joker = FINAL[:, 5][:, None, None] > 0
    need = np.where(joker & (m[None] >= 1), m[None], m[None] + 1)  # (462, S, 5)
    can = ((counts >= need) & (m[None] < NONE)).any(axis=2)
    can |= (FINAL[:, 5] == 6)[:, None] & (m < NONE).any(axis=1)[None, :]
    ok = can.astype(np.float64)  # (462, S)
    # Best play for "circle anything": two rerolls, then the first roll.
    v1 = np.stack([best_keep_value(col) for col in expected_after_roll(ok).T], axis=1)
    v2 = np.stack([best_keep_value(col) for col in expected_after_roll(v1).T], axis=1)
    success = TRANSITION[KEEP_INDEX[(0,) * 6]] @ v2  # (S,)
    table = np.ones(6**5)
    for shape, p in zip(shapes, success):
        for perm in set(permutations(shape)):
            table[sum(v * 6**r for r, v in enumerate(perm))] = 1.0 - p
    return table


_POW6 = 6 ** np.arange(5)


@lru_cache(maxsize=1)
def stuck_table() -> np.ndarray:
    """``STUCK`` table (built on first use, about 0.3 s)."""
    return np.clip(_build(), 0.0, 1.0)


def stuck_probability(free: np.ndarray) -> np.ndarray:
    """Chance of a turn with nothing circleable, for an array of free-cell masks."""
    free = np.asarray(free, dtype=np.int64)
    code = sum(MIN_FREE_COL[free >> (5 * r) & 31] * _POW6[r] for r in range(5))
    return stuck_table()[code]
