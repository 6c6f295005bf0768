"""The value functions luck is measured with (:mod:`.luck`), each fixed before an evaluation.

* ``td``: the shipped ``td`` after-state network of the table size
  (or any ``td`` model file, ``td:path=...``); game-ending placements are valued
  by their exact rank reward.
* ``planner``: the planner's hand-written evaluation, brought to rank-reward
  units (its win-chance value divided by its ``margin_scale``, clipped to −1..1).
* ``td+planner`` (the default, :data:`DEFAULT_LUCK`): each roll's luck is the mean
  of the luck the two see (:class:`~shelfie_env.arena.luck.MixedValue`).

Both value every placement the turn can end with and take the best one per
final dice multiset, as the bots' own search does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shelfie_env.arena.luck import MixedValue, turn_tables
from shelfie_env.bots.learned.afterstate import SCORE_SCALE, AfterstateNet
from shelfie_env.bots.learned.value import LearnedContext, load_value_bot, shipped_td_model, stay_value
from shelfie_env.bots.planner.evaluation import Context, Weights
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS
from shelfie_env.bots.planner.search import placement_values
from shelfie_env.game.engine import Game
from shelfie_env.game.scoring import FULL

DEFAULT_LUCK = "td+planner"
"""The value function luck is measured with unless another is named: the mean of the luck the
shipped ``td`` network and the planner's evaluation see (their errors differ, so their mean is
sharper than either: docs/evaluation.md, "Measured")."""

VALUE_FUNCTIONS = ("td", "planner", "td+planner")
"""Names :func:`make_value` accepts (``td:path=MODEL`` names a model file; ``A+B`` mixes two)."""


class TDValue:
    """Placement values of a ``td`` after-state network, exact where the game's end is known.

    Placements that end the game get their exact rank reward. At two players, a
    placement that triggers the end leaves the rival exactly one last turn, whose
    outcome is also computed exactly (the rival plays its turn for the best rank
    reward, exactly over its dice) instead of being read from the network.
    """

    def __init__(self, num_players: int, path: str | Path | None = None) -> None:
        bot = load_value_bot(path if path is not None else shipped_td_model(num_players), num_players)
        layers = bot.net.layers
        self.net = AfterstateNet([(w, b) for w, b in layers], num_players, margin_coef=0.0)
        self.name = "td" if path is None else f"td:path={Path(path).name}"
        self.num_players = num_players
        self._last_turns: dict[tuple[int, int, int, tuple[tuple[int, ...], ...]], np.ndarray] = {}

    def placement_values(self, game: Game) -> np.ndarray:
        return placement_values(self.context(game))

    def context(self, game: Game) -> LearnedContext:
        """The search context of the turn of ``game`` (build it at the turn's first decision):
        what :func:`~shelfie_env.bots.planner.search.action_values` values every action with."""
        ((values, block),) = self.net.turns_many([game])
        if game.num_players == 2:
            self._exact_last_turns(game, values, block.features, block.over, block.index)
        return LearnedContext(game, values, stay_value(self.net, game))

    def to_rank(self, value: float) -> float:
        """An action value of :meth:`context`'s search in rank-reward units (already are)."""
        return float(value)

    def _exact_last_turns(
        self, game: Game, values: np.ndarray, feats: np.ndarray, over: np.ndarray, index: np.ndarray
    ) -> None:
        """Replace the network's value of every placement that leaves the rival one last turn (2 players)."""
        last = (feats[:, 62 * 2] > 0.5) & ~over
        for i in np.flatnonzero(last):
            circled = int(feats[i, 50:75] @ _POW25)
            crossed = int(feats[i, 75:100] @ _POW25)
            mine = int(round(float(feats[i, 120]) * SCORE_SCALE))
            values[index[i]] = -self._rival_last_turn(game, circled, crossed, mine)

    def _rival_last_turn(self, game: Game, circled: int, crossed: int, score: int) -> float:
        """The rival's expected rank reward from its last turn (shelf ``circled``/``crossed``) against ``score``."""
        key = (circled, crossed, score, game.table.points)
        cached = self._last_turns.get(key)
        if cached is None:
            best = best_final_scores(game, circled, crossed)
            cached = np.array(turn_tables(np.sign(best - score).astype(np.float64)).fresh)
            self._last_turns[key] = cached
        return float(cached)


_POW25 = (1 << np.arange(25)).astype(np.float64)


def best_final_scores(game: Game, circled: int, crossed: int) -> np.ndarray:
    """``(462,)``: the best score a shelf ``circled``/``crossed`` reaches with each final dice multiset
    (the best circle set it can make, or its score unchanged when it must cross out a row)."""
    table = game.table
    now = table.score(circled)
    free = FULL & ~(circled | crossed)
    sel = np.flatnonzero((SET_MASKS & ~free) == 0)
    if sel.size == 0:
        return np.full(FEASIBLE.shape[0], now, dtype=np.int64)
    scores = np.array([table.score(circled | int(m)) for m in SET_MASKS[sel]], dtype=np.int64)
    masked = np.where(FEASIBLE[:, sel], scores[None, :], -1)
    best = masked.max(axis=1)
    return np.where(best < 0, now, best)


class PlannerValue:
    """Placement values of the planner's evaluation, in rank-reward units."""

    name = "planner"

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or Weights(deep=0, solo_deep=0)

    def placement_values(self, game: Game) -> np.ndarray:
        v0 = placement_values(self.context(game))
        return np.clip(v0 / self.weights.margin_scale, -1.0, 1.0)

    def context(self, game: Game) -> Context:
        """The search context of the turn of ``game`` (its values are in the planner's units: :meth:`to_rank`)."""
        return Context(game, self.weights)

    def to_rank(self, value: float) -> float:
        """An action value of :meth:`context`'s search in rank-reward units (as :meth:`placement_values`)."""
        return float(np.clip(value / self.weights.margin_scale, -1.0, 1.0))


def make_value(spec: str, num_players: int) -> TDValue | PlannerValue | MixedValue:
    """The value function named ``spec`` for ``num_players``: ``td``, ``td:path=MODEL``, ``planner``,
    or several joined by ``+`` (``td+planner``: each roll's luck is the mean of theirs)."""
    if num_players < 2:
        raise ValueError("luck is measured on the rank reward, which needs 2-4 players")
    if "+" in spec:
        parts = [p.strip() for p in spec.split("+")]
        if len(set(parts)) != len(parts) or any("+" in p or not p for p in parts):
            raise ValueError(
                f"unknown luck value function {spec!r}; use td, planner, td:path=MODEL or td+planner"
            )
        return MixedValue([(1.0, make_value(p, num_players)) for p in parts])  # type: ignore[misc]
    name, _, rest = spec.partition(":")
    if name == "planner" and not rest:
        return PlannerValue()
    if name == "td":
        if not rest:
            return TDValue(num_players)
        key, _, path = rest.partition("=")
        if key == "path" and path:
            return TDValue(num_players, path)
    raise ValueError(f"unknown luck value function {spec!r}; use td, planner, td:path=MODEL or td+planner")
