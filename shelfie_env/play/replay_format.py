"""The replay file: one finished (or left) game as JSON, written by ``shelfie play --save``
and by the web table's download (``GET /api/games/{id}/replay``), read by ``shelfie replay``.

Version 1 holds ``version``, ``seats`` (``{"seat", "type": "human"|"bot", "name", "bot"}``),
``initial_state``, ``actions`` (``{"seat", "action", "name"}``, one per move), ``states``
(the state dict after each move) and ``final_state``; web downloads add ``game_id``.
Readers are tolerant: a move entry may be an action id, a name, or an object with more
fields (:func:`read_move`), and ``states`` may start with the initial position.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shelfie_env.clip import printable
from shelfie_env.game.actions import FACE_NAMES, NUM_ACTIONS, action_name, action_name_or_id
from shelfie_env.jsonfile import JSONFileError, read_json_file
from shelfie_env.play.labels import bot_label

REPLAY_VERSION = 1
"""The format version this module writes and reads."""
ROLL_KEYS = ("dice", "roll", "faces")
"""Fields of a move entry that may carry the dice showing after the move."""


class ReplayFileError(ValueError):
    """A replay file that cannot be read as a replay (the message says why)."""


MAX_NESTING = 64
"""Deepest nesting of arrays and objects a replay file may have (replays need 6)."""
MAX_REPLAY_BYTES = 8 * 2**20
"""Largest replay file read: a whole game with its positions is 20-200 KB, a move list alone a few KB."""


def read_replay(path: str | Path) -> dict[str, Any]:
    """The replay in ``path`` as a dict; :class:`ReplayFileError` when the file cannot be read,
    is over :data:`MAX_REPLAY_BYTES`, is not UTF-8 JSON, nests deeper than :data:`MAX_NESTING`, is
    not a JSON object or has another version."""
    try:
        data = read_json_file(path, "replay", MAX_REPLAY_BYTES, MAX_NESTING)
    except JSONFileError as exc:
        raise ReplayFileError(str(exc)) from None
    if not isinstance(data, dict):
        raise ReplayFileError("a replay must be a JSON object")
    if data.get("version", REPLAY_VERSION) != REPLAY_VERSION:
        raise ReplayFileError(
            f"unsupported replay version {data.get('version')!r} (this reader knows version {REPLAY_VERSION})"
        )
    return data


def replay_data(
    seats: Sequence[tuple[str, str | None, str | None]],
    initial_state: dict[str, Any],
    moves: Sequence[tuple[int, int]],
    states: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """A replay (version 1) of a game: ``seats`` as ``(type, name, bot spec)`` in seat order,
    the starting position, ``moves`` as ``(seat, action)`` and the state after each move."""
    if len(states) != len(moves):
        raise ValueError(f"{len(moves)} moves need one state after each, got {len(states)} states")
    return {
        "version": REPLAY_VERSION,
        "seats": [
            {"seat": i, "type": kind, "name": name, "bot": bot} for i, (kind, name, bot) in enumerate(seats)
        ],
        "initial_state": initial_state,
        "actions": [{"seat": seat, "action": action, "name": action_name(action)} for seat, action in moves],
        "states": list(states),
        "final_state": states[-1] if states else initial_state,
    }


def write_replay(path: str | Path, data: dict[str, Any]) -> None:
    """Write ``data`` (from :func:`replay_data`) to ``path`` as one line of JSON; ``OSError`` if it cannot."""
    Path(path).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


@dataclass
class Move:
    """One logged move, as far as its entry tells."""

    seat: int | None
    action: int | None
    name: str
    roll: list[int] | None = None
    """All six dice after the move, when the entry gives them."""
    rolled: list[int] | None = None
    """Only the faces a reroll brought (the web log's ``events.rolled``)."""
    opening: list[int] | None = None
    """The dice the mover's turn began with, on a turn's first move (``events.opening``)."""
    state: dict[str, Any] | None = None
    """The state after the move, when the entry carries it."""


def read_move(entry: Any) -> Move:
    """A move from one entry of ``actions``: an id, a name, or an object with ``seat``,
    ``action``, ``name``, the dice after it (``dice``/``roll``/``faces``), the state after it
    (``state``, as in the web table's move log) and that log's ``events`` (``rolled``: a
    reroll's new faces, ``opening``: a turn's first roll); other fields are ignored."""
    if isinstance(entry, bool):
        return Move(None, None, str(entry))
    if isinstance(entry, int):
        return Move(None, entry if 0 <= entry < NUM_ACTIONS else None, action_name_or_id(entry))
    if not isinstance(entry, dict):
        return Move(None, None, printable(str(entry)))
    seat = entry.get("seat")
    action = entry.get("action")
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        action = None
    name = entry.get("name")
    if not isinstance(name, str):
        name = action_name_or_id(action) if action is not None else "?"
    name = printable(name)
    roll = None
    for key in ROLL_KEYS:
        roll = _faces(entry.get(key))
        if roll is not None:
            break
    events = entry.get("events") if isinstance(entry.get("events"), dict) else {}
    state = entry.get("state") if isinstance(entry.get("state"), dict) else None
    return Move(
        seat if isinstance(seat, int) and not isinstance(seat, bool) else None,
        action,
        name,
        roll,
        _faces(events.get("rolled", entry.get("rolled"))),
        _faces(events.get("opening")),
        state,
    )


def _faces(value: Any) -> list[int] | None:
    """Dice faces from a list of face ids (0-5) or face names; None if it is not one."""
    if not isinstance(value, list) or not value:
        return None
    faces = []
    for v in value:
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(FACE_NAMES):
            faces.append(v)
        elif isinstance(v, str) and v.lower() in FACE_NAMES:
            faces.append(FACE_NAMES.index(v.lower()))
        else:
            return None
    return faces


def seat_names(data: dict[str, Any], num_players: int) -> list[str]:
    """The players' names: ``seats[i].name`` (or the bot's label) or ``names``; ``"player N"``
    where none is given. Equal names get ``" (player N)"`` so every seat stays distinct; control
    characters are shown escaped (:func:`~shelfie_env.clip.printable`)."""
    raw = data.get("seats")
    if not isinstance(raw, list):
        raw = data.get("names") if isinstance(data.get("names"), list) else []
    names = []
    for i in range(num_players):
        s = raw[i] if i < len(raw) else None
        name = None
        if isinstance(s, str):
            name = s
        elif isinstance(s, dict):
            name = s.get("name") if isinstance(s.get("name"), str) else None
            bot = s.get("bot") if isinstance(s.get("bot"), str) and s["bot"].strip() else None
            if bot is not None and (not name or name.strip() in (bot.strip(), f"{bot.strip()} bot")):
                label = bot_label(bot)
                name = label if label != bot.strip() else f"{label} bot"
        names.append(printable(" ".join(name.split())) if name and name.strip() else f"player {i + 1}")
    return [
        f"{n} (player {i + 1})" if names.count(n) > 1 and n != f"player {i + 1}" else n
        for i, n in enumerate(names)
    ]


def positions(data: dict[str, Any], moves: Sequence[Move]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The first position and one position after each move (the file's ``states``, with or
    without the starting position first, or its move entries' ``state``); ``ValueError`` if absent."""
    states = data.get("states") if isinstance(data.get("states"), list) else []
    if not states and moves and all(m.state is not None for m in moves):
        states = [m.state for m in moves]
    initial = data.get("initial_state")
    if len(states) == len(moves) + 1:
        initial, states = states[0], states[1:]
    if (
        not isinstance(initial, dict)
        or len(states) != len(moves)
        or not all(isinstance(s, dict) for s in states)
    ):
        raise ValueError("a review needs the starting position and the position after each move ('states')")
    return initial, list(states)


__all__ = [
    "REPLAY_VERSION",
    "Move",
    "ReplayFileError",
    "positions",
    "read_move",
    "read_replay",
    "replay_data",
    "seat_names",
    "write_replay",
]
