"""The self-play league on RLlib: fixed bot opponents as modules, and who plays which seat.

Modules of a league run (``module ids``):

* ``learner`` - the :class:`~shelfie_env.rllib.module.MaskedPPOModule` being trained;
* ``snapshot_0`` .. ``snapshot_{K-1}`` - frozen copies of the learner; every
  ``snapshot_every`` iterations the oldest slot takes the learner's current
  weights (at the start all hold the initial network);
* ``greedy`` and ``random`` - :class:`BotModule`: the built-in bots, playing from
  the position each observation shows (:func:`~shelfie_env.observation.vector.decode`).

:class:`LeagueSchedule` is the ``policy_mapping_fn``: for every episode it draws
the learner's seat uniformly, and for each other seat ``random`` with
probability ``p_random``, ``greedy`` with ``p_greedy``, else a snapshot slot
drawn uniformly. The draws depend only on the episode id, so every agent of an
episode sees the same assignment.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

import numpy as np
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from shelfie_env.observation.vector import decode

LEARNER = "learner"
BOTS = ("greedy", "random")


def snapshot_ids(count: int) -> list[str]:
    """The module ids of ``count`` snapshot slots."""
    return [f"snapshot_{i}" for i in range(count)]


class BotModule(RLModule):
    """A built-in bot (``model_config["bot"]``) as an RLModule that is never trained."""

    def setup(self) -> None:
        from shelfie_env import bots

        cfg = dict(self.model_config or {})
        self.players = int(cfg["players"])
        name = cfg["bot"]
        self.bot = bots.make(name, seed=int(cfg.get("seed", 0))) if name == "random" else bots.make(name)

    def _act(self, batch: dict[str, Any]) -> dict[str, Any]:
        obs = batch[Columns.OBS]["observation"]
        x = obs.detach().cpu().numpy() if hasattr(obs, "detach") else np.asarray(obs)
        actions = [self.bot.act_game(decode(row, self.players)) for row in x.reshape(len(x), -1)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._act(batch)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._act(batch)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("bot modules are not trained; keep them out of policies_to_train")

    def get_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        return None


class LeagueSchedule:
    """The ``policy_mapping_fn`` of a league run (see the module docstring)."""

    def __init__(
        self, num_players: int, snapshots: int, p_random: float = 0.1, p_greedy: float = 0.2
    ) -> None:
        if snapshots < 1:
            raise ValueError(f"a league needs at least one snapshot slot, got {snapshots}")
        if min(p_random, p_greedy) < 0 or p_random + p_greedy > 1:
            raise ValueError("p_random and p_greedy must be >= 0 with a sum <= 1")
        self.num_players, self.snapshots = num_players, snapshots
        self.p_random, self.p_greedy = p_random, p_greedy
        self._cache: dict[str, list[str]] = {}

    def seats(self, episode_id: str) -> list[str]:
        """The module of every seat in the episode ``episode_id``."""
        got = self._cache.get(episode_id)
        if got is None:
            rng = random.Random(zlib.crc32(str(episode_id).encode()))
            learner_seat = rng.randrange(self.num_players)
            got = []
            for seat in range(self.num_players):
                u = rng.random()
                if seat == learner_seat:
                    got.append(LEARNER)
                elif u < self.p_random:
                    got.append("random")
                elif u < self.p_random + self.p_greedy:
                    got.append("greedy")
                else:
                    got.append(f"snapshot_{rng.randrange(self.snapshots)}")
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[episode_id] = got
        return got

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        return self.seats(episode.id_)[int(str(agent_id).rsplit("_", 1)[1])]
