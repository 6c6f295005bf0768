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

from shelfie_env.bots.planner.evaluation import Context, ContextCache, Weights
from shelfie_env.bots.planner.search import action_values, best_action, set_values
from shelfie_env.game.engine import Game


class PlannerBot:
    """Plays the legal action of highest expected value (deterministic).

    Its answer is a function of the position: the evaluation context of each position is kept
    (:class:`~.evaluation.ContextCache`) and reused only for that same position.
    """

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
        self._contexts: ContextCache[Context] = ContextCache()
        self._ctx: Context | None = None  # the last decision's context

    def act_game(self, game: Game) -> int:
        legal = game.legal_actions()
        if not legal:
            raise ValueError("no legal action: the game is over")
        values = self.action_values_game(game)
        action = best_action(values)
        if action not in legal:  # defensive: the search only values legal actions
            raise AssertionError(f"planner chose illegal action {action}")
        return action

    def context(self, game: Game) -> Context:
        """The evaluation context of ``game``'s position (built once per position)."""
        self._ctx = self._contexts.get(game, lambda g: Context(g, self.weights))
        return self._ctx

    def action_values_game(self, game: Game) -> dict[int, float]:
        """The planner's value of every legal action in a live game (what :meth:`act_game` maximises)."""
        return action_values(game, self.weights, self.context(game))

    def set_values_game(self, game: Game) -> np.ndarray:
        """The evaluation of every placement of this turn from this position (:func:`.search.set_values`),
        in a live game."""
        return set_values(self.context(game))

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


__all__ = ["PlannerBot", "Weights", "action_values", "best_action"]
