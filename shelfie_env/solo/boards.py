"""Solo boards between turns: row states, the table's index, and which boards can arise.

With one player nothing locks a line, so each row of the shelf is in one of 63 states:

* **open** (``0 <= s < 31``): some cell free, no cell crossed; ``s`` is the circled mask
  (bit ``c`` = column ``c``);
* **closed** (``31 <= s <= 62``): no free cell; ``s - 31`` is the circled mask, the other
  cells crossed (``s == 62``: all five circled, nothing crossed).

The game ends once two rows are closed, so a board between turns has at most one closed row:
``31**5 + 5 * 32 * 31**4 = 176,392,511`` boards. When every row has the same points, the five
symbols are interchangeable (the dice treat them alike), so a board's value depends only on the
multiset of its row states: ``C(35, 5) + 32 * C(34, 4) = 1,808,664`` boards up to a permutation
of the rows. :func:`board_index` numbers both spaces (``symmetric`` chooses).
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import comb
from typing import Any

import numpy as np

OPEN = 31
"""Open row states: ``0..30`` (the circled mask; 31 would be a full row)."""
CLOSED_BASE = 31
"""A closed row's state is ``CLOSED_BASE + circled mask`` (62: all circled)."""
FULL_ROW = 62
STATES = 63

SYM_OPEN_BOARDS = comb(OPEN + 4, 5)  # 324,632 multisets of five open rows
SYM_CLOSED_BLOCK = comb(OPEN + 3, 4)  # 46,376 multisets of four open rows
SYM_BOARDS = SYM_OPEN_BOARDS + 32 * SYM_CLOSED_BLOCK  # 1,808,664
FULL_OPEN_BOARDS = OPEN**5
FULL_CLOSED_BLOCK = OPEN**4
FULL_BOARDS = FULL_OPEN_BOARDS + 5 * 32 * FULL_CLOSED_BLOCK  # 176,392,511

BINOM = np.array([[comb(n, k) for k in range(6)] for n in range(OPEN + 6)], dtype=np.int64)
"""``BINOM[n, k] = C(n, k)`` for the multiset ranks."""


def board_count(symmetric: bool) -> int:
    """Boards between turns in the table (up to row permutations when ``symmetric``)."""
    return SYM_BOARDS if symmetric else FULL_BOARDS


def circled_of(s: int) -> int:
    """The circled mask (5 bits) of row state ``s``."""
    return s - CLOSED_BASE if s >= CLOSED_BASE else s


def filled_cells(states: tuple[int, ...] | list[int]) -> int:
    """Cells circled or crossed on a board of row states (the solver's layer)."""
    return sum(5 if s >= CLOSED_BASE else bin(s).count("1") for s in states)


def _multiset_rank(sorted_states: list[int]) -> int:
    return sum(comb(s + i, i + 1) for i, s in enumerate(sorted_states))


def board_index(states: tuple[int, ...] | list[int], symmetric: bool) -> int:
    """The table index of a board of five row states with at most one closed row."""
    closed = [r for r, s in enumerate(states) if s >= CLOSED_BASE]
    if len(closed) > 1:
        raise ValueError("a board between turns has at most one closed row")
    if symmetric:
        opens = sorted(s for s in states if s < CLOSED_BASE)
        if not closed:
            return _multiset_rank(opens)
        return SYM_OPEN_BOARDS + (states[closed[0]] - CLOSED_BASE) * SYM_CLOSED_BLOCK + _multiset_rank(opens)
    if not closed:
        return sum(s * OPEN**r for r, s in enumerate(states))
    r0 = closed[0]
    rest = [s for r, s in enumerate(states) if r != r0]
    block = r0 * 32 + states[r0] - CLOSED_BASE
    return FULL_OPEN_BOARDS + block * FULL_CLOSED_BLOCK + sum(s * OPEN**j for j, s in enumerate(rest))


def board_indices(states: np.ndarray, symmetric: bool) -> np.ndarray:
    """:func:`board_index` of many boards, ``states`` of shape ``(N, 5)``, each with at most one closed row."""
    st = np.asarray(states, dtype=np.int64)
    closed = st >= CLOSED_BASE
    if (closed.sum(axis=1) > 1).any():
        raise ValueError("a board between turns has at most one closed row")
    has = closed.any(axis=1)
    if symmetric:
        srt = np.sort(st, axis=1)  # a closed row sorts last
        low = np.minimum(srt, OPEN - 1)  # ranks5 is used only where no row is closed
        ranks5 = sum(BINOM[low[:, i] + i, i + 1] for i in range(5))
        ranks4 = sum(BINOM[srt[:, i] + i, i + 1] for i in range(4))
        closed_idx = SYM_OPEN_BOARDS + (srt[:, 4] - CLOSED_BASE) * SYM_CLOSED_BLOCK + ranks4
        return np.where(has, closed_idx, ranks5)
    powers = OPEN ** np.arange(5, dtype=np.int64)
    open_idx = (st * powers).sum(axis=1)
    r0 = np.argmax(closed, axis=1)
    k = st[np.arange(len(st)), r0] - CLOSED_BASE
    rest_pow = np.where(np.arange(5)[None, :] < r0[:, None], powers[None, :], powers[None, :] // OPEN)
    rest = np.where(closed, 0, st * rest_pow).sum(axis=1)
    closed_idx = FULL_OPEN_BOARDS + (r0 * 32 + k) * FULL_CLOSED_BLOCK + rest
    return np.where(has, closed_idx, open_idx)


def symmetric_boards() -> np.ndarray:
    """Every board up to row permutations as ``(SYM_BOARDS, 5)`` uint8 sorted row states, row ``i`` the
    board of index ``i``."""
    out = np.empty((SYM_BOARDS, 5), dtype=np.uint8)
    opens = np.array(list(combinations_with_replacement(range(OPEN), 5)), dtype=np.int64)
    out[board_indices(opens, True)] = opens
    fours = np.array(list(combinations_with_replacement(range(OPEN), 4)), dtype=np.int64)
    for k in range(32):
        boards = np.concatenate([fours, np.full((len(fours), 1), CLOSED_BASE + k)], axis=1)
        out[board_indices(boards, True)] = boards
    return out


def symmetric_points(points: tuple[tuple[int, ...], ...]) -> bool:
    """Whether every row has the same points (then the rows are interchangeable)."""
    return all(row == points[0] for row in points)


# --------------------------------------------------------------------------- boards as 5x5 grids
def masks_of(board: Any) -> tuple[int, int]:
    """``(circled, crossed)`` 25-bit masks of a 5x5 board of 0 free / 1 circled / 2 crossed.

    ``ValueError`` names what is wrong when ``board`` is not such a grid.
    """
    try:
        arr = np.asarray(board)
    except (TypeError, ValueError):
        raise ValueError("a board must be a 5x5 grid of 0 (free), 1 (circled), 2 (crossed)") from None
    if arr.shape != (5, 5) or arr.dtype == object:
        raise ValueError(
            f"a board must be a 5x5 grid of 0 (free), 1 (circled), 2 (crossed), got shape {arr.shape}"
        )
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError("a board's cells must be the integers 0 (free), 1 (circled), 2 (crossed)")
    if not np.isin(arr, (0, 1, 2)).all():
        bad = arr[~np.isin(arr, (0, 1, 2))].ravel()[0].item()
        raise ValueError(f"a board's cells must be 0 (free), 1 (circled) or 2 (crossed), got {bad!r}")
    cells = arr.astype(np.int64).ravel()
    circled = sum(1 << b for b in range(25) if cells[b] == 1)
    crossed = sum(1 << b for b in range(25) if cells[b] == 2)
    return circled, crossed


def row_states(circled: int, crossed: int) -> tuple[int, ...]:
    """The five row states of a solo shelf; ``ValueError`` when a row has crossed cells and free ones
    (in the solo game a row is crossed out whole)."""
    out = []
    for r in range(5):
        c = circled >> (5 * r) & 31
        x = crossed >> (5 * r) & 31
        if x and (c | x) != 31:
            raise ValueError(
                f"row {r} has crossed cells beside free ones: in the solo game a row is crossed out whole"
            )
        out.append(CLOSED_BASE + c if x or c == 31 else c)
    return tuple(out)


def _prefix(circled_row: int) -> int:
    n = 0
    while n < 5 and circled_row >> n & 1:
        n += 1
    return n


def cross_possible(states: tuple[int, ...] | list[int]) -> bool:
    """Whether some roll leaves nothing to circle on these rows (so a row may be crossed out).

    With ``p_r`` the circled prefix of row ``r`` (cells ``(r, 0 .. p_r - 1)`` taken): six dice with
    ``n_r`` of face ``r`` and no joker circle nothing exactly when ``n_r <= p_r`` in every row, which
    some roll meets iff the prefixes add up to six or more. With a joker (and not six of them),
    a row with ``n_r >= 1`` dice is blocked only when ``n_r + 1 <= p_r``, so one die of a row with
    two taken cells and five jokers also circle nothing. Six jokers circle any free cell.
    """
    prefixes = [5 if s >= CLOSED_BASE else _prefix(s) for s in states]
    return sum(prefixes) >= 6 or max(prefixes) >= 2


def start_board_arises(states: tuple[int, ...]) -> str | None:
    """Why a board between turns cannot arise in the solo game, or ``None`` when it can."""
    closed = [s for s in states if s >= CLOSED_BASE]
    if len(closed) > 1:
        return "it has two closed rows, so the game is over"
    crossed = [r for r, s in enumerate(states) if CLOSED_BASE <= s < FULL_ROW]
    if crossed:
        r = crossed[0]
        before = list(states)
        before[r] = states[r] - CLOSED_BASE
        if not cross_possible(before):
            return (
                f"row {r} is crossed out, but no roll could have left nothing to circle "
                "(a row is crossed out only then)"
            )
    return None


def _circle_sets() -> list[int]:
    from shelfie_env.bots.planner.placements import SET_MASKS

    return [int(m) for m in SET_MASKS]


def finished_board_arises(circled: int, crossed: int) -> str | None:
    """Why a board with two or more closed rows cannot end a solo game, or ``None`` when it can.

    It ends one when a board between turns that can arise leads to it in one turn: by crossing out a
    row, or by circling one to three cells one roll can circle.
    """
    states = row_states(circled, crossed)
    crossed_rows = [r for r, s in enumerate(states) if CLOSED_BASE <= s < FULL_ROW]
    if len(crossed_rows) > 2:
        return "three rows are crossed out, but a game ends at the second closed row"
    for r in crossed_rows:  # the last turn crossed out row r
        before = list(states)
        before[r] = states[r] - CLOSED_BASE
        if sum(s >= CLOSED_BASE for s in before) <= 1 and start_board_arises(tuple(before)) is None:
            if cross_possible(before):
                return None
    open_circled = sum(((circled >> (5 * r)) & 31) << (5 * r) for r in range(5) if r not in crossed_rows)
    for cells in _circle_sets():  # the last turn circled ``cells``
        if cells & ~open_circled:
            continue
        before_states = row_states(circled & ~cells, crossed)
        if sum(s >= CLOSED_BASE for s in before_states) <= 1 and start_board_arises(before_states) is None:
            return None
    return "no board between turns leads to it in one turn"


def check_board(board: Any) -> tuple[int, int, tuple[int, ...] | None]:
    """``(circled, crossed, row states)`` of a board that can arise in the solo game, the states
    ``None`` when the game is over on it; ``ValueError`` naming the problem otherwise."""
    circled, crossed = masks_of(board)
    states = row_states(circled, crossed)
    if sum(s >= CLOSED_BASE for s in states) >= 2:
        why = finished_board_arises(circled, crossed)
        if why is not None:
            raise ValueError(f"this finished board cannot arise in the solo game: {why}")
        return circled, crossed, None
    why = start_board_arises(states)
    if why is not None:
        raise ValueError(f"this board cannot arise in the solo game: {why}")
    return circled, crossed, states


__all__ = [
    "CLOSED_BASE",
    "FULL_BOARDS",
    "FULL_ROW",
    "SYM_BOARDS",
    "board_count",
    "board_index",
    "board_indices",
    "check_board",
    "circled_of",
    "cross_possible",
    "filled_cells",
    "finished_board_arises",
    "masks_of",
    "row_states",
    "start_board_arises",
    "symmetric_boards",
    "symmetric_points",
]
