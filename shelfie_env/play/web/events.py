"""What each logged move did, read from the stored states before and after it.

The move log stores, per move, the action and the state after it; comparing
consecutive states gives the dice a roll produced, the cells circled and
crossed, the rows and columns completed (and the rivals' cells they crossed
out) and the move that set off the last round. Nothing is stored twice, so
games stored before these summaries existed get them too.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from shelfie_env.game.actions import CIRCLE_BASE, CIRCLE_LAST, END_TURN, NUM_DICE, REROLL_FIRST, REROLL_LAST
from shelfie_env.game.engine import ROLLS_PER_TURN, Game
from shelfie_env.game.scoring import COL_MASKS, ROW_MASKS
from shelfie_env.play.web.lines import last_round, mask_cells, seat_lines

FRAMES = 24
"""How many of the last moves of an answer carry line summaries (for the page's step-by-step display)."""


def _mask(board: list[list[int]], status: int) -> int:
    return sum(1 << (5 * r + c) for r in range(5) for c in range(5) if board[r][c] == status)


def rolled_dice(before: list[int], action: int, after: list[int]) -> tuple[list[int], list[int]]:
    """The faces a reroll ``action`` produced and their positions among the sorted ``after`` dice.

    Dice of one face are interchangeable, so the new ones are taken as the
    right-most of their face.
    """
    kept = Counter(before[i] for i in range(NUM_DICE) if not action >> i & 1)
    new = Counter(after) - kept
    positions: list[int] = []
    for face, k in new.items():
        at = [i for i, d in enumerate(after) if d == face]
        positions += at[len(at) - k :]
    positions.sort()
    return [after[i] for i in positions], positions


def move_events(before: dict[str, Any] | None, move: dict[str, Any]) -> dict[str, Any]:
    """The events of one move (``{"seat", "action", "state"}``) given the state before it.

    Keys: ``opening`` (the dice the mover's turn began with, on the turn's first
    move), ``rolled`` / ``rolled_at`` (the new faces of a reroll and their dice
    positions), ``new_turn`` (the move ended the turn and the next one began:
    its first roll is the dice of ``state``), ``circled`` and ``crossed``
    (``[seat, row, col]`` cells that changed), ``completed`` (lines the mover
    completed, each with the rivals' ``crossed`` cells) and ``end_triggered``.
    With ``before`` unknown only ``new_turn`` can be told.
    """
    after = move["state"]
    action = move["action"]
    out: dict[str, Any] = {
        "rolled": None,
        "rolled_at": None,
        "opening": None,
        "new_turn": False,
        "circled": [],
        "crossed": [],
        "completed": [],
        "end_triggered": False,
    }
    turn_move = CIRCLE_BASE <= action <= CIRCLE_LAST or action >= END_TURN
    out["new_turn"] = turn_move and after["phase"] == "reroll"
    if before is None:
        return out
    if before["phase"] == "reroll" and before["rolls_left"] == ROLLS_PER_TURN:
        out["opening"] = list(before["dice"])
    if REROLL_FIRST <= action <= REROLL_LAST:
        out["rolled"], out["rolled_at"] = rolled_dice(before["dice"], action, after["dice"])
    mover = move["seat"]
    new_circled = []
    for p, (b0, b1) in enumerate(zip(before["boards"], after["boards"])):
        gained = _mask(b1, 1) & ~_mask(b0, 1)
        lost = _mask(b1, 2) & ~_mask(b0, 2)
        new_circled.append(gained)
        out["circled"] += [[p, r, c] for r, c in mask_cells(gained)]
        out["crossed"] += [[p, r, c] for r, c in mask_cells(lost)]
    was = _mask(before["boards"][mover], 1)
    now = was | new_circled[mover]
    for kind, masks in (("row", ROW_MASKS), ("column", COL_MASKS)):
        for i, m in enumerate(masks):
            if now & m != m or was & m == m:
                continue
            crossed = []
            for q, (b0, b1) in enumerate(zip(before["boards"], after["boards"])):
                lost = _mask(b1, 2) & ~_mask(b0, 2) & m
                if q != mover and lost:
                    crossed.append({"seat": q, "cells": mask_cells(lost)})
            out["completed"].append({"by": mover, "kind": kind, "index": i, "crossed": crossed})
    out["end_triggered"] = bool(after.get("end_triggered")) and not before.get("end_triggered")
    return out


def with_events(
    moves: Iterable[dict[str, Any]], before: dict[str, Any] | None, frames: int = FRAMES
) -> list[dict[str, Any]]:
    """The log entries with ``events`` added (``before`` is the state before the first one).

    The last ``frames`` entries also carry ``last_round`` after them and ``lines``:
    the line summaries of the shelves the move changed (the others are as before),
    so a page can show those moves one by one with their totals.
    """
    out = []
    for move in moves:
        entry = dict(move)
        entry["events"] = move_events(before, move)
        before = move["state"]
        out.append(entry)
    for entry in out[max(0, len(out) - frames) :]:
        try:
            game = Game.from_dict(entry["state"])
        except ValueError:  # a stored state the engine refuses: the page shows the board without totals
            continue
        events = entry["events"]
        changed = sorted({cell[0] for cell in events["circled"] + events["crossed"]})
        entry["lines"] = [seat_lines(game, p) for p in changed]
        entry["last_round"] = last_round(game)
    return out


class LiveLog:
    """The log entries of a live game's latest moves, built as they are played.

    Holds between ``FRAMES`` and ``2 * FRAMES`` of the latest moves with their
    events (older ones are dropped ``FRAMES`` at a time, so the first index held
    changes seldom), and the line summaries :func:`with_events` gives an answer's
    last ``FRAMES`` moves; a view of a game in play needs neither the store nor a
    state parsed again. What :meth:`entries` returns equals :func:`log_entries`
    of the stored rows (tested).
    """

    def __init__(self, num_moves: int, state: dict[str, Any]) -> None:
        self.start = num_moves
        """Index of the first move held (moves before it are read from the store)."""
        self.state = state
        """The state after the last move (before the first one: the state the log starts from)."""
        self._entries: list[dict[str, Any]] = []
        self._frames: deque[dict[str, Any]] = deque(maxlen=FRAMES)

    def add(self, move: dict[str, Any], game: Game) -> None:
        """Append ``move`` (``{"index", "seat", "action", "name", "state"}``); ``game`` is the game after it."""
        if move["index"] != self.start + len(self._entries):
            raise ValueError(
                f"move {move['index']} does not follow the {self.start + len(self._entries)} held"
            )
        entry = dict(move)
        entry["events"] = events = move_events(self.state, move)
        changed = sorted({cell[0] for cell in events["circled"] + events["crossed"]})
        self._entries.append(entry)
        self._frames.append({"lines": [seat_lines(game, p) for p in changed], "last_round": last_round(game)})
        self.state = move["state"]
        if len(self._entries) > 2 * FRAMES:
            del self._entries[:FRAMES]
            self.start += FRAMES

    @property
    def held(self) -> int:
        """How many moves are held."""
        return len(self._entries)

    def covers(self, since: int) -> bool:
        """Whether the moves from ``since`` on are all held."""
        return since >= self.start

    def entries(self, since: int) -> list[dict[str, Any]]:
        """The entries from index ``since`` on (``covers(since)`` must hold), the last ``FRAMES`` with line summaries."""
        if not self.covers(since):
            raise ValueError(f"moves before {self.start} are not held")
        out = [dict(e) for e in self._entries[since - self.start :]]
        n = min(len(out), len(self._frames))
        for k in range(1, n + 1):
            out[-k].update(self._frames[-k])
        return out


class EntryCache:
    """Log entries that can no longer change (a finished game's, or a live game's before its
    :class:`LiveLog`), kept for the next answer that lists them; at most ``max_entries`` in all,
    the least recently used dropped first."""

    def __init__(self, max_entries: int = 20_000) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[Hashable, list[dict[str, Any]]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """The entries kept under ``key``, or ``build()``'s (then kept); a new list each time."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return list(hit)
        value = build()
        with self._lock:
            if key not in self._items and len(value) <= self.max_entries:
                self._items[key] = value
                self._size += len(value)
                while self._size > self.max_entries:
                    self._size -= len(self._items.popitem(last=False)[1])
        return list(value)


def log_entries(
    rows: list[dict[str, Any]], since: int, initial: Callable[[], dict[str, Any] | None], frames: int = FRAMES
) -> list[dict[str, Any]]:
    """Entries from index ``since`` on, given ``rows`` read from ``max(since - 1, 0)`` on.

    The state before move ``since`` is the row before it, or ``initial()`` (the
    game's first state) when ``since`` is 0.
    """
    if since > 0 and rows and rows[0]["index"] == since - 1:
        before: dict[str, Any] | None = rows[0]["state"]
        rows = rows[1:]
    else:
        before = initial() if since == 0 else None
    return with_events(rows, before, frames)


__all__ = ["FRAMES", "EntryCache", "LiveLog", "log_entries", "move_events", "rolled_dice", "with_events"]
