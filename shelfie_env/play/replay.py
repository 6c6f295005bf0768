"""``shelfie replay FILE``: show a saved game (a replay JSON) move by move.

Reads the web table's downloads (``GET /api/games/{id}/replay``: ``seats`` with
names, ``initial_state``, ``actions`` and one state after each move) and files
whose ``states`` start with the initial position. Move entries are read
tolerantly: an entry may be an action id, a name, or an object with ``seat``,
``action``, ``name``, the dice showing after it (``dice``/``roll``/``faces``),
the state after it (``state``, as in the web table's move log) and that log's
``events`` (``rolled``: a reroll's new faces, ``opening``: a turn's first
roll); unknown fields are ignored. Every move is checked against the rules and the
stored positions (:mod:`shelfie_env.play.replay_check`); the first that fails stops the
replay with its number and why.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from shelfie_env.game.actions import FACE_NAMES, NUM_ACTIONS, action_kind, action_name
from shelfie_env.game.engine import REROLL, ROLLS_PER_TURN, Game
from shelfie_env.game.errors import InvalidStateError
from shelfie_env.game.render import render_text
from shelfie_env.play.labels import bot_label
from shelfie_env.play.narration import Voice, and_list, notices, turn_ended
from shelfie_env.play.options import replay_file
from shelfie_env.play.replay_check import ReplayError, check_final, check_move
from shelfie_env.play.terminal import _fail, _use_color, describe, final_report

ROLL_KEYS = ("dice", "roll", "faces")
"""Fields of a move entry that may carry the dice showing after the move."""


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
    """A move from one entry of ``actions`` (an id, a name or an object; extra fields ignored)."""
    if isinstance(entry, bool):
        return Move(None, None, str(entry))
    if isinstance(entry, int):
        return Move(None, entry if 0 <= entry < NUM_ACTIONS else None, _safe_name(entry))
    if not isinstance(entry, dict):
        return Move(None, None, str(entry))
    seat = entry.get("seat")
    action = entry.get("action")
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        action = None
    name = entry.get("name")
    if not isinstance(name, str):
        name = _safe_name(action) if action is not None else "?"
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


def _dice_words(dice: Sequence[int]) -> str:
    return " ".join(FACE_NAMES[d] for d in dice)


def _safe_name(action: int) -> str:
    try:
        return action_name(action)
    except ValueError:
        return str(action)


def seat_names(data: dict[str, Any], num_players: int) -> list[str]:
    """The players' names: ``seats[i].name`` (web exports) or ``names``; ``"player N"`` where
    none is given. Equal names get ``" (player N)"`` so every seat stays distinct."""
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
        names.append(" ".join(name.split()) if name and name.strip() else f"player {i + 1}")
    return [
        f"{n} (player {i + 1})" if names.count(n) > 1 and n != f"player {i + 1}" else n
        for i, n in enumerate(names)
    ]


# --------------------------------------------------------------------------- replay
def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``shelfie replay``."""
    parser.add_argument(
        "file",
        type=replay_file,
        metavar="FILE",
        help='replay JSON: {"version": 1, "seats"?, "initial_state", "actions", "states"?, "final_state"?}',
    )
    parser.add_argument("--no-color", action="store_true", help="plain text")
    parser.add_argument(
        "--every-move", action="store_true", help="show the table after every move, not only after each turn"
    )
    parser.add_argument(
        "--review",
        action="store_true",
        help="after the replay, review the game: each turn's luck, each player's luck-adjusted result, "
        "the three biggest mistakes with the better move (a finished game of 2-4 players)",
    )
    parser.add_argument(
        "--review-value",
        type=review_value,
        default="td",
        metavar="VALUE",
        help="whose exact search the review values positions with: td (default), planner, or td:path=MODEL",
    )


def run_replay(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Show a saved game: the players, the starting position, then every move with what it
    caused, the table after each turn (``--every-move``: after each move), and the result."""
    out = sys.stdout if out is None else out
    try:
        data = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return _fail(f"cannot read replay {args.file}: {exc}")
    if not isinstance(data, dict):
        return _fail("a replay must be a JSON object")
    if data.get("version", 1) != 1:
        return _fail(f"unsupported replay version {data.get('version')!r} (this reader knows version 1)")
    actions = data.get("actions") or []
    if not isinstance(actions, list):
        return _fail("'actions' must be a list")
    moves = [read_move(e) for e in actions]
    try:
        text = _show(data, moves, _use_color(args, out), bool(getattr(args, "every_move", False)))
    except ReplayError as exc:
        out.write(getattr(exc, "shown", ""))
        out.flush()
        return _fail(f"bad replay {args.file}: {exc}; the replay stops here")
    except (InvalidStateError, ValueError, TypeError) as exc:
        return _fail(f"bad replay {args.file}: {exc}")
    if text is None:
        return _fail("a replay needs 'states' or 'initial_state'")
    out.write(text)
    if getattr(args, "review", False):
        from shelfie_env.play.review_text import render_review, replay_review

        try:
            review = replay_review(data, moves, getattr(args, "review_value", "td"))
        except (ValueError, OSError) as exc:
            return _fail(f"cannot review {args.file}: {exc}")
        out.write("\n" + render_review(review))
    return 0


def review_value(text: str) -> str:
    """``--review-value``: ``td``, ``planner`` or ``td:path=MODEL`` (an existing file)."""
    name, _, rest = text.partition(":")
    if text in ("td", "planner"):
        return text
    key, _, path = rest.partition("=")
    if name == "td" and key == "path" and path:
        if not Path(path).is_file():
            raise argparse.ArgumentTypeError(f"no model file {path}")
        return text
    raise argparse.ArgumentTypeError(f"unknown value function {text!r}; use td, planner or td:path=MODEL")


def _show(data: dict[str, Any], moves: list[Move], color: bool, every_move: bool = False) -> str | None:
    """The whole replay as text (the table after each turn, or after each move with
    ``every_move``); None when the file holds no position at all.

    Every move is checked (:mod:`.replay_check`); the first one refuted raises
    :class:`ReplayError` whose ``shown`` holds the text up to that move.
    """
    states = data.get("states") if isinstance(data.get("states"), list) else []
    initial = data.get("initial_state")
    start = Game.from_dict(initial) if initial is not None else None
    if not states and moves and all(m.state is not None for m in moves):  # a web move log
        states = [m.state for m in moves]
    after = [Game.from_dict(s) for s in states]
    if len(after) == len(moves) + 1:  # the first stored state is the starting position
        start, after = after[0], after[1:]
    elif after and len(after) != len(moves):
        raise ReplayError(
            f"'states' holds {len(after)} positions for {len(moves)} moves "
            "(one after each move, optionally preceded by the starting position)"
        )
    final_state = data.get("final_state")
    final = Game.from_dict(final_state) if final_state is not None else (after[-1] if after else start)
    if final is None:
        return None
    names = seat_names(data, final.num_players)
    lines = [_players_line(data, names), ""]

    def board(g: Game) -> str:
        return render_text(g, None, color, names, status=not g.over)

    if start is not None:
        lines += ["Starting position:", "", board(start), ""]
    stepwise = len(after) == len(moves) and bool(moves)
    if not stepwise:
        lines.append("(this replay stores no position after each move: the moves were)")
    previous = start
    for j, move in enumerate(moves):
        stored = after[j] if stepwise else None
        if previous is not None and previous.phase == REROLL and previous.rolls_left == ROLLS_PER_TURN:
            lines.append(f"{names[previous.current]} rolled {_dice_words(previous.dice)}")
        elif previous is None and move.opening is not None and move.seat in range(len(names)):
            lines.append(f"{names[move.seat]} rolled {_dice_words(move.opening)}")
        now = stored
        if previous is not None:
            try:
                now = check_move(
                    j + 1,
                    _mover(move, previous, names),
                    previous,
                    move.action,
                    move.name,
                    move.seat,
                    stored,
                    move.roll,
                )
            except ReplayError as exc:
                exc.shown = "\n".join(lines) + "\n"
                raise
        lines.append(_move_line(move, previous, now, names))
        ended = False
        if previous is not None and now is not None and move.action is not None:
            lines += ["  " + t for t in notices(previous, now, move.action, Voice(names))]
            ended = turn_ended(previous, now, move.action)
        if stored is not None and (every_move or ended or stored.over or j == len(moves) - 1):
            lines += ["", board(stored), ""]
        previous = now
    if previous is not None and final_state is not None and moves:
        try:
            check_final(final, previous, f"move {len(moves)}")
        except ReplayError as exc:
            exc.shown = "\n".join(lines) + "\n"
            raise
    if not stepwise:
        lines += ["", "Final position:", "", board(final), ""]
    if final.over:
        lines += [final_report(final, names), ""]
    return "\n".join(lines) + "\n"


def _mover(move: Move, before: Game | None, names: Sequence[str]) -> str:
    seat = move.seat if move.seat is not None else (before.current if before is not None else None)
    return names[seat] if seat is not None and 0 <= seat < len(names) else "?"


def _players_line(data: dict[str, Any], names: Sequence[str]) -> str:
    where = f" (web game {data['game_id']})" if isinstance(data.get("game_id"), str) else ""
    if len(names) == 1:
        return f"Replay{where} of a solo game: {names[0]}."
    return f"Replay{where} of a {len(names)}-player game: {and_list(names)}, in seat order."


def _move_line(move: Move, before: Game | None, after: Game | None, names: Sequence[str]) -> str:
    who = _mover(move, before, names)
    text = f"{who} {describe(move.action)}" if move.action is not None else f"{who}: {move.name}"
    dice = move.roll if move.roll is not None else (after.dice if after is not None else None)
    if dice is not None and move.action is not None and action_kind(move.action) == "reroll":
        text += " -> " + _dice_words(dice)
    elif move.rolled is not None:
        text += f" -> new dice: {_dice_words(move.rolled)}"
    elif move.roll is not None and after is None:
        text += f" (dice now: {_dice_words(move.roll)})"
    return text
