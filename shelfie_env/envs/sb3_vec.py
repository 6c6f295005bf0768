"""Stable-Baselines3 ``VecEnv`` over the batched engine, ready for sb3-contrib's ``MaskablePPO``.

``ShelfieVecEnv`` steps ``N`` Solo or Versus games in one call (see
:class:`shelfie_env.envs.vector.BatchedSeats` for rewards and opponents) with
SB3's conventions: a finished game is reset in the same step, its last
observation is in ``infos[i]["terminal_observation"]`` and its statistics in
``infos[i]["episode"] = {"r": return, "l": length, "t": seconds, "score": final score}``
(plus ``infos[i]["scores"]``, every seat's final score, and ``infos[i]["seat"]``, the learner's)
(what ``VecMonitor`` would write, so SB3 logs ``rollout/ep_rew_mean`` and
``ep_len_mean``; :class:`EpisodeScoreCallback` adds ``rollout/ep_score_mean``).
``env_method("action_masks")`` returns the per-game legal masks, so
``sb3_contrib.common.maskable.utils.get_action_masks`` works unchanged.

Needs the ``train`` extra (stable-baselines3) and the ``fast`` extra (numba)::

    from sb3_contrib import MaskablePPO
    from shelfie_env.envs.sb3_vec import ShelfieVecEnv
    env = ShelfieVecEnv(64, num_players=2, opponents="random")
    MaskablePPO("MlpPolicy", env).learn(10_000)
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices

from shelfie_env.bots import Bot
from shelfie_env.envs.common import action_array, observation_box, score_bound
from shelfie_env.envs.vector import BatchedSeats
from shelfie_env.game.actions import NUM_ACTIONS


class ShelfieVecEnv(VecEnv):
    """``num_envs`` games as one SB3 ``VecEnv`` (Solo when ``num_players == 1``)."""

    def __init__(
        self,
        num_envs: int = 64,
        num_players: int = 1,
        seat: int | None = None,
        opponents: str | Bot | Sequence[str | Bot] = "random",
        reward_mode: str = "rank",
        points: Sequence[Sequence[int]] | None = None,
        seed: int | None = None,
        obs: str = "default",
        reroll: str = "ids",
        score_reward: float = 0.0,
    ) -> None:
        self.core = BatchedSeats(
            num_envs,
            num_players,
            seat=0 if num_players == 1 else seat,
            opponents=() if num_players == 1 else opponents,
            reward_mode=reward_mode,
            points=points,
            seed=seed,
            obs=obs,
            reroll=reroll,
            score_reward=score_reward,
        )
        table = self.core.batch.table
        obs_space = observation_box(num_players, score_bound(table), obs, table)
        self.render_mode = None
        super().__init__(self.core.num_envs, obs_space, spaces.Discrete(NUM_ACTIONS))
        self._actions: np.ndarray | None = None
        self._t0 = time.time()

    # -------------------------------------------------------------- VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seeds[0]  # seed(s) sets s, s+1, ...: the batch takes s
        if seed is not None:
            self.core.seed(int(seed))
        self._reset_seeds()
        self._reset_options()
        self.core.reset_games(None)
        return self.core.observe()

    def step_async(self, actions: np.ndarray) -> None:
        if isinstance(actions, np.ndarray) and actions.size == self.num_envs:
            actions = actions.reshape(self.num_envs)  # SB3 may pass shape (N, 1)
        self._actions = action_array(actions, self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait called without step_async")
        core = self.core
        rewards, ended = core.step(self._actions)
        self._actions = None
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if ended.any():
            idx = np.flatnonzero(ended)
            final_obs = core.observe()
            scores = core.learner_scores()
            all_scores = core.batch.scores
            t = round(time.time() - self._t0, 6)
            for i in idx:  # only the games that ended get dicts filled
                infos[i]["terminal_observation"] = final_obs[i]
                infos[i]["episode"] = {
                    "r": float(core.ep_return[i]),
                    "l": int(core.ep_length[i]),
                    "t": t,
                    "score": int(scores[i]),
                }
                infos[i]["score"] = int(scores[i])
                infos[i]["scores"] = [int(v) for v in all_scores[i]]
                infos[i]["seat"] = int(core.learner[i])
                infos[i]["TimeLimit.truncated"] = False
            core.reset_games(ended)
        return core.observe(), rewards.astype(np.float32), ended.copy(), infos

    def action_masks(self) -> np.ndarray:
        """``(N, 120)`` bool legal masks (a copy), in the env's reroll encoding."""
        return self.core.legal_masks()

    def close(self) -> None:
        pass

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self, attr_name)  # raises AttributeError like SB3 expects
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.core.legal_masks()  # a fresh array
            return list(masks if indices is None else masks[idx])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]


class EpisodeScoreCallback(BaseCallback):
    """Logs ``rollout/ep_score_mean`` from the ``"score"`` of SB3's episode-info buffer."""

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        buf: Iterable[dict[str, Any]] = self.model.ep_info_buffer or []
        scores = [ep["score"] for ep in buf if "score" in ep]
        if scores:
            self.logger.record("rollout/ep_score_mean", float(np.mean(scores)))


__all__ = ["EpisodeScoreCallback", "ShelfieVecEnv"]
