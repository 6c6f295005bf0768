"""``shelfie replay FILE``: show a saved game (a replay JSON) move by move.

Reads the files ``shelfie play --save`` writes and the web table's downloads (the
format, and how tolerantly it is read: :mod:`shelfie_env.play.replay_format`). Every
move is checked against the rules and the stored positions
(:mod:`shelfie_env.game.replay_check`); the first that fails stops the replay with its
number and why. ``--review`` adds the review of :mod:`shelfie_env.play.review_text`, with
each player's error rate as a rating (:mod:`shelfie_env.play.error_rating`); a solo game's is
exact (:mod:`shelfie_env.play.solo_review_text`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from shelfie_env.clip import printable
from shelfie_env.game.actions import action_kind
from shelfie_env.game.engine import REROLL, ROLLS_PER_TURN, Game
from shelfie_env.game.errors import InvalidStateError
from shelfie_env.game.render import dice_words, render_text
from shelfie_env.game.replay_check import ReplayError, check_final, check_move
from shelfie_env.play.command_line import fail, use_color
from shelfie_env.play.layout import final_report
from shelfie_env.play.narration import Voice, and_list, notices, turn_ended
from shelfie_env.play.options import replay_file
from shelfie_env.play.replay_format import Move, ReplayFileError, read_move, read_replay, seat_names
from shelfie_env.play.turns import describe


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
        "the three biggest mistakes with the better move (a finished game; a solo game's review is exact: "
        "the score against E*, the expected points lost per decision)",
    )
    parser.add_argument(
        "--review-value",
        type=review_value,
        default="td",
        metavar="VALUE",
        help="whose exact search the review values positions with: td (default), planner, or td:path=MODEL "
        "(a solo game is valued by the solved game)",
    )


def run_replay(args: argparse.Namespace, out: TextIO | None = None, command: str = "replay") -> int:
    """Show a saved game: the players, the starting position, then every move with what it
    caused, the table after each turn (``--every-move``: after each move), and the result.
    Errors are reported as ``shelfie COMMAND: error: ...`` (``play`` for ``shelfie play --replay``)."""
    out = sys.stdout if out is None else out
    try:
        data = read_replay(args.file)
    except ReplayFileError as exc:
        return fail(str(exc), command)
    actions = data.get("actions") or []
    if not isinstance(actions, list):
        return fail("'actions' must be a list", command)
    moves = [read_move(e) for e in actions]
    try:
        text = _show(data, moves, use_color(args, out), bool(getattr(args, "every_move", False)))
    except ReplayError as exc:
        out.write(getattr(exc, "shown", ""))
        out.flush()
        return fail(f"bad replay {args.file}: {exc}; the replay stops here", command)
    except (InvalidStateError, ValueError, TypeError) as exc:
        return fail(f"bad replay {args.file}: {exc}", command)
    if text is None:
        return fail("a replay needs 'states' or 'initial_state'", command)
    out.write(text)
    if getattr(args, "review", False):
        from shelfie_env.play.error_rating import error_ratings
        from shelfie_env.play.review_text import render_review, replay_review

        value = getattr(args, "review_value", "td")
        try:
            review = replay_review(data, moves, value)
        except (ValueError, OSError) as exc:
            return fail(f"cannot review {args.file}: {exc}", command)
        out.write("\n" + render_review(review, error_ratings(review, value)))
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
            lines.append(f"{names[previous.current]} rolled {dice_words(previous.dice)}")
        elif previous is None and move.opening is not None and move.seat in range(len(names)):
            lines.append(f"{names[move.seat]} rolled {dice_words(move.opening)}")
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
    where = f" (web game {printable(data['game_id'])})" if isinstance(data.get("game_id"), str) else ""
    if len(names) == 1:
        return f"Replay{where} of a solo game: {names[0]}."
    return f"Replay{where} of a {len(names)}-player game: {and_list(names)}, in seat order."


def _move_line(move: Move, before: Game | None, after: Game | None, names: Sequence[str]) -> str:
    who = _mover(move, before, names)
    text = f"{who} {describe(move.action)}" if move.action is not None else f"{who}: {move.name}"
    dice = move.roll if move.roll is not None else (after.dice if after is not None else None)
    if dice is not None and move.action is not None and action_kind(move.action) == "reroll":
        text += " -> " + dice_words(dice)
    elif move.rolled is not None:
        text += f" -> new dice: {dice_words(move.rolled)}"
    elif move.roll is not None and after is None:
        text += f" (dice now: {dice_words(move.roll)})"
    return text
