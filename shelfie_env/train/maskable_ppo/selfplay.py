"""Self-play: the opponent pool and the learner's single-agent view of a game.

Opponent schedule (per opponent seat, drawn again at every episode start):

* ``random`` with probability ``opp_random``;
* ``greedy`` with probability ``opp_greedy`` (when that bot is installed);
* otherwise a frozen snapshot of the learner: the newest one with probability
  ``opp_latest``, else one of the older pool members uniformly. A snapshot is
  taken every ``snapshot_every`` learner steps (the first one is the initial
  network) and the pool keeps the newest ``pool_size``.

The learner's seat is uniform over the seats at every reset. Rewards are the
learner's own: the rank reward at game end (+1 / -1 / 0 for two
players) plus the documented score-margin shaping; solo games reward the
change of the learner's score.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnvWrapper

from shelfie_env.bots import act_on_game, available, make
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.game.engine import Game
from shelfie_env.observation.vector import encode, observation_size


class SnapshotBot:
    """A frozen copy of the learner used as an opponent."""

    def __init__(self, policy: NumpyPolicy, deterministic: bool, rng: np.random.Generator, tag: str) -> None:
        self.policy, self.deterministic, self.rng, self.tag = policy, deterministic, rng, tag

    def act_game(self, game: Game) -> int:
        return self.policy.act(encode(game, game.current), game.legal_mask(), self.deterministic, self.rng)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))

    def act_batch(self, batch: Any, rows: np.ndarray) -> np.ndarray:
        """Moves in games ``rows`` of a :class:`~shelfie_env.batched.BatchedGame` (vector envs)."""
        obs = batch.observe(batch.current)[rows]
        return self.policy.act_many(obs, batch.M[rows], self.deterministic, self.rng)


class PoolSeat:
    """An opponent seat of ``Versus-v0`` whose bot is drawn from the pool at every episode."""

    def __init__(self, pool: OpponentPool) -> None:
        self.pool = pool
        self.bot: Any = pool.random

    def resample(self) -> None:
        self.bot = self.pool.sample()

    @property
    def tag(self) -> str:
        return getattr(self.bot, "tag", getattr(self.bot, "name", type(self.bot).__name__))

    def act_game(self, game: Game) -> int:
        return act_on_game(self.bot, game)

    def act(self, state: dict[str, Any]) -> int:
        return int(self.bot.act(state))


class OpponentPool:
    """Random, greedy and frozen snapshots of the learner, sampled per episode."""

    def __init__(
        self,
        opp_random: float = 0.05,
        opp_greedy: float = 0.35,
        opp_latest: float = 0.5,
        pool_size: int = 10,
        snapshot_deterministic: bool = False,
        seed: int | None = None,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.opp_random, self.opp_latest, self.pool_size = opp_random, opp_latest, pool_size
        self.random = make("random", seed=int(self.rng.integers(2**31)))
        self.greedy = make("greedy") if "greedy" in available() else None
        self.opp_greedy = opp_greedy if self.greedy is not None else 0.0
        self.snapshot_deterministic = snapshot_deterministic
        self.snapshots: list[tuple[str, NumpyPolicy]] = []
        self._bots: dict[str, SnapshotBot] = {}

    def add_snapshot(self, policy: NumpyPolicy, tag: str) -> None:
        """Add a frozen policy; drop the oldest beyond ``pool_size``."""
        self.snapshots.append((tag, policy))
        del self.snapshots[: -self.pool_size]
        kept = {t for t, _ in self.snapshots}
        self._bots = {t: b for t, b in self._bots.items() if t in kept}

    def draw(self) -> Any:
        """:meth:`sample` under the pool protocol of the batched vector envs."""
        return self.sample()

    def sample(self) -> Any:
        """One opponent bot according to the schedule (module docstring)."""
        u = self.rng.random()
        if u < self.opp_random or (not self.snapshots and self.greedy is None):
            return self.random
        if u < self.opp_random + self.opp_greedy or not self.snapshots:
            return self.greedy if self.greedy is not None else self.random
        if len(self.snapshots) == 1 or self.rng.random() < self.opp_latest:
            tag, pol = self.snapshots[-1]
        else:
            tag, pol = self.snapshots[int(self.rng.integers(len(self.snapshots) - 1))]
        bot = self._bots.get(tag)
        if bot is None or bot.policy is not pol:  # one bot object per snapshot (batched envs group by it)
            bot = self._bots[tag] = SnapshotBot(pol, self.snapshot_deterministic, self.rng, tag)
        return bot

    def state(self) -> dict[str, Any]:
        """Arrays for ``np.savez`` (snapshots only), to resume a run."""
        out: dict[str, Any] = {"tags": np.array([t for t, _ in self.snapshots])}
        for i, (_, pol) in enumerate(self.snapshots):
            for k, v in pol.state().items():
                out[f"s{i}_{k}"] = v
        return out

    def load_state(self, data: Any) -> None:
        """Inverse of :meth:`state`."""
        self.snapshots, self._bots = [], {}
        for i, tag in enumerate(data["tags"]):
            prefix = f"s{i}_"
            sub = {k[len(prefix) :]: data[k] for k in data.files if k.startswith(prefix)}
            self.snapshots.append((str(tag), NumpyPolicy.from_state(sub)))


def end_shaping(scores: list[int], seat: int, margin_coef: float) -> tuple[float, float]:
    """At game end: the shaping bonus ``margin_coef * (own - best rival) / 50`` and the win (1.0 or 0.0)."""
    own, best = scores[seat], max(scores[:seat] + scores[seat + 1 :])
    return margin_coef * (own - best) / 50.0, float(own > best)


class SelfPlayEnv(gym.Wrapper):
    """The learner's view for training: ``shelfie/Versus-v0`` with pool opponents, or ``Solo-v0``.

    Multiplayer: every opponent seat is a :class:`PoolSeat`, redrawn at each
    reset; the learner's seat is random (Versus-v0 ``seat=None``); the rank
    reward at game end gets the score-margin term ``margin_coef * (own - best
    rival) / 50`` added, and ``info["win"]`` is 1.0 for a win. Solo: the
    per-step score change times ``solo_reward_scale``. ``action_masks()`` is the
    wrapped env's (sb3-contrib protocol).
    """

    def __init__(
        self,
        players: int = 2,
        pool: OpponentPool | None = None,
        margin_coef: float = 0.1,
        solo_reward_scale: float = 0.02,
        seed: int | None = None,
    ) -> None:
        from shelfie_env.envs.gym_envs import SoloEnv, VersusEnv

        if not 1 <= players <= 4:
            raise ValueError(f"players must be 1..4, got {players}")
        self.players = players
        self.pool = pool if pool is not None or players == 1 else OpponentPool(seed=seed)
        self.seats = [PoolSeat(self.pool) for _ in range(players - 1)]
        env = (
            SoloEnv()
            if players == 1
            else VersusEnv(players, seat=None, opponents=self.seats, reward_mode="rank")
        )
        super().__init__(env)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (observation_size(players),), np.float32)
        self.margin_coef, self.solo_reward_scale = margin_coef, solo_reward_scale
        self._first_seed = seed

    @property
    def game(self) -> Game:
        return self.env.unwrapped.game

    @property
    def seat(self) -> int:
        return self.env.unwrapped.seat

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        if seed is None and self._first_seed is not None:
            seed, self._first_seed = self._first_seed, None
        for s in self.seats:
            s.resample()
        return self.env.reset(seed=seed, options=options)

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool array of 120)."""
        return self.env.unwrapped.action_masks()

    def add_snapshot(self, policy: NumpyPolicy, tag: str) -> None:
        """Forwarded to the pool (``VecEnv.env_method`` target)."""
        if self.pool is not None:
            self.pool.add_snapshot(policy, tag)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(int(action))
        if self.players == 1:
            reward *= self.solo_reward_scale
        elif terminated:
            bonus, info["win"] = end_shaping(info["scores"], info["seat"], self.margin_coef)
            reward += bonus
            info["opponents"] = [s.tag for s in self.seats]
        return obs, float(reward), terminated, truncated, info


def batched_selfplay_env(
    players: int,
    n_envs: int,
    pool: OpponentPool | None,
    margin_coef: float,
    solo_reward_scale: float,
    seed: int | None,
) -> Any:
    """The same training games as ``n_envs`` :class:`SelfPlayEnv`, on the batched engine.

    One :class:`~shelfie_env.envs.sb3_vec.ShelfieVecEnv` steps all games in
    compiled code; every opponent seat draws its bot from ``pool`` at every
    game start (``random`` and ``greedy`` play compiled, snapshots in one
    numpy forward pass per call); rewards are shaped as in :class:`SelfPlayEnv`.
    Needs the ``fast`` extra (numba).
    """
    from shelfie_env.envs.sb3_vec import ShelfieVecEnv

    if players > 1 and pool is None:
        raise ValueError("multiplayer training needs an opponent pool")
    core = ShelfieVecEnv(
        n_envs,
        num_players=players,
        seat=None,
        opponents=[pool] * (players - 1) if players > 1 else (),
        reward_mode="rank",
        seed=seed,
    )
    return SelfPlayVecEnv(core, pool, margin_coef, solo_reward_scale)


class SelfPlayVecEnv(VecEnvWrapper):
    """Reward shaping, ``win`` statistics and snapshot forwarding around a ``ShelfieVecEnv``
    (see :func:`batched_selfplay_env`)."""

    def __init__(self, venv: Any, pool: OpponentPool | None, margin_coef: float, solo_scale: float) -> None:
        super().__init__(venv)
        self.pool, self.margin_coef, self.solo_scale = pool, margin_coef, solo_scale
        self.players = venv.core.num_players
        self._shaped = np.zeros(venv.num_envs)

    def reset(self) -> np.ndarray:
        self._shaped[:] = 0.0
        return self.venv.reset()

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        rewards = rewards.astype(np.float64)
        if self.players == 1:
            rewards *= self.solo_scale
        self._shaped += rewards
        for i in np.flatnonzero(dones):
            info = infos[i]
            if self.players > 1:
                bonus, win = end_shaping(info["scores"], info["seat"], self.margin_coef)
                rewards[i] += bonus
                self._shaped[i] += bonus
                info["win"] = info["episode"]["win"] = win
            info["episode"]["r"] = float(self._shaped[i])
            self._shaped[i] = 0.0
        return obs, rewards.astype(np.float32), dones, infos

    def add_snapshot(self, policy: NumpyPolicy, tag: str) -> None:
        """Add a frozen learner to the (single, shared) opponent pool."""
        if self.pool is not None:
            self.pool.add_snapshot(policy, tag)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list:
        if method_name == "add_snapshot":
            self.add_snapshot(*args, **kwargs)
            return [None] * (self.num_envs if indices is None else len(list(indices)))
        return self.venv.env_method(method_name, *args, indices=indices, **kwargs)
