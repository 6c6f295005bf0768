"""Expected line scores: the building block of the planner's evaluation.

A line (row or column) scores the points of its circled cells once at least
three are circled. Given, for each free cell, a probability ``q`` that the
player will still circle it before the game ends, the *expected* score of the
line is ``sum over subsets A of the free cells of P(A) * score(circled | A)``
with the cells independent. This one number rewards points already secured,
progress toward three circles (worth more when the missing cells are easy)
and crossed cells (which can never score).

Each line state is coded in base 3 (digit ``i`` = cell ``i`` of the line:
0 free, 1 circled, 2 crossed), 243 codes; :func:`line_tables` turns 25 cell
probabilities into a ``(10, 243)`` table (lines 0..4 rows, 5..9 columns).
"""

from __future__ import annotations

import numpy as np

from shelfie_env.game.scoring import MIN_LINE

# LINE_CELLS[L]: the 5 bit positions of line L (rows 0..4, then columns 0..4).
LINE_CELLS = np.array(
    [[5 * r + c for c in range(5)] for r in range(5)] + [[5 * r + c for r in range(5)] for c in range(5)],
    dtype=np.int64,
)

# CODE[circ5, cross5]: base-3 code of a line from its 5-bit circled/crossed patterns.
CODE = np.zeros((32, 32), dtype=np.int64)
for _a in range(32):
    for _b in range(32):
        CODE[_a, _b] = sum(((_a >> i & 1) + 2 * (_b >> i & 1)) * 3**i for i in range(5))


# _DIGITS[i, code]: state of cell i (0 free, 1 circled, 2 crossed) in line code.
_DIGITS = np.array([[code // 3**i % 3 for code in range(243)] for i in range(5)], dtype=np.int64)
_POPCOUNT = np.array([m.bit_count() for m in range(32)])
_FREE = _DIGITS == 0  # (5, 243)
_CIRCLED = (_DIGITS == 1).astype(np.float64)


def line_points(points: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """``(10, 5)`` points of each line's cells."""
    flat = np.array(points, dtype=np.float64).reshape(25)
    return flat[LINE_CELLS]


def line_scores(points: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """``(10, 32)``: score of each line for each 5-bit circled pattern."""
    pts = line_points(points)
    bits = (np.arange(32)[:, None] >> np.arange(5)[None, :]) & 1  # (32, 5)
    raw = pts @ bits.T  # (10, 32)
    return np.where(_POPCOUNT[None, :] >= MIN_LINE, raw, 0.0)


def line_tables(cell_prob: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``(10, 243)`` expected line score per line state, cells independent.

    ``cell_prob`` is 25 probabilities (bit order ``5r + c``); ``points`` comes
    from :func:`line_points`. A dynamic programme over the 5 cells of every
    line and state carries ``P[k]`` (chance that k cells end circled) and
    ``W[k]`` (expected points of the circled cells, on that event); the line
    is worth ``sum of W[k] for k >= 3``.
    """
    q = np.asarray(cell_prob, dtype=np.float64)[LINE_CELLS]  # (10, 5)
    P = np.zeros((6, 10, 243))
    W = np.zeros((6, 10, 243))
    P[0] = 1.0
    for i in range(5):
        qi = np.where(_FREE[i], q[:, i : i + 1], _CIRCLED[i])  # (10, 243): chance cell i ends circled
        top = i + 2  # after i+1 cells at most i+1 are circled
        gain = qi * (W[: top - 1] + points[:, i : i + 1] * P[: top - 1])
        moved = qi * P[: top - 1]
        keep = 1.0 - qi
        P[:top] *= keep
        W[:top] *= keep
        P[1:top] += moved
        W[1:top] += gain
    return W[MIN_LINE:].sum(axis=0)


# Transposition of 25-bit masks, vectorised: _T[r][bits] moves row r's bits to column r.
_T = np.array(
    [[sum(1 << (5 * c + r) for c in range(5) if bits >> c & 1) for bits in range(32)] for r in range(5)],
    dtype=np.int64,
)


def transpose_many(masks: np.ndarray) -> np.ndarray:
    """Transpose an array of 25-bit shelf masks (rows <-> columns)."""
    m = masks
    return (
        _T[0][m & 31] | _T[1][m >> 5 & 31] | _T[2][m >> 10 & 31] | _T[3][m >> 15 & 31] | _T[4][m >> 20 & 31]
    )


def shelf_values(table: np.ndarray, circled: np.ndarray, crossed: np.ndarray) -> np.ndarray:
    """Sum of the 10 expected line scores of each shelf (arrays of 25-bit masks)."""
    circled = np.asarray(circled, dtype=np.int64)
    crossed = np.asarray(crossed, dtype=np.int64)
    total = np.zeros(circled.shape, dtype=np.float64)
    tc, tx = transpose_many(circled), transpose_many(crossed)
    for i in range(5):
        s = 5 * i
        total += table[i][CODE[circled >> s & 31, crossed >> s & 31]]
        total += table[5 + i][CODE[tc >> s & 31, tx >> s & 31]]
    return total
