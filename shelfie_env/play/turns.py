"""The turns played so far, kept so the terminal game can show them again: a compact
summary of the others' turns before your prompt, and every move of the recent turns for
the ``last`` command."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shelfie_env.game.actions import FACE_NAMES, action_kind, action_name
from shelfie_env.game.engine import REROLL, ROLLS_PER_TURN, Game
from shelfie_env.play.narration import and_list, turn_ended

TURN_OVER = "turn over: "


def dice_words(dice: Sequence[int]) -> str:
    """``plant game cat JOKER`` style list of faces."""
    return " ".join(FACE_NAMES[d] for d in dice)


def describe(action: int) -> str:
    """Past-tense log text of an action, e.g. ``"circled cat #3 +joker"``."""
    kind = action_kind(action)
    name = action_name(action)
    if kind == "stop":
        return "kept the dice"
    if kind == "reroll":
        return "rerolled" + name[len("reroll") :]
    if kind == "circle":
        return "circled" + name[len("circle") :]
    if kind == "end":
        return "ended the turn"
    return "crossed out" + name[len("cross out") :]


@dataclass
class Move:
    """One move of a turn: the action, the dice a reroll brought, what it caused (in words)."""

    action: int
    dice: list[int] | None
    caused: list[str]


@dataclass
class Turn:
    """One seat's turn: the dice it opened with (when seen) and its moves."""

    seat: int
    opening: list[int] | None
    moves: list[Move] = field(default_factory=list)
    done: bool = False


class TurnLog:
    """Every turn of the game, in order, as it is played."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []

    def record(self, before: Game, action: int, after: Game, caused: list[str]) -> None:
        """Add the move ``action`` that took ``before`` to ``after``."""
        last = self.turns[-1] if self.turns else None
        if last is None or last.done or last.seat != before.current:
            fresh = before.phase == REROLL and before.rolls_left == ROLLS_PER_TURN
            last = Turn(before.current, list(before.dice) if fresh else None)
            self.turns.append(last)
        dice = list(after.dice) if action_kind(action) == "reroll" else None
        last.moves.append(Move(action, dice, list(caused)))
        last.done = after.over or turn_ended(before, after, action)

    def since(self, count: int) -> list[Turn]:
        """The turns after the first ``count`` ones."""
        return self.turns[count:]

    def recent(self, n: int) -> list[Turn]:
        """The last ``n`` turns (the one under way included)."""
        return self.turns[-n:] if n > 0 else []


def summary(turn: Turn, who: Callable[[int], str]) -> str:
    """One turn in one sentence (plus what it caused), e.g. ``td (player 2) rolled ...,
    rerolled 2 -> ..., circled cat #1 and book #2 +joker.``"""
    parts: list[str] = []
    if turn.opening is not None:
        parts.append("rolled " + dice_words(turn.opening))
    circles: list[str] = []
    told: list[str] = []

    def flush() -> None:
        if circles:
            parts.append("circled " + and_list(circles))
            circles.clear()

    for move in turn.moves:
        kind = action_kind(move.action)
        if kind == "circle":
            circles.append(action_name(move.action)[len("circle ") :])
        else:
            flush()
            if kind == "reroll":
                n = bin(move.action).count("1")
                parts.append(f"rerolled {n} {'die' if n == 1 else 'dice'} -> {dice_words(move.dice or [])}")
            elif kind == "cross":
                parts.append(describe(move.action))
        told += [t for t in move.caused if not t.startswith(TURN_OVER)]
    flush()
    if not turn.done:
        parts.append("(turn under way)")
    text = f"{who(turn.seat)} " + (", ".join(parts) if parts else "made no move") + "."
    return " ".join([text, *told])


def move_lines(turn: Turn, who: Callable[[int], str]) -> list[str]:
    """Every move of ``turn`` as the game logged it: the roll, each decision (a reroll with
    its new dice) and, indented under it, what it caused."""
    lines = []
    if turn.opening is not None:
        lines.append(f"{who(turn.seat)} rolled {dice_words(turn.opening)}")
    for move in turn.moves:
        line = f"{who(turn.seat)} {describe(move.action)}"
        if move.dice is not None:
            line += f" -> {dice_words(move.dice)}"
        lines.append(line)
        lines += ["  " + t for t in move.caused]
    return lines
