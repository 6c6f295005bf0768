"""Dice combinatorics for the exact expectimax over rerolls.

Everything here depends only on the dice, never on a shelf, so it is built
once at import:

* ``FINAL``: the 462 multisets of six dice (``tables.MULTISETS`` order) as a
  ``(462, 6)`` array of face counts.
* ``KEEP``: the 924 multisets of 0..6 kept dice, as a ``(924, 6)`` count array.
* ``TRANSITION[k, m]``: probability that keeping ``KEEP[k]`` and rolling the
  other ``6 - |k|`` dice ends on ``FINAL[m]`` (each row sums to 1; a full keep
  is the identity).
* ``SUB_KEEPS[m]``: the keep indices that are sub-multisets of ``FINAL[m]``
  (padded with ``PAD``, an extra keep whose value is ``-inf``).
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import factorial

import numpy as np

from shelfie_env.game.actions import JOKER, NUM_DICE
from shelfie_env.game.tables import MULTISET_INDEX, MULTISETS

FACES = 6


def counts_of(dice: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Face counts (length 6) of a dice sequence."""
    out = [0] * FACES
    for d in dice:
        out[d] += 1
    return tuple(out)


def outcome_distribution(k: int) -> dict[tuple[int, ...], float]:
    """Exact distribution of the face counts of ``k`` fair six-sided dice.

    A count vector ``n`` has probability ``k! / prod(n_i!) / 6**k`` (multinomial).
    """
    if not 0 <= k <= NUM_DICE:
        raise ValueError(f"k must be 0..{NUM_DICE}, got {k}")
    out: dict[tuple[int, ...], float] = {}
    total = FACES**k
    for combo in combinations_with_replacement(range(FACES), k):
        n = counts_of(combo)
        ways = factorial(k)
        for c in n:
            ways //= factorial(c)
        out[n] = ways / total
    return out


FINAL = np.array([counts_of(m) for m in MULTISETS], dtype=np.int64)
FINAL_INDEX: dict[tuple[int, ...], int] = {counts_of(m): i for m, i in MULTISET_INDEX.items()}

_keeps: list[tuple[int, ...]] = []
for _k in range(NUM_DICE + 1):
    _keeps.extend(counts_of(c) for c in combinations_with_replacement(range(FACES), _k))
KEEP = np.array(_keeps, dtype=np.int64)
KEEP_INDEX: dict[tuple[int, ...], int] = {c: i for i, c in enumerate(_keeps)}
PAD = len(_keeps)  # index of the padding keep (value -inf)


def _build_transition() -> np.ndarray:
    t = np.zeros((len(_keeps), len(MULTISETS)), dtype=np.float64)
    dists = [outcome_distribution(k) for k in range(NUM_DICE + 1)]
    for i, keep in enumerate(_keeps):
        k = NUM_DICE - sum(keep)
        for rolled, p in dists[k].items():
            final = tuple(a + b for a, b in zip(keep, rolled))
            t[i, FINAL_INDEX[final]] += p
    return t


def _build_sub_keeps() -> np.ndarray:
    rows = []
    for m in FINAL:
        subs = [KEEP_INDEX[tuple(int(x) for x in c)] for c in np.ndindex(*(m + 1))]
        rows.append(subs)
    width = max(len(r) for r in rows)
    out = np.full((len(rows), width), PAD, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


TRANSITION = _build_transition()
SUB_KEEPS = _build_sub_keeps()


def keep_index_of_reroll(dice: tuple[int, ...] | list[int], action: int) -> int:
    """Keep index of the dice left when reroll ``action`` (bits = positions) is made."""
    kept = [0] * FACES
    for i, d in enumerate(dice):
        if not action >> i & 1:
            kept[d] += 1
    return KEEP_INDEX[tuple(kept)]


def expected_after_roll(final_values: np.ndarray) -> np.ndarray:
    """Value of every keep: ``E[final_values[final] | keep]`` over one roll (924 values)."""
    return TRANSITION @ final_values


def best_keep_value(keep_values: np.ndarray) -> np.ndarray:
    """Value of every final multiset when one more roll is available: best keep (462 values)."""
    padded = np.append(keep_values, -np.inf)
    return padded[SUB_KEEPS].max(axis=1)


def can_circle(row: int, col: int) -> np.ndarray:
    """Bool per final multiset (462): whether those six dice can circle cell ``(row, col)``.

    The cell needs ``col + 1`` dice of face ``row``, or ``col`` of them and a joker
    (``col >= 1``); six jokers circle any one cell.
    """
    faces, jokers = FINAL[:, row], FINAL[:, JOKER]
    ok = (faces >= col + 1) | (jokers == NUM_DICE)
    if col >= 1:
        ok |= (faces >= col) & (jokers >= 1)
    return ok


def circle_chance(kept: tuple[int, ...] | list[int], row: int, col: int) -> float:
    """Exact chance that keeping the face counts ``kept`` and rolling the other dice once
    ends on dice that can circle cell ``(row, col)`` (the other cells of the shelf aside)."""
    return float(TRANSITION[KEEP_INDEX[tuple(kept)]] @ can_circle(row, col))
