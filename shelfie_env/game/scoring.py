"""Points tables and scoring (docs/rules.md) on 25-bit shelf masks.

A shelf is stored as two ints: ``circled`` and ``crossed``; bit ``5*r + c`` is
the cell of row ``r`` (symbol) and column ``c`` (needs ``c + 1`` dice).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

DEFAULT_POINTS: tuple[tuple[int, ...], ...] = tuple((1, 2, 3, 5, 8) for _ in range(5))
FULL = (1 << 25) - 1
ROW_MASKS = tuple(31 << (5 * r) for r in range(5))
COL_MASKS = tuple(sum(1 << (5 * r + c) for r in range(5)) for c in range(5))
MIN_LINE = 3  # circles a row/column needs before it scores


def validate_points(points: object) -> tuple[tuple[int, ...], ...]:
    """Return ``points`` as a 5x5 tuple of non-negative ints, or raise ValueError."""
    try:
        rows = [list(row) for row in points]  # type: ignore[union-attr]
    except TypeError:
        raise ValueError("points must be a 5x5 matrix of integers") from None
    if len(rows) != 5 or any(len(row) != 5 for row in rows):
        raise ValueError("points must be a 5x5 matrix of integers")
    out = []
    for row in rows:
        vals = []
        for v in row:
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not float(v).is_integer() or v < 0:
                raise ValueError(f"points must be non-negative integers, got {v!r}")
            vals.append(int(v))
        out.append(tuple(vals))
    return tuple(out)


def shelf_cells(mask: int) -> list[tuple[int, int]]:
    """``(row, col)`` of every cell set in a shelf mask, in bit order (bit ``5 * row + col``)."""
    return [divmod(b, 5) for b in range(25) if mask >> b & 1]


def row_bits(mask: int, r: int) -> int:
    """The 5 bits of row ``r`` (bit c = column c)."""
    return mask >> (5 * r) & 31


# _TRANSPOSE[r][bits]: the row-r bits moved to bit 5*c + r (the transposed shelf).
_TRANSPOSE = tuple(
    tuple(sum(1 << (5 * c + r) for c in range(5) if bits >> c & 1) for bits in range(32)) for r in range(5)
)


def transpose(mask: int) -> int:
    """The shelf mask with rows and columns swapped (bit 5r+c -> bit 5c+r)."""
    t = _TRANSPOSE
    return (
        t[0][mask & 31]
        | t[1][mask >> 5 & 31]
        | t[2][mask >> 10 & 31]
        | t[3][mask >> 15 & 31]
        | t[4][mask >> 20 & 31]
    )


def col_bits(mask: int, c: int) -> int:
    """The 5 bits of column ``c`` (bit r = row r)."""
    return transpose(mask) >> (5 * c) & 31


class ScoreTable:
    """Precomputed line scores for one points matrix."""

    __slots__ = ("points", "row_score", "col_score")

    def __init__(self, points: Sequence[Sequence[int]] = DEFAULT_POINTS) -> None:
        self.points = validate_points(points)
        # row_score[r][bits]: points of row r's circled cells if >= 3 are circled.
        self.row_score = tuple(
            tuple(
                sum(self.points[r][c] for c in range(5) if bits >> c & 1)
                if bin(bits).count("1") >= MIN_LINE
                else 0
                for bits in range(32)
            )
            for r in range(5)
        )
        self.col_score = tuple(
            tuple(
                sum(self.points[r][c] for r in range(5) if bits >> r & 1)
                if bin(bits).count("1") >= MIN_LINE
                else 0
                for bits in range(32)
            )
            for c in range(5)
        )

    def score(self, circled: int) -> int:
        """Total score of a shelf whose circled cells are the bits of ``circled``."""
        rs = self.row_score
        cs = self.col_score
        t = transpose(circled)
        return (
            rs[0][circled & 31]
            + rs[1][circled >> 5 & 31]
            + rs[2][circled >> 10 & 31]
            + rs[3][circled >> 15 & 31]
            + rs[4][circled >> 20 & 31]
            + cs[0][t & 31]
            + cs[1][t >> 5 & 31]
            + cs[2][t >> 10 & 31]
            + cs[3][t >> 15 & 31]
            + cs[4][t >> 20 & 31]
        )

    def breakdown(self, circled: int) -> dict[str, list[int]]:
        """Per-row and per-column points of a shelf: ``{"rows": [...], "cols": [...]}``."""
        return {
            "rows": [self.row_score[r][row_bits(circled, r)] for r in range(5)],
            "cols": [self.col_score[c][transpose(circled) >> (5 * c) & 31] for c in range(5)],
        }
