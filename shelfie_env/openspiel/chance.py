"""The chance model: a throw of ``k`` dice has one outcome per multiset of ``k`` faces.

Outcome id ``i`` of a throw of ``k`` dice is the ``i``-th sorted ``k``-tuple of
faces 0..5 in ``itertools.combinations_with_replacement(range(6), k)`` order
(for ``k = 6`` that is the engine's ``tables.MULTISETS`` order), with its
multinomial probability ``k! / prod(n_f!) / 6**k``. A first roll throws 6 dice
(462 outcomes); a reroll throws the dice it picked (1..6).
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import factorial

NUM_FACES = 6
MAX_THROWN = 6


def _probability(faces: tuple[int, ...]) -> float:
    ways = factorial(len(faces))
    for f in range(NUM_FACES):
        ways //= factorial(faces.count(f))
    return ways / NUM_FACES ** len(faces)


FACES: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(combinations_with_replacement(range(NUM_FACES), k)) for k in range(MAX_THROWN + 1)
)
"""``FACES[k][i]``: the sorted faces of outcome ``i`` of a throw of ``k`` dice."""

OUTCOMES: tuple[tuple[tuple[int, float], ...], ...] = tuple(
    tuple((i, _probability(f)) for i, f in enumerate(FACES[k])) for k in range(MAX_THROWN + 1)
)
"""``OUTCOMES[k]``: ``(outcome id, probability)`` of every outcome of a throw of ``k`` dice."""

OUTCOME_ID: tuple[dict[tuple[int, ...], int], ...] = tuple(
    {f: i for i, f in enumerate(FACES[k])} for k in range(MAX_THROWN + 1)
)
"""``OUTCOME_ID[k][faces]``: the outcome id of sorted ``faces`` thrown with ``k`` dice."""

MAX_CHANCE_OUTCOMES = len(FACES[MAX_THROWN])  # 462


def outcome_id(faces: list[int] | tuple[int, ...]) -> int:
    """The outcome id of a throw that showed ``faces`` (in any order)."""
    key = tuple(sorted(int(f) for f in faces))
    if not 1 <= len(key) <= MAX_THROWN or any(not 0 <= f < NUM_FACES for f in key):
        raise ValueError(f"a throw is 1..{MAX_THROWN} faces 0..5, got {list(faces)!r}")
    return OUTCOME_ID[len(key)][key]
