"""Per-row and per-column progress of every shelf, and the last round, for the web table.

Every number is read off the engine: a line's points come from the game's
:class:`~shelfie_env.game.scoring.ScoreTable` (the same tables the final score
uses) and the end trigger from :func:`~shelfie_env.game.engine.full_rows`;
nothing here restates a rule. The page shows these summaries beside each shelf.
"""

from __future__ import annotations

from typing import Any

from shelfie_env.game.actions import SYMBOL_PLURALS
from shelfie_env.game.engine import Game, full_rows
from shelfie_env.game.scoring import COL_MASKS, MIN_LINE, ROW_MASKS, col_bits, row_bits

LINE_SIZE = 5


def mask_cells(mask: int) -> list[list[int]]:
    """``[[row, col], ...]`` of the set bits of a shelf mask."""
    return [list(divmod(b, 5)) for b in range(25) if mask >> b & 1]


def line_summary(game: Game, seat: int, kind: str, index: int) -> dict[str, Any]:
    """Progress and points of one row (``kind="row"``) or column (``"column"``) of ``seat``'s shelf.

    ``points`` is what the line scores now, ``max`` what it would score with every
    still-free cell circled, ``full_points`` what the complete line is worth.
    ``status`` is ``complete`` (all circled), ``locked`` (a rival completed it:
    ``locked_by``), ``full`` (no free cell left) or ``open``. ``next`` says what
    one more circle does when that is a step: ``score`` (the 3rd circle makes it
    count) or ``complete``, with the best ``gain`` in points and the ``cells`` that do it
    (None once the game is over).
    """
    if kind not in ("row", "column"):
        raise ValueError(f"kind must be 'row' or 'column', got {kind!r}")
    table = game.table
    mask = ROW_MASKS[index] if kind == "row" else COL_MASKS[index]
    scores = table.row_score[index] if kind == "row" else table.col_score[index]

    def local(m: int) -> int:
        return row_bits(m, index) if kind == "row" else col_bits(m, index)

    def value(m: int) -> int:
        return scores[local(m)]

    circled = game.circled[seat] & mask
    crossed = game.crossed[seat] & mask
    free = game.free(seat) & mask
    n_circled = circled.bit_count()
    locked_by = next(
        (q for q in range(game.num_players) if q != seat and game.circled[q] & mask == mask), None
    )
    if circled == mask:
        status = "complete"
    elif locked_by is not None:
        status = "locked"
    elif not free:
        status = "full"
    else:
        status = "open"
    now = value(circled)
    step = None
    if free and n_circled in (MIN_LINE - 1, LINE_SIZE - 1) and not game.over:
        cells = [1 << b for b in range(25) if free >> b & 1]
        step = {
            "goal": "score" if n_circled == MIN_LINE - 1 else "complete",
            "gain": max(value(circled | c) for c in cells) - now,
            "cells": mask_cells(free),
        }
    return {
        "kind": kind,
        "index": index,
        "name": f"{SYMBOL_PLURALS[index]} row" if kind == "row" else f"column {index + 1}",
        "size": LINE_SIZE,
        "circled": n_circled,
        "crossed": crossed.bit_count(),
        "free": free.bit_count(),
        "points": now,
        "max": value(circled | free),
        "full_points": value(mask),
        "status": status,
        "locked_by": locked_by,
        "next": step,
    }


def seat_lines(game: Game, seat: int) -> dict[str, Any]:
    """``{"seat", "rows": [5 line summaries], "cols": [5 line summaries]}`` of one shelf."""
    return {
        "seat": seat,
        "rows": [line_summary(game, seat, "row", r) for r in range(5)],
        "cols": [line_summary(game, seat, "column", c) for c in range(5)],
    }


def table_lines(game: Game) -> list[dict[str, Any]]:
    """The line summaries of every shelf, in seat order."""
    return [seat_lines(game, p) for p in range(game.num_players)]


def last_round(game: Game) -> dict[str, Any] | None:
    """Who set the end off and which seats still play, once the end is triggered (None before, and
    once the game is over).

    ``triggered_by`` lists the seats with two or more rows without a free cell;
    the game ends when seat ``last_seat``'s turn ends; ``to_play`` are the seats
    still to play, the one on turn first (a seat with no free cell passes).
    """
    if not game.end_triggered or game.over:
        return None
    n = game.num_players
    return {
        "triggered_by": [q for q in range(n) if full_rows(game.circled[q] | game.crossed[q]) >= 2],
        "last_seat": n - 1,
        "to_play": [q for q in range(game.current, n) if game.free(q)],
    }


def summary(game: Game) -> dict[str, Any]:
    """``{"lines": table_lines(game), "last_round": last_round(game)}``: what the view adds."""
    return {"lines": table_lines(game), "last_round": last_round(game)}


__all__ = ["LINE_SIZE", "last_round", "line_summary", "mask_cells", "seat_lines", "summary", "table_lines"]
