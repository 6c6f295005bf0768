"""Precomputed legality tables (pure Python, built once at import).

* ``MULTISETS``: the 462 sorted 6-dice tuples.
* ``REROLL_IDS[dice]``: the legal reroll-phase ids (0 and the canonical reroll
  sets) of a sorted dice tuple.
* ``CIRCLE_IDS[r][k][j][free]``: the circle ids of row ``r`` legal when ``k``
  unspent dice show ``r``, ``j`` says whether a joker is unspent and ``free`` is
  the row's 5-bit free-cell pattern.
"""

from __future__ import annotations

from itertools import combinations_with_replacement

from shelfie_env.game.actions import CIRCLE_BASE, NUM_DICE

MULTISETS: tuple[tuple[int, ...], ...] = tuple(combinations_with_replacement(range(6), NUM_DICE))
MULTISET_INDEX: dict[tuple[int, ...], int] = {d: i for i, d in enumerate(MULTISETS)}


def canonical_rerolls(dice: tuple[int, ...]) -> tuple[int, ...]:
    """Canonical reroll ids (1..63) of a sorted dice tuple.

    Within a run of equal faces the rerolled dice are the highest positions,
    so choosing "how many of each face" gives exactly one id.
    """
    groups: list[tuple[int, int]] = []  # (start, length)
    i = 0
    while i < len(dice):
        j = i
        while j < len(dice) and dice[j] == dice[i]:
            j += 1
        groups.append((i, j - i))
        i = j
    ids = [0]
    for start, length in groups:
        options = []
        for k in range(length + 1):
            bits = 0
            for p in range(start + length - k, start + length):
                bits |= 1 << p
            options.append(bits)
        ids = [a | b for a in ids for b in options]
    return tuple(sorted(a for a in ids if a))


REROLL_IDS: dict[tuple[int, ...], tuple[int, ...]] = {d: (0,) + canonical_rerolls(d) for d in MULTISETS}


def _circle_ids(r: int, k: int, joker: int, free: int) -> tuple[int, ...]:
    out = []
    for c in range(5):
        if not free >> c & 1:
            continue
        if k >= c + 1:
            out.append(CIRCLE_BASE + 2 * (5 * r + c))
        if joker and c >= 1 and k >= c:
            out.append(CIRCLE_BASE + 2 * (5 * r + c) + 1)
    return tuple(out)


CIRCLE_IDS: tuple[tuple[tuple[tuple[tuple[int, ...], ...], ...], ...], ...] = tuple(
    tuple(
        tuple(tuple(_circle_ids(r, k, j, free) for free in range(32)) for j in range(2))
        for k in range(NUM_DICE + 1)
    )
    for r in range(5)
)

# ALL_JOKER_IDS[r][free]: with six jokers, any free cell of row r, joker flag set.
ALL_JOKER_IDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(CIRCLE_BASE + 2 * (5 * r + c) + 1 for c in range(5) if free >> c & 1) for free in range(32))
    for r in range(5)
)
