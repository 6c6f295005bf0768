"""Bots across the two frameworks.

* :class:`MCTSBot` (``openspiel-mcts`` in ``shelfie_env.bots.make``): OpenSpiel's
  ``MCTSBot`` (UCT, max^n over 1-4 players, chance nodes sampled) playing as one
  of our bots, with rollouts played in our engine by ``random`` or ``greedy``.
* :class:`SpielBot`: any of our bots as a ``pyspiel.Bot`` for ``evaluate_bots``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts

from shelfie_env.bots import Bot, act_on_game
from shelfie_env.bots.spec import build_bot
from shelfie_env.envs.common import final_rewards
from shelfie_env.game.engine import Game
from shelfie_env.game.scoring import FULL
from shelfie_env.openspiel.convert import engine_game, from_engine, load
from shelfie_env.openspiel.game import ShelfieGame, ShelfieState

ROLLOUTS = ("random", "greedy")


class EngineRolloutEvaluator(mcts.Evaluator):
    """Leaf values from games played out in our engine (a copy), dice and choices from ``rng``.

    ``policy`` ``"random"`` plays uniformly random legal actions (OpenSpiel's
    ``RandomRolloutEvaluator``, without a pyspiel call per move); ``"greedy"``
    plays our ``greedy`` bot for every seat. Values are the game's returns.
    """

    def __init__(
        self, policy: str = "random", n_rollouts: int = 1, rng: np.random.Generator | None = None
    ) -> None:
        if policy not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {ROLLOUTS}, got {policy!r}")
        if isinstance(n_rollouts, bool) or not isinstance(n_rollouts, int) or n_rollouts < 1:
            raise ValueError(f"rollouts must be a positive integer, got {n_rollouts!r}")
        self.policy = policy
        self.n_rollouts = n_rollouts
        self.rng = rng if rng is not None else np.random.default_rng()
        self._greedy: Bot | None = build_bot("greedy") if policy == "greedy" else None

    def evaluate(self, state: ShelfieState) -> np.ndarray:
        reward = state.core.spec.reward
        total = np.zeros(state.core.spec.players)
        for _ in range(self.n_rollouts):
            game = engine_game(state, self.rng)
            self._play_out(game)
            total += final_rewards(game.scores(), reward)
        return total / self.n_rollouts

    def _play_out(self, game: Game) -> None:
        rng, greedy = self.rng, self._greedy
        while not game.over:
            if greedy is None:
                legal = game.legal_actions()
                game.step(legal[int(rng.random() * len(legal))])
            else:
                game.step(act_on_game(greedy, game))

    def prior(self, state: ShelfieState) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class MCTSBot:
    """OpenSpiel's MCTS as one of our bots: ``act(state dict)`` / ``act_game(game)`` -> action id.

    ``simulations`` per decision, UCT constant ``uct_c`` (scaled by the best
    score in solo, where the value is the final score), ``rollouts`` playouts per
    leaf by ``rollout`` (``random`` or ``greedy``). Seeded by ``seed``; the arena
    reseeds ``rng`` per game.
    """

    name = "openspiel-mcts"

    def __init__(
        self,
        simulations: int = 100,
        rollout: str = "random",
        rollouts: int = 1,
        uct_c: float = 2.0,
        solve: bool = True,
        seed: int | None = None,
    ) -> None:
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"simulations must be a positive integer, got {simulations!r}")
        if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)) or not uct_c >= 0:
            raise ValueError(f"uct_c must be a non-negative number, got {uct_c!r}")
        self.simulations = simulations
        self.uct_c = float(uct_c)
        self.solve = bool(solve)
        self.rng = np.random.default_rng(seed)
        self.evaluator = EngineRolloutEvaluator(rollout, rollouts, self.rng)
        self._searchers: dict[tuple, tuple[ShelfieGame, mcts.MCTSBot]] = {}

    def _searcher(self, game: Game) -> tuple[ShelfieGame, mcts.MCTSBot]:
        key = (game.num_players, game.table.points)
        found = self._searchers.get(key)
        if found is None:
            solo = game.num_players == 1
            spiel = load(game.num_players, game.table.points, "score" if solo else "rank")
            uct_c = self.uct_c * (game.table.score(FULL) if solo else 1.0)
            searcher = mcts.MCTSBot(spiel, uct_c, self.simulations, self.evaluator, solve=self.solve)
            found = self._searchers[key] = (spiel, searcher)
        return found

    def act_game(self, game: Game) -> int:
        """The most visited root action after ``simulations`` searches from ``game`` (not changed)."""
        if game.over:
            raise ValueError("no legal action: the game is over")
        legal = game.legal_actions()
        if len(legal) == 1:
            return legal[0]
        spiel, searcher = self._searcher(game)
        self.evaluator.rng = self.rng
        searcher._random_state = np.random.RandomState(int(self.rng.integers(2**32)))
        return int(searcher.step(from_engine(spiel, game)))

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


class SpielBot(pyspiel.Bot):
    """One of our bots (a spec such as ``"planner"`` or a bot object) as a ``pyspiel.Bot``."""

    def __init__(self, bot: str | Bot, player_id: int | None = None, seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        self.rng = np.random.default_rng(seed)
        self.bot = build_bot(bot) if isinstance(bot, str) else bot
        if not callable(getattr(self.bot, "act", None)) and not callable(getattr(self.bot, "act_game", None)):
            raise TypeError(f"{bot!r} is not a bot: it has no act(state) method")
        self._player_id = player_id

    def player_id(self) -> int:
        return -1 if self._player_id is None else self._player_id

    def restart_at(self, state: pyspiel.State) -> None:
        pass

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        pass

    def provides_policy(self) -> bool:
        return False

    def step(self, state: ShelfieState) -> int:
        if not isinstance(state, ShelfieState):
            raise TypeError(f"SpielBot plays python_shelfie states, got {type(state).__name__}")
        if state.is_chance_node() or state.is_terminal():
            raise ValueError("a bot is asked only at decision nodes")
        return act_on_game(self.bot, engine_game(state, self.rng))
