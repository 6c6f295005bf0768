"""The solo game solved exactly: the value of every board under optimal play.

>>> from shelfie_env.solo import optimum, board_value
>>> round(optimum(), 4)  # E*, the expected final score of the solo game under optimal play  # doctest: +SKIP

:func:`board_value` gives the expected final score from the start of a turn on any board that
can arise in the solo game (a finished board: its score). The values come from a table shipped
with the package (:mod:`.table`), computed by ``shelfie solo solve`` (:mod:`.solve`, which needs
numba); :mod:`.turn` plays a turn exactly against it, the ``solo-optimal`` bot (:mod:`.bot`).
The room sits above ``bots`` (it reads the planner's dice and circle tables) and below the
arena, which measures every solo number against it.
"""

from __future__ import annotations

from typing import Any

from shelfie_env.game.scoring import DEFAULT_POINTS, ScoreTable
from shelfie_env.solo.boards import check_board
from shelfie_env.solo.table import SoloTable, TableError, shipped_table

_DEFAULT_SCORES = ScoreTable(DEFAULT_POINTS)


def optimum() -> float:
    """E*: the expected final score of the solo game (default points) under optimal play."""
    return shipped_table().optimum


def board_value(board: Any) -> float:
    """Expected final score under optimal play from the start of a turn on ``board``.

    ``board`` is 5x5 of 0 (free), 1 (circled), 2 (crossed), row ``r`` the items of symbol ``r``.
    A finished board (two rows without a free cell) is worth its score. ``ValueError`` names the
    problem when ``board`` is not such a grid or cannot arise in the solo game.
    """
    circled, _crossed, states = check_board(board)
    if states is None:
        return float(_DEFAULT_SCORES.score(circled))
    return shipped_table().value(states)


__all__ = ["SoloTable", "TableError", "board_value", "optimum"]
