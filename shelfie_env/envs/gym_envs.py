"""Single-agent Gymnasium envs: ``shelfie/Solo-v0`` and ``shelfie/Versus-v0``.

Both observe the flat float32 vector of :mod:`shelfie_env.observation.vector` from the
learner's seat, take ``Discrete(120)`` actions (docs/rules.md) and expose the legal
actions three ways: ``env.action_masks()`` (bool, the method sb3-contrib's
``MaskablePPO`` looks for), ``info["action_mask"]`` (int8) and
``env.action_space.sample()``, which draws a *legal* action for the current
position when no mask is passed (with ``mask=`` it is Gymnasium's plain
``Discrete.sample``).

An illegal action raises :class:`~shelfie_env.game.errors.IllegalActionError` (a
``ValueError`` that names the action and the reason) and leaves the game as it
was; actions are never remapped. ``reset(seed=s)`` seeds the dice, the seat
draw, the opponents built from names and the action space's sampler.

* **Solo-v0** — one player, one solo game per episode. The reward of a step is
  the change of the player's score as the scoring rule values the shelf right
  after the step, so the undiscounted return of an episode is the final score.
* **Versus-v0** — the learner in seat ``seat`` (``None``: drawn at every reset)
  against ``num_players - 1`` bots (``opponents``: one bot name or object for
  every opponent, default ``"random"``, or a list with one per opponent). Opponents move through
  :func:`shelfie_env.bots.act_on_game` until it is the learner's turn again or
  the game ends. The reward is 0 until the game ends; then it is the learner's
  final reward under ``reward_mode`` (``"rank"``, ``"score"`` or ``"margin"``,
  see :mod:`shelfie_env.shelfie_v0`), always from the learner's point of view.
  ``score_reward=w`` adds ``w`` per point the learner's own score gains at every
  step (a dense reward; default 0).

Final ``info`` holds ``"score"`` (the learner's), ``"scores"`` (seat order) and
``"seat"``. Neither env truncates: every game ends.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from shelfie_env import bots as bots_module
from shelfie_env.envs.common import (
    check_num_players,
    check_reward_mode,
    check_score_reward,
    final_rewards,
    game_dice,
    game_from_state,
    observation_box,
    option_state,
    score_bound,
    state_dice,
)
from shelfie_env.game.actions import NUM_ACTIONS
from shelfie_env.game.dice import check_dice_mode
from shelfie_env.game.engine import OVER, Game
from shelfie_env.game.reroll_keep import check_reroll_mode, game_action, game_mask
from shelfie_env.game.scoring import ScoreTable, validate_points
from shelfie_env.observation.features import check_obs_mode, make_encoder
from shelfie_env.observation.vector import legal_mask

_NO_LEGAL: tuple[int, ...] = ()


def _seeded_bot(name: str, seed: int) -> Any:
    """``bots.make(name, seed=seed)``, or ``bots.make(name)`` for a factory without a seed."""
    try:
        return bots_module.make(name, seed=seed)
    except TypeError:
        return bots_module.make(name)


class LegalDiscrete(spaces.Discrete):
    """``Discrete(120)`` whose ``sample()`` without a mask draws a legal action of its env.

    Everything else (``contains``, equality, seeding, ``sample(mask=...)``) is
    Gymnasium's ``Discrete``. A pickled or deep-copied space is detached until
    its env's next ``reset``; detached, or when the env has no legal action
    (after the game), it samples like a plain ``Discrete``.
    """

    def __init__(self, n: int, env: _ShelfieEnv | None = None, seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._env_ref = weakref.ref(env) if env is not None else None

    def bind(self, env: _ShelfieEnv) -> None:
        """Draw the legal actions of ``env`` from now on."""
        self._env_ref = weakref.ref(env)

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        env = self._env_ref() if self._env_ref is not None else None
        legal = env._legal() if env is not None and mask is None and probability is None else _NO_LEGAL
        if not legal:
            return super().sample(mask=mask, probability=probability)
        return np.int64(legal[int(self.np_random.integers(len(legal)))])

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_env_ref"] = None
        return state

    def __repr__(self) -> str:
        return f"LegalDiscrete({self.n})"


class _ShelfieEnv(gym.Env[np.ndarray, np.int64]):
    """Shared machinery: game, learner seat, observation, masks, rendering."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 2}

    def __init__(
        self,
        num_players: int,
        render_mode: str | None,
        points: Sequence[Sequence[int]] | None,
        dice: str = "stream",
        obs: str = "default",
        reroll: str = "ids",
    ) -> None:
        self.dice = check_dice_mode(dice)
        self.obs = check_obs_mode(obs)
        self.reroll = check_reroll_mode(reroll)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        self.render_mode = render_mode
        self.num_players = num_players
        self.table = ScoreTable(validate_points(points)) if points is not None else None
        self._score_bound = score_bound(self.table)
        self.observation_space = observation_box(num_players, self._score_bound, obs, self.table)
        self.action_space = LegalDiscrete(NUM_ACTIONS, env=self)
        self._encoder = make_encoder(num_players, obs)
        self.game: Game | None = None
        self.seat = 0

    # ---------------------------------------------------------------- masks
    def _legal(self) -> tuple[int, ...]:
        game = self.game
        if game is None or game.phase == OVER or game.current != self.seat:
            return _NO_LEGAL
        if self.reroll != "ids":
            return tuple(int(a) for a in np.flatnonzero(game_mask(self.reroll, game)))
        return game.legal_actions()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now, as a bool array of 120 (for ``MaskablePPO``)."""
        return legal_mask(self._legal()).astype(bool)

    # -------------------------------------------------------------- helpers
    def _seed(self, seed: int | None) -> None:
        super().reset(seed=seed)
        if isinstance(self.action_space, LegalDiscrete):
            self.action_space.bind(self)  # again after a copy or unpickling
        if seed is not None:
            self.action_space.seed(int(self.np_random.integers(2**31)))

    def _new_game(self, options: dict[str, Any] | None, seed: int | None = None) -> Game:
        state = option_state(options, f"{type(self).__name__}.reset")
        dice = game_dice(self.dice, seed, self.np_random)
        if state is None:
            return Game.new(self.num_players, points=self.table, rng=dice)
        return game_from_state(state, state_dice(self.dice, state, dice), self.num_players, self._score_bound)

    def _live_game(self) -> Game:
        """The game to step; a clear error before ``reset()`` or after the episode's end."""
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if game.phase == OVER:
            raise RuntimeError("the episode has ended; call reset()")
        return game

    def _obs(self) -> np.ndarray:
        return self._encoder.encode(self.game, self.seat)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": legal_mask(self._legal())}
        game = self.game
        if game.phase == OVER:
            scores = game.scores()
            info.update(score=scores[self.seat], scores=scores, seat=self.seat)
        return info

    def state_dict(self) -> dict[str, Any]:
        """The current state dict (docs/rules.md); ``reset(options={"state": ...})`` takes it back."""
        if self.game is None:
            raise RuntimeError("call reset() before state_dict()")
        return self.game.to_dict()

    def render(self) -> str | None:
        """Text of the table ("ansi") or print it ("human", colour on a terminal)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        from shelfie_env.game.render import render_text

        if self.render_mode == "ansi":
            return render_text(self.game, viewer=self.seat)
        color = bool(getattr(sys.stdout, "isatty", lambda: False)())
        print(render_text(self.game, viewer=self.seat, color=color), end="\n\n")
        return None


class SoloEnv(_ShelfieEnv):
    """``shelfie/Solo-v0``: one solo game per episode; step reward = change of the score."""

    def __init__(
        self,
        render_mode: str | None = None,
        points: Sequence[Sequence[int]] | None = None,
        dice: str = "stream",
        obs: str = "default",
        reroll: str = "ids",
    ) -> None:
        super().__init__(1, render_mode, points, dice, obs, reroll)
        self._score = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._seed(seed)
        self.game = self._new_game(options, seed)
        self._score = self.game.score(0)
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        game = self._live_game()
        game.step(game_action(self.reroll, game, action))  # IllegalActionError leaves the game unchanged
        score = game.score(0)
        reward = float(score - self._score)
        self._score = score
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, game.phase == OVER, False, self._info()


class VersusEnv(_ShelfieEnv):
    """``shelfie/Versus-v0``: the learner against bots; reward at the end, learner's point of view."""

    def __init__(
        self,
        num_players: int = 2,
        seat: int | None = None,
        opponents: str | Sequence[Any] = "random",
        reward_mode: str = "rank",
        render_mode: str | None = None,
        points: Sequence[Sequence[int]] | None = None,
        dice: str = "stream",
        obs: str = "default",
        reroll: str = "ids",
        score_reward: float = 0.0,
    ) -> None:
        n = check_num_players(num_players, low=2)
        super().__init__(n, render_mode, points, dice, obs, reroll)
        is_int = isinstance(seat, (int, np.integer)) and not isinstance(seat, bool)
        seat_ok = seat is None or (is_int and 0 <= seat < n)
        if not seat_ok:
            raise ValueError(f"seat must be None (random) or an integer 0..{n - 1}, got {seat!r}")
        self.fixed_seat = None if seat is None else int(seat)
        self.seat = self.fixed_seat or 0
        self.reward_mode = check_reward_mode(reward_mode)
        self.score_reward = check_score_reward(score_reward)
        if isinstance(opponents, str) or callable(getattr(opponents, "act", None)):
            specs: list[Any] = [opponents] * (n - 1)  # one name or bot for every opponent seat
        else:
            try:
                specs = list(opponents)
            except TypeError:
                msg = f"opponents must be a bot name, a bot or a list of them, got {opponents!r}"
                raise ValueError(msg) from None
            if len(specs) != n - 1:
                raise ValueError(f"opponents must name {n - 1} bot(s) for {n} players, got {len(specs)}")
        for spec in specs:
            if not isinstance(spec, str) and not callable(getattr(spec, "act", None)):
                raise ValueError(f"an opponent must be a bot name or an object with act(state), got {spec!r}")
        self._specs = specs
        # Bots named by string are built here and rebuilt, seeded from the env, on reset(seed=...).
        self.opponents = [bots_module.make(s) if isinstance(s, str) else s for s in specs]
        self._bot_of_seat: dict[int, Any] = {}

    def _seat_bots(self) -> None:
        others = [p for p in range(self.num_players) if p != self.seat]
        self._bot_of_seat = dict(zip(others, self.opponents))

    def _play_opponents(self) -> None:
        game = self.game
        while game.phase != OVER and game.current != self.seat:
            game.step(bots_module.act_on_game(self._bot_of_seat[game.current], game))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._seed(seed)
        if seed is not None:
            self.opponents = [
                _seeded_bot(s, int(self.np_random.integers(2**31))) if isinstance(s, str) else bot
                for s, bot in zip(self._specs, self.opponents)
            ]
        fixed = self.fixed_seat
        self.seat = fixed if fixed is not None else int(self.np_random.integers(self.num_players))
        self._seat_bots()
        self.game = self._new_game(options, seed)
        self._play_opponents()
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        game = self._live_game()
        before = game.score(self.seat)
        game.step(game_action(self.reroll, game, action))  # IllegalActionError leaves the game unchanged
        self._play_opponents()
        reward = self.score_reward * (game.score(self.seat) - before)
        if game.phase == OVER:
            reward += final_rewards(game.scores(), self.reward_mode)[self.seat]
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, game.phase == OVER, False, self._info()
