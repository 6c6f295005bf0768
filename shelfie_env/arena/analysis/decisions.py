"""What a review says about one decision: the dice and the move in words, and its record against the best move.

Shared by the 2-4 player review (:mod:`.review`) and the solo one (:mod:`.solo_review`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shelfie_env.game.actions import FACE_NAMES, action_kind, action_name
from shelfie_env.game.engine import Game


def words(dice: Sequence[int]) -> list[str]:
    """Face names of ``dice``."""
    return [FACE_NAMES[d] for d in dice]


def move_words(game: Game, action: int) -> str:
    """What ``action`` does in ``game``, in words that do not need the dice positions:
    ``reroll book cat (keep plant plant game joker)``; other actions by their name."""
    kind = action_kind(action)
    if kind == "reroll":
        thrown = [d for i, d in enumerate(game.dice) if action >> i & 1]
        kept = [d for i, d in enumerate(game.dice) if not action >> i & 1]
        keep = f" (keep {' '.join(words(kept))})" if kept else ""
        return f"reroll {' '.join(words(thrown))}{keep}"
    if kind == "stop":
        return "stop rolling"
    return action_name(action)


def decision_row(j: int, game: Game, action: int, values: dict[int, float], best: int, tie: float = 1e-9) -> dict[str, Any]:
    """A review's record of move ``j``: what was played and the best action (a tie within ``tie`` counts as
    the move played), with their values."""
    regret = max(0.0, values[best] - values[action])
    if regret <= tie:
        regret, best = 0.0, action
    return {
        "move": j + 1,
        "seat": game.current,
        "round": game.round + 1,
        "phase": game.phase_name,
        "rolls_left": game.rolls_left,
        "dice": words([d for d, used in zip(game.dice, game.spent) if not used]),
        "choices": len(values),
        "action": action,
        "played": move_words(game, action),
        "value": values[action],
        "best": best,
        "better": move_words(game, best),
        "best_value": values[best],
        "regret": regret,
    }


__all__ = ["decision_row", "move_words", "words"]
