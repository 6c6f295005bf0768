"""Circle sets: every group of 1..3 cells one turn's dice could circle.

A turn circles up to three cells with disjoint groups of dice; the order does
not change the resulting shelf, so a turn's outcome is a *set* of cells. Cell
``(r, c)`` needs ``c + 1`` dice of face ``r``, or ``c`` of them plus one joker
(``c >= 1``). With six dice only sets whose ``sum(c + 1) <= 6`` can ever be
circled, which leaves a few hundred sets (``SETS``).

``FEASIBLE[m, s]`` says whether the dice multiset ``dice.FINAL[m]`` can circle
set ``s`` (the six-joker multiset can circle any single cell and nothing
more). The table depends on the dice only; a decision filters it by the
player's free cells.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from shelfie_env.bots.planner.dice import FINAL
from shelfie_env.game.actions import CIRCLE_BASE, JOKER, NUM_DICE

CELLS = tuple((r, c) for r in range(5) for c in range(5))


def _need(cells: tuple[tuple[int, int], ...]) -> tuple[list[int], list[int]]:
    need = [0] * 5
    elig = [0] * 5
    for r, c in cells:
        need[r] += c + 1
        elig[r] += 1 if c >= 1 else 0
    return need, elig


def _enumerate_sets() -> list[tuple[tuple[int, int], ...]]:
    out = []
    for size in (1, 2, 3):
        for cells in combinations(CELLS, size):
            if sum(c + 1 for _, c in cells) <= NUM_DICE:
                out.append(cells)
    return out


SETS: tuple[tuple[tuple[int, int], ...], ...] = tuple(_enumerate_sets())
SET_MASKS = np.array([sum(1 << (5 * r + c) for r, c in s) for s in SETS], dtype=np.int64)
SET_SIZES = np.array([len(s) for s in SETS], dtype=np.int64)
_NEED = np.array([_need(s)[0] for s in SETS], dtype=np.int64)  # (S, 5)
_ELIG = np.array([_need(s)[1] for s in SETS], dtype=np.int64)  # (S, 5)


def feasible_matrix(counts: np.ndarray) -> np.ndarray:
    """``(len(counts), len(SETS))`` bool: which sets each face-count vector can circle.

    ``counts`` is ``(M, 6)``; jokers (face 5) cover a missing die of at most one
    cell each, never a ``c = 0`` cell, and never more than the jokers there are.
    """
    counts = np.asarray(counts, dtype=np.int64)
    deficit = np.maximum(_NEED[None, :, :] - counts[:, None, :5], 0)  # (M, S, 5)
    ok = (deficit <= _ELIG[None, :, :]).all(axis=2)
    ok &= deficit.sum(axis=2) <= counts[:, None, JOKER]
    all_jokers = counts[:, JOKER] == NUM_DICE
    ok[all_jokers] = SET_SIZES[None, :] == 1
    return ok


FEASIBLE = feasible_matrix(FINAL)


def can_circle(counts: list[int] | tuple[int, ...], cells: tuple[tuple[int, int], ...]) -> bool:
    """Whether unspent dice ``counts`` can circle all of ``cells`` (scalar version)."""
    if not cells:
        return True
    if counts[JOKER] == NUM_DICE:
        return len(cells) == 1
    need, elig = _need(cells)
    missing = 0
    for r in range(5):
        d = need[r] - counts[r]
        if d > 0:
            if d > elig[r]:
                return False
            missing += d
    return missing <= counts[JOKER]


def first_step(
    counts: list[int] | tuple[int, ...], cells: tuple[tuple[int, int], ...], legal: tuple[int, ...]
) -> int:
    """A legal circle action that starts circling ``cells`` and leaves the rest circleable."""
    six_jokers = counts[JOKER] == NUM_DICE
    for r, c in sorted(cells, key=lambda rc: (-rc[1], rc[0])):  # big groups first
        for joker in (0, 1):
            a = CIRCLE_BASE + 2 * (5 * r + c) + joker
            if a not in legal:
                continue
            if six_jokers:
                return a
            rest = list(counts)
            rest[r] -= c + 1 - joker
            rest[JOKER] -= joker
            if can_circle(rest, tuple(x for x in cells if x != (r, c))):
                return a
    raise ValueError(f"no legal first circle for {cells} with dice counts {list(counts)}")
