"""The value functions luck is measured with (:mod:`.luck`), each fixed before an evaluation.

* ``td`` (the default): the shipped ``td`` after-state network of the table size
  (or any ``td`` model file, ``td:path=...``); game-ending placements are valued
  by their exact rank reward.
* ``planner``: the planner's hand-written evaluation, brought to rank-reward
  units (its win-chance value divided by its ``margin_scale``, clipped to −1..1).

Both value every placement the turn can end with and take the best one per
final dice multiset, as the bots' own search does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shelfie_env.bots.learned.afterstate import AfterstateNet
from shelfie_env.bots.learned.value import LearnedContext, load_value_bot, shipped_td_model
from shelfie_env.bots.planner.evaluation import Context, Weights
from shelfie_env.bots.planner.search import placement_values
from shelfie_env.game.engine import Game

VALUE_FUNCTIONS = ("td", "planner")
"""Names :func:`make_value` accepts (``td:path=MODEL`` names a model file)."""


class TDValue:
    """Placement values of a ``td`` after-state network (exact rank reward where the game ends)."""

    def __init__(self, num_players: int, path: str | Path | None = None) -> None:
        bot = load_value_bot(path if path is not None else shipped_td_model(num_players), num_players)
        layers = bot.net.layers
        self.net = AfterstateNet([(w, b) for w, b in layers], num_players, margin_coef=0.0)
        self.name = "td" if path is None else f"td:path={Path(path).name}"
        self.num_players = num_players

    def placement_values(self, game: Game) -> np.ndarray:
        return placement_values(LearnedContext(game, self.net.values_of(game)))


class PlannerValue:
    """Placement values of the planner's evaluation, in rank-reward units."""

    name = "planner"

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or Weights(deep=0, solo_deep=0)

    def placement_values(self, game: Game) -> np.ndarray:
        v0 = placement_values(Context(game, self.weights))
        return np.clip(v0 / self.weights.margin_scale, -1.0, 1.0)


def make_value(spec: str, num_players: int) -> TDValue | PlannerValue:
    """The value function named ``spec`` (``td``, ``td:path=MODEL`` or ``planner``) for ``num_players``."""
    if num_players < 2:
        raise ValueError("luck is measured on the rank reward, which needs 2-4 players")
    name, _, rest = spec.partition(":")
    if name == "planner" and not rest:
        return PlannerValue()
    if name == "td":
        if not rest:
            return TDValue(num_players)
        key, _, path = rest.partition("=")
        if key == "path" and path:
            return TDValue(num_players, path)
    raise ValueError(f"unknown luck value function {spec!r}; use td, td:path=MODEL or planner")
