"""The rows of the games database as Python objects: a game (:class:`GameRow`) and a move
(:class:`MoveRow`), with their JSON columns decoded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


class DamagedRowError(ValueError):
    """A stored game whose row cannot be read (invalid JSON in a field)."""


@dataclass
class GameRow:
    """One stored game (JSON columns decoded)."""

    id: str
    status: str
    seats: list[dict[str, Any]]
    initial_state: dict[str, Any]
    state: dict[str, Any]
    rng: dict[str, Any]
    num_moves: int
    created: float
    updated: float
    rematch: str | None = None
    """The id of the rematch started after this game, while that game is stored."""


@dataclass
class MoveRow:
    """One stored move: who played which action, and the state after it."""

    index: int
    seat: int
    action: int
    name: str
    state: dict[str, Any]


def dumps(obj: Any) -> str:
    """``obj`` as the compact JSON text a column holds."""
    return json.dumps(obj, separators=(",", ":"))


def game_row(row: tuple[Any, ...]) -> GameRow:
    """A game read as ``id, status, seats, initial_state, state, rng, num_moves, created, updated,
    rematch`` (:class:`DamagedRowError` when a JSON column is not valid JSON)."""
    fields = {}
    for name, raw in zip(("seats", "initial_state", "state", "rng"), row[2:6]):
        try:
            fields[name] = json.loads(raw)
        except (TypeError, ValueError):
            raise DamagedRowError(f"game {row[0]}: its stored {name} is not valid JSON") from None
    return GameRow(
        id=row[0], status=row[1], num_moves=row[6], created=row[7], updated=row[8], rematch=row[9], **fields
    )


def move_row(row: tuple[Any, ...]) -> MoveRow:
    """A move read as ``idx, seat, action, name, state``."""
    return MoveRow(row[0], row[1], row[2], row[3], json.loads(row[4]))


def iter_json_lines(rows: list[MoveRow]) -> Iterator[dict[str, Any]]:
    """Moves as the JSON dicts the API returns."""
    for m in rows:
        yield {"index": m.index, "seat": m.seat, "action": m.action, "name": m.name, "state": m.state}


__all__ = ["DamagedRowError", "GameRow", "MoveRow", "dumps", "game_row", "iter_json_lines", "move_row"]
