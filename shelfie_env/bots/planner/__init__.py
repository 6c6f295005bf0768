"""The planner: exact expectimax over the dice with a hand-built evaluation.

* :mod:`.dice` — multiset outcome probabilities and keep/transition tables.
* :mod:`.placements` — every set of cells one turn can circle, and feasibility.
* :mod:`.lines` — expected line scores from per-cell probabilities.
* :mod:`.evaluation` — the position evaluation (documented there).
* :mod:`.last_turn` — exact value of a rival's final turn.
* :mod:`.search` — values of every legal action; :class:`PlannerBot` plays the best.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shelfie_env.bots.planner.evaluation import Context, Weights
from shelfie_env.bots.planner.search import action_values, best_action, set_values, turn_context
from shelfie_env.game.engine import Game


class PlannerBot:
    """Plays the legal action of highest expected value (deterministic)."""

    name = "planner"

    @staticmethod
    def option_types() -> dict[str, Any]:
        """The bot-spec options (``planner:threat=0.4``): the :class:`Weights` fields and their types."""
        import typing

        return typing.get_type_hints(Weights)

    def __init__(self, weights: Weights | None = None, **overrides: Any) -> None:
        base = weights or Weights()
        if overrides:
            unknown = set(overrides) - set(Weights.__dataclass_fields__)
            if unknown:
                raise ValueError(f"unknown planner weight(s): {', '.join(sorted(unknown))}")
            fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()}
            base = Weights(**{**base.__dict__, **fixed})
        self.weights = base
        self._ctx: Context | None = None  # the current turn's context, reused between decisions

    def act_game(self, game: Game) -> int:
        legal = game.legal_actions()
        if not legal:
            raise ValueError("no legal action: the game is over")
        values = self.action_values_game(game)
        action = best_action(values)
        if action not in legal:  # defensive: the search only values legal actions
            raise AssertionError(f"planner chose illegal action {action}")
        return action

    def action_values_game(self, game: Game) -> dict[int, float]:
        """The planner's value of every legal action in a live game (what :meth:`act_game` maximises)."""
        self._ctx = turn_context(game, self.weights, self._ctx)
        return action_values(game, self.weights, self._ctx)

    def set_values_game(self, game: Game) -> np.ndarray:
        """The evaluation of every placement of this turn (:func:`.search.set_values`), in a live game."""
        self._ctx = turn_context(game, self.weights, self._ctx)
        return set_values(self._ctx)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


__all__ = ["PlannerBot", "Weights", "action_values", "best_action"]
