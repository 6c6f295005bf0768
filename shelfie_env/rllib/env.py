"""``ShelfieMultiAgentEnv``: the game as a turn-based RLlib ``MultiAgentEnv`` for 1-4 players.

Agents are ``player_0`` .. ``player_{n-1}`` (the seats). Only the agent on turn
gets an observation, the same ``{"observation", "action_mask"}`` dict as
``shelfie_v0`` (docs/environment.md); it acts with the same action ids. When the
game ends every agent gets its final reward from its own point of view
(``reward_mode`` as in ``shelfie_v0``: rank by default) and
``terminateds["__all__"]`` is set. An illegal action raises
:class:`~shelfie_env.game.errors.IllegalActionError` and leaves the game as it
was. ``get_action_space(agent).sample()`` draws a legal action of the agent on
turn, so RLlib's environment pre-check runs with checking on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from shelfie_env.envs.common import (
    check_num_players,
    check_reward_mode,
    check_score_reward,
    final_rewards,
    game_from_state,
    observation_box,
    observation_dict,
    score_bound,
)
from shelfie_env.game.actions import NUM_ACTIONS
from shelfie_env.game.engine import OVER, Game
from shelfie_env.game.reroll_keep import check_reroll_mode, game_action, game_mask
from shelfie_env.game.scoring import ScoreTable, validate_points
from shelfie_env.observation.features import check_obs_mode, make_encoder

_OPTION_KEYS = {"state"}


class LegalActions(spaces.Discrete):
    """``Discrete(120)`` whose plain ``sample()`` draws a legal action of the game's mover.

    ``sample(mask=...)``, ``contains`` and seeding are Gymnasium's; with no game
    (before ``reset``, after the end) it samples like a plain ``Discrete``.
    """

    def __init__(self, n: int, env: ShelfieMultiAgentEnv | None = None) -> None:
        super().__init__(n)
        self._env = env

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        game = self._env.game if self._env is not None else None
        if mask is None and probability is None and game is not None and game.phase != OVER:
            legal = np.flatnonzero(game_mask(self._env.reroll, game))
            return np.int64(legal[int(self.np_random.integers(len(legal)))])
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_env": None}

    def __repr__(self) -> str:
        return f"LegalActions({self.n})"


class ShelfieMultiAgentEnv(MultiAgentEnv):
    """My Shelfie: The Dice Game for RLlib (see the module docstring).

    ``config`` (RLlib's ``env_config``) takes ``num_players`` (1-4, default 2),
    ``reward_mode`` (``rank``, ``score`` or ``margin``), ``points`` (a 5x5
    points table), ``obs`` (``default`` or ``features``), ``reroll`` (``ids`` or
    ``keep``) and ``score_reward`` (reward per point of own score gained; docs/environment.md).
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        known = ("num_players", "reward_mode", "points", "obs", "reroll", "score_reward")
        unknown = sorted(set(config) - set(known))
        if unknown:
            raise ValueError(f"unknown env_config key(s) {unknown}; known: {', '.join(known)}")
        self.score_reward = check_score_reward(config.get("score_reward", 0.0))
        self.obs = check_obs_mode(config.get("obs", "default"))
        self.reroll = check_reroll_mode(config.get("reroll", "ids"))
        n = self.num_players = check_num_players(config.get("num_players", 2))
        self.reward_mode = check_reward_mode(config.get("reward_mode", "rank"))
        points: Sequence[Sequence[int]] | None = config.get("points")
        self.table = ScoreTable(validate_points(points)) if points is not None else None
        self._bound = score_bound(self.table)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": observation_box(n, self._bound, self.obs, self.table),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: LegalActions(NUM_ACTIONS, self) for a in self.possible_agents}
        self._encoder = make_encoder(n, self.obs)
        self._rng = np.random.default_rng()
        self.game: Game | None = None

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new game (or the position ``options["state"]``); ``seed`` seeds the dice."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            for i, space in enumerate(self.action_spaces.values()):
                space.seed(seed + i)
        options = dict(options or {})
        unknown = sorted(set(options) - _OPTION_KEYS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; known: ['state']")
        state = options.get("state")
        if state is not None:
            game = game_from_state(state, self._rng, self.num_players, self._bound)
            if game.phase == OVER:
                raise ValueError("options['state'] is a finished game; there is nothing to play")
        else:
            game = Game.new(self.num_players, points=self.table, rng=self._rng)
        self.game = game
        self.agents = list(self.possible_agents)
        agent = self.possible_agents[game.current]
        return {agent: self._observe(game.current)}, {agent: {}}

    def step(
        self, action_dict: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        """Apply the action of the agent on turn; the next mover observes, or the game ends."""
        game = self.game
        if game is None or game.phase == OVER:
            raise RuntimeError("step() after the game ended; call reset()")
        agent = self.possible_agents[game.current]
        if set(action_dict) != {agent}:
            raise ValueError(
                f"{agent} is on turn: step() takes {{{agent!r}: action}}, got {sorted(action_dict)}"
            )
        before = game.score(self._seat[agent])
        game.step(game_action(self.reroll, game, action_dict[agent]))  # IllegalActionError: unchanged
        shaping = self.score_reward * (game.score(self._seat[agent]) - before)
        if game.phase == OVER:
            scores = game.scores()
            rewards = final_rewards(scores, self.reward_mode)
            rewards[self._seat[agent]] += shaping
            done = {a: True for a in self.possible_agents}
            infos = {a: {"score": scores[s], "scores": list(scores)} for a, s in self._seat.items()}
            obs = {a: self._observe(s) for a, s in self._seat.items()}  # the final position, all-zero masks
            self.agents = []
            return (
                obs,
                {a: float(rewards[s]) for a, s in self._seat.items()},
                {**done, "__all__": True},
                {**dict.fromkeys(self.possible_agents, False), "__all__": False},
                infos,
            )
        nxt = self.possible_agents[game.current]
        # RLlib wants a reward for every agent that acts or observes; 0 until the end but the shaping.
        return (
            {nxt: self._observe(game.current)},
            {nxt: 0.0, agent: float(shaping)},
            {"__all__": False},
            {"__all__": False},
            {},
        )

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        return observation_dict(self._encoder, self.game, seat, self.reroll)

    def state_dict(self) -> dict[str, Any]:
        """The current state dict (``reset(options={"state": ...})`` takes it back)."""
        if self.game is None:
            raise RuntimeError("call reset() before state_dict()")
        return self.game.to_dict()
