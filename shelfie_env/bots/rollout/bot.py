"""``rollout``: policy improvement by rollouts at every decision (Tesauro & Galperin, 1996).

At each decision the base policy (``td`` by default) ranks the legal actions; its ``width`` best
are each played out by rollouts of the base policy in every seat, on common dice and corrected
for luck (:mod:`shelfie_env.bots.rollout.rollouts`), in rounds until ``rollouts`` each or ``time``
seconds. The bot plays the action of highest rollout value when it beats the base policy's own
choice by more than ``z`` standard errors of their paired difference, and the base policy's
choice otherwise (so noise alone does not move it off a good move).

Options (``rollout:rollouts=32,time=1``): ``policy`` (a bot spec of the base policy), ``rollouts``
(per candidate action, at most), ``time`` (seconds a decision, at most), ``width`` (candidates),
``z`` and ``seed`` (its rollouts' dice tapes, independent of the game's dice).

The rollouts of a decision are dealt dice tapes whose seeds are a hash of the position and
``seed``, so a position gets the same rollouts, and the same move, whatever the bot was asked
before (with a ``time`` budget that the ``rollouts`` budget reaches first: how many rollouts fit in
a time budget depends on the machine).
"""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np

from shelfie_env.bots.planner.search import action_values, ranked_actions
from shelfie_env.bots.rollout.rollouts import BasePolicy, simulate
from shelfie_env.game.digest import state_digest
from shelfie_env.game.engine import Game

_ROUND = 4
"""Rollouts a candidate gets per round."""
_SEED_BASE = 70_000_000_000
"""Rollout tapes start here, apart from every deal set's seeds."""


class RolloutBot:
    """Plays the rollout-best of the base policy's ``width`` best actions (module doc)."""

    def __init__(
        self,
        policy: str = "td",
        rollouts: int = 32,
        time: float = 1.0,
        width: int = 6,
        z: float = 1.0,
        seed: int = 0,
    ) -> None:
        if rollouts < 2:
            raise ValueError(f"rollout: rollouts must be at least 2, got {rollouts}")
        if not time > 0:
            raise ValueError(f"rollout: time must be a positive number of seconds, got {time}")
        if width < 1:
            raise ValueError(f"rollout: width must be at least 1, got {width}")
        if z < 0:
            raise ValueError(f"rollout: z must be non-negative, got {z}")
        if seed < 0:
            raise ValueError(f"rollout: seed must be non-negative, got {seed}")
        self.name = "rollout"
        self.spec = policy
        self.rollouts, self.time, self.width, self.z = rollouts, float(time), width, float(z)
        self.seed = seed
        self._policies: dict[int, BasePolicy] = {}
        self.last: dict[str, Any] = {}
        """The last decision's candidates, rollouts and values (for inspection)."""

    def policy_for(self, num_players: int) -> BasePolicy:
        pol = self._policies.get(num_players)
        if pol is None:
            pol = self._policies[num_players] = BasePolicy(num_players, self.spec)
        return pol

    def candidates(self, game: Game, policy: BasePolicy) -> list[int]:
        """The base policy's choice first, then the ``td`` network's next best actions, ``width`` in all."""
        (turn,) = policy.turns([game])
        ranked = ranked_actions(action_values(game, ctx=turn.ctx))
        base = policy.act(game, turn)
        return [base] + [a for a in ranked if a != base][: self.width - 1]

    def act_game(self, game: Game) -> int:
        if game.over:
            raise ValueError("no legal action: the game is over")
        legal = game.legal_actions()
        if len(legal) == 1:
            return legal[0]
        start = _time.perf_counter()
        policy = self.policy_for(game.num_players)
        cands = self.candidates(game, policy)
        if len(cands) == 1:
            return cands[0]
        parts: list[np.ndarray] = []
        done = 0
        first = tape_seed(game, self.seed)
        while done < self.rollouts:
            k = min(_ROUND, self.rollouts - done)
            seeds = list(range(first + done, first + done + k))
            t0 = _time.perf_counter()
            _, cor = simulate(game, cands, seeds, policy)
            parts.append(cor)
            done += k
            spent = _time.perf_counter() - start
            if spent + (_time.perf_counter() - t0) > self.time:
                break
        values = np.concatenate(parts, axis=1)
        mean = values.mean(1)
        best = int(np.argmax(mean))
        choice = cands[0]
        if best != 0 and values.shape[1] > 1:
            diff = values[best] - values[0]
            se = diff.std(ddof=1) / np.sqrt(diff.size)
            if diff.mean() > self.z * se:
                choice = cands[best]
        self.last = {
            "candidates": cands,
            "rollouts": values.shape[1],
            "values": mean.tolist(),
            "choice": choice,
        }
        return choice

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def tape_seed(game: Game, seed: int) -> int:
    """The first dice-tape seed of a decision's rollouts: a hash of the position and ``seed``."""
    return _SEED_BASE + int.from_bytes(state_digest(game.to_dict(), f"rollout-{seed}", 5), "little") * 1024


def make_rollout(
    policy: str = "td", rollouts: int = 32, time: float = 1.0, width: int = 6, z: float = 1.0, seed: int = 0
) -> RolloutBot:
    """``bots.make("rollout", ...)``: the rollout bot over base policy ``policy`` (module doc)."""
    return RolloutBot(policy, rollouts, time, width, z, seed)


make_rollout.table_sizes = lambda: (2, 3, 4)  # type: ignore[attr-defined]
