"""The PettingZoo AEC env of the game; its documentation page is :mod:`shelfie_env.shelfie_v0`."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from shelfie_env.envs.common import (
    check_num_players,
    check_reward_mode,
    check_score_reward,
    final_rewards,
    game_dice,
    game_from_state,
    is_action_id,
    observation_box,
    observation_dict,
    option_state,
    score_bound,
    state_dice,
)
from shelfie_env.game.actions import NUM_ACTIONS
from shelfie_env.game.dice import check_dice_mode
from shelfie_env.game.engine import OVER, Game
from shelfie_env.game.reroll_keep import check_reroll_mode, game_action
from shelfie_env.game.scoring import ScoreTable, validate_points
from shelfie_env.observation.features import check_obs_mode, make_encoder


def env(
    num_players: int = 2,
    render_mode: str | None = None,
    reward_mode: str = "rank",
    points: Sequence[Sequence[int]] | None = None,
    dice: str = "stream",
    obs: str = "default",
    reroll: str = "ids",
    score_reward: float = 0.0,
) -> AECEnv:
    """The AEC env wrapped in PettingZoo's ``AssertOutOfBounds`` and ``OrderEnforcing`` wrappers.

    Illegal (but in-range) actions raise ``IllegalActionError`` from the raw env;
    there is deliberately no ``TerminateIllegalWrapper``.
    """
    aec = raw_env(
        num_players=num_players,
        render_mode=render_mode,
        reward_mode=reward_mode,
        points=points,
        dice=dice,
        obs=obs,
        reroll=reroll,
        score_reward=score_reward,
    )
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(aec))


# PettingZoo's wrappers reach the raw env's attributes through ``__getattr__``,
# which runs only after a failed normal lookup (an AttributeError per wrapper
# level). The two subclasses below keep the wrappers' behaviour but read the
# per-step attributes straight from the raw env, which makes the wrapped env
# about as fast as the raw one.
_HOT_ATTRIBUTES = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos")


class AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper``: fast path for int actions, messages naming the action."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < NUM_ACTIONS:
            self.env.step(action)
            return
        raw = self._raw
        agent = raw.agent_selection
        done = raw.terminations[agent] or raw.truncations[agent]
        assert (action is None and done) or is_action_id(action), (
            f"action {action!r} of {agent} is not in the action space: an integer id 0..{NUM_ACTIONS - 1}"
            + ("" if done else " (None is only for terminated agents)")
        )
        self.env.step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self._raw.last(observe)

    def __str__(self) -> str:
        return str(self.env)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` reading the hot attributes of the raw env directly."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def __str__(self) -> str:
        return str(self.env)


def _forward(name: str) -> property:
    def get(self: Any) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    return property(get, doc=f"The raw env's ``{name}`` (after reset).")


for _name in _HOT_ATTRIBUTES:
    setattr(OrderEnforcingWrapper, _name, _forward(_name))


class raw_env(AECEnv, EzPickle):
    """My Shelfie: The Dice Game as a PettingZoo AEC env (see the module docstring)."""

    metadata = {
        "render_modes": ["ansi", "human"],
        "name": "shelfie_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 2,
        render_mode: str | None = None,
        reward_mode: str = "rank",
        points: Sequence[Sequence[int]] | None = None,
        dice: str = "stream",
        obs: str = "default",
        reroll: str = "ids",
        score_reward: float = 0.0,
    ) -> None:
        EzPickle.__init__(self, num_players, render_mode, reward_mode, points, dice, obs, reroll, score_reward)
        super().__init__()
        self.dice = check_dice_mode(dice)
        self.obs = check_obs_mode(obs)
        self.reroll = check_reroll_mode(reroll)
        self.score_reward = check_score_reward(score_reward)
        n = check_num_players(num_players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        self.num_players = n
        self.render_mode = render_mode
        self.reward_mode = check_reward_mode(reward_mode)
        self.table = ScoreTable(validate_points(points)) if points is not None else None
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self._score_bound = score_bound(self.table)
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": observation_box(n, self._score_bound, obs, self.table),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._encoder = make_encoder(n, obs)
        self._zero_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._rng = np.random.default_rng()
        self.game: Game | None = None

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        """Start a new game (or the position ``options["state"]``); ``seed`` seeds the dice."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        state = option_state(options, "shelfie_v0.reset")
        dice = game_dice(self.dice, seed, self._rng)
        if state is not None:
            game = game_from_state(
                state, state_dice(self.dice, state, dice), self.num_players, self._score_bound
            )
        else:
            game = Game.new(self.num_players, points=self.table, rng=dice)
        self.game = game
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        if game.phase == OVER:
            self.agent_selection = self.agents[0]
            self._finish(give_rewards=False)
        else:
            self.agent_selection = self.possible_agents[game.current]

    def step(self, action: int | None) -> None:
        """Apply ``action`` for ``agent_selection`` (``None`` for a terminated agent)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is on turn and must act; None is only for terminated agents")
        game = self.game
        seat = self._seat[agent]
        before = game.score(seat)
        game.step(game_action(self.reroll, game, action))  # IllegalActionError leaves the game unchanged
        self._cumulative_rewards[agent] = 0.0
        if self.score_reward:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self.rewards[agent] = self.score_reward * (game.score(seat) - before)
            if game.phase != OVER:
                self._accumulate_rewards()
        if game.phase == OVER:
            self._finish(give_rewards=True)
        else:
            self.agent_selection = self.possible_agents[game.current]
        if self.render_mode == "human":
            self.render()

    def _finish(self, give_rewards: bool) -> None:
        game = self.game
        scores = game.scores()
        rewards = final_rewards(scores, self.reward_mode) if give_rewards else [0.0] * len(scores)
        shaping = dict(self.rewards) if give_rewards and self.score_reward else {}
        for a, seat in self._seat.items():
            self.rewards[a] = rewards[seat] + shaping.get(a, 0.0)
            self.terminations[a] = True
            self.infos[a] = {"score": scores[seat], "scores": list(scores)}
        self._accumulate_rewards()

    # -------------------------------------------------------- observation
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 mask}`` for ``agent``."""
        return observation_dict(self._encoder, self.game, self._seat[agent], self.reroll)

    def state_dict(self) -> dict[str, Any]:
        """The current state dict (JSON-compatible, docs/rules.md); ``reset(options={"state": ...})`` takes it back."""
        if self.game is None:
            raise RuntimeError("call reset() before state_dict()")
        return self.game.to_dict()

    # ------------------------------------------------------------ render
    def render(self) -> str | None:
        """Text of the table ("ansi") or print it ("human")."""
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass 'ansi' or 'human'", stacklevel=2)
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        from shelfie_env.game.render import render_text

        if self.render_mode == "ansi":
            return render_text(self.game)
        color = bool(getattr(sys.stdout, "isatty", lambda: False)())
        print(render_text(self.game, color=color), end="\n\n")
        return None

    def close(self) -> None:
        """Nothing to release (text rendering only)."""
