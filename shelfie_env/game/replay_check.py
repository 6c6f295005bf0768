"""Checking a replay move by move: each move must be legal where it is played and, when the
file stores the position after it, must lead to exactly that position.

The dice a move rolls cannot be re-simulated, so they are taken from the position stored
after it (or the dice its entry gives): a reroll must keep the dice it did not reroll, and
everything else (shelves, scores, turn, phase, spent dice) must follow from the rules.
"""

from __future__ import annotations

from collections.abc import Sequence

from shelfie_env.game.actions import FACE_NAMES, action_kind, action_name
from shelfie_env.game.engine import Game


class ReplayError(ValueError):
    """A move the rules or the stored positions refute; the message names the move.

    ``shown`` is the replay's text up to that move, when it was being shown.
    """

    shown: str = ""


class _DiceUnknown(Exception):
    """The move rolls dice and nothing in the file says what they showed."""


class _GivenDice:
    """A dice source that hands out the faces which turn ``kept`` into ``target``."""

    def __init__(self, target: Sequence[int] | None, kept: Sequence[int]) -> None:
        self.target = None if target is None else sorted(target)
        self.kept = list(kept)

    def integers(self, low: int, high: int, size: int) -> list[int]:
        if self.target is None:
            raise _DiceUnknown
        rest = list(self.target)
        for face in self.kept:
            if face not in rest:
                raise ReplayError(
                    f"the dice stored after it ({_words(self.target)}) do not hold the dice it kept "
                    f"({_words(self.kept)})"
                )
            rest.remove(face)
        if len(rest) != size:
            raise ReplayError(f"the dice stored after it ({_words(self.target)}) are not six dice")
        return rest


def _words(faces: Sequence[int]) -> str:
    return " ".join(FACE_NAMES[f] for f in faces) or "none"


def _kept(game: Game, action: int) -> list[int]:
    """The dice a move keeps when it rolls (a reroll keeps the unmarked ones, a new turn none)."""
    if action_kind(action) == "reroll":
        return [d for i, d in enumerate(game.dice) if not action >> i & 1]
    return []


def follow(before: Game, action: int, dice_after: Sequence[int] | None) -> Game | None:
    """The position after ``action``, rolling ``dice_after``; ``None`` when it rolls and
    ``dice_after`` is unknown. Raises :class:`ReplayError` (without the move's number) when
    ``action`` is illegal or the dice cannot follow from it."""
    if action not in before.legal_actions():
        raise ReplayError(f"it is not legal here: {before.why_illegal(action)}")
    game = before.clone(rng=_GivenDice(dice_after, _kept(before, action)))
    try:
        game.step(action)
    except _DiceUnknown:
        return None
    return game


def differences(expected: Game, stored: Game) -> list[str]:
    """The state-dict fields where ``stored`` differs from ``expected``."""
    a, b = expected.to_dict(), stored.to_dict()
    return [key for key in a if a[key] != b.get(key)]


def check_move(
    number: int,
    who: str,
    before: Game,
    action: int | None,
    name: str,
    seat: int | None,
    stored: Game | None,
    dice: Sequence[int] | None,
) -> Game | None:
    """Check move ``number`` (1-based) played from ``before``; return the position after it
    (``stored`` when the file has it, else the one the rules give, or ``None`` if unknown)."""
    label = f"move {number} ({who}: {action_name(action) if action is not None else name})"
    if action is None:
        if stored is None:
            return None  # an entry read only as words: nothing to check it against
        raise ReplayError(f"{label} is not an action id 0..119")
    if seat is not None and seat != before.current:
        raise ReplayError(f"{label} is by seat {seat + 1}, but seat {before.current + 1} is on turn")
    try:
        result = follow(before, action, stored.dice if stored is not None else dice)
    except ReplayError as exc:
        raise ReplayError(f"{label}: {exc}") from None
    if stored is None:
        return result
    if result is not None:
        wrong = differences(result, stored)
        if wrong:
            raise ReplayError(
                f"{label}: the position stored after it does not follow from the move "
                f"(it differs in {', '.join(wrong)})"
            )
    return stored


def check_final(final: Game, last: Game, where: str) -> None:
    """``final_state`` must be the position reached by the last move."""
    wrong = differences(last, final)
    if wrong:
        raise ReplayError(f"final_state is not the position after {where} (it differs in {', '.join(wrong)})")


__all__ = ["ReplayError", "check_final", "check_move", "differences", "follow"]
