"""Callbacks of a training run: snapshots for the pool, periodic evaluation, checkpoints.

* :class:`SelfPlayCallback` adds a frozen copy of the learner to every env's
  opponent pool every ``snapshot_every`` steps.
* :class:`EvalCallback` plays ``eval_games`` seat-alternated games (fixed seeds)
  against ``greedy`` and ``random`` every ``eval_every`` steps, logs the true
  win rates to TensorBoard (``charts/win_rate_vs_greedy`` ...), appends them to
  ``eval.jsonl`` and keeps ``best.zip`` (highest win rate against greedy, or the
  highest mean score in solo).
* :class:`CheckpointCallback` writes the resumable ``latest.zip`` + card +
  ``pool.npz`` every ``save_every`` steps and at the end.

TensorBoard keys: SB3's ``rollout/`` and ``train/`` groups are written as
``charts/`` and ``losses/`` (:class:`RenamedTensorBoard`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import TensorBoardOutputFormat

from shelfie_env.arena import run_arena, wilson
from shelfie_env.arena.deals import deal_start, deals_label
from shelfie_env.bots import make
from shelfie_env.bots.learned.bot import PPOBot
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.train.checkpoint import save_model


class RenamedTensorBoard(TensorBoardOutputFormat):
    """TensorBoard writer that files SB3's ``rollout/*`` under ``charts/`` and ``train/*`` under
    ``losses/``."""

    RENAMES = (("rollout/", "charts/"), ("train/", "losses/"), ("time/", "charts/time_"))

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0) -> None:
        def rename(k: str) -> str:
            for old, new in self.RENAMES:
                if k.startswith(old):
                    return new + k[len(old) :]
            return k

        super().write(
            {rename(k): v for k, v in key_values.items()},
            {rename(k): v for k, v in key_excluded.items()},
            step,
        )


def snapshot(model: Any) -> NumpyPolicy:
    """A frozen numpy copy of the model's actor."""
    return NumpyPolicy.from_sb3(model.policy)


def evaluate_policy_vs(
    policy: NumpyPolicy, players: int, opponent: str, games: int, seed: int
) -> dict[str, Any]:
    """Win rate (multiplayer) or mean score (solo) of ``policy`` played deterministically.

    An arena run (:func:`shelfie_env.arena.run_arena`, one process): game ``i`` is dealt
    from dice seed ``seed + i``, seats rotated; every other seat is ``opponent``.
    """
    bots: dict[str, Any] = {"learner": PPOBot(policy, players, deterministic=True)}
    for k in range(1, players):  # distinct names: every other seat is its own copy of the opponent
        bots[f"{opponent}#{k}"] = make(opponent)
    result = run_arena(list(bots), players, games, seed, workers=1, ratings=False, bots=bots)
    me = result["bots"][0]
    out: dict[str, Any] = {"games": games, "mean_score": me["mean_score"]}
    if players == 2:
        pair = result["pairings"][0]
        out.update(wins=pair["wins"], ties=pair["ties"], losses=pair["losses"])
        out.update(win_rate=pair["win_rate"], ci95=pair["win_ci95"])
    elif players > 2:
        firsts = round(me["first_place_rate"] * me["games"])
        out.update(win_rate=me["first_place_rate"], ci95=list(wilson(firsts, me["games"])))
    return out


class SelfPlayCallback(BaseCallback):
    """Every ``every`` steps, push a frozen copy of the learner into the envs' opponent pools."""

    def __init__(self, every: int, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.every = every
        self._last = -1

    def _push(self) -> None:
        pol = snapshot(self.model)
        tag = f"self@{self.num_timesteps}"
        self.training_env.env_method("add_snapshot", pol, tag)
        self._last = self.num_timesteps

    def _on_training_start(self) -> None:
        if self._last < 0:
            self._push()

    def _on_step(self) -> bool:
        if self.num_timesteps - self._last >= self.every:
            self._push()
        return True


class EvalCallback(BaseCallback):
    """Periodic evaluation against greedy and random; keeps the best checkpoint."""

    def __init__(
        self,
        run_dir: Path,
        players: int,
        every: int,
        games: int,
        card_fn: Callable[[int, dict], dict],
        verbose: int = 1,
        deals: str = "selection",
    ) -> None:
        super().__init__(verbose)
        self.deals = deals
        self.seed = deal_start(deals)
        self.run_dir, self.players, self.every, self.games, self.card_fn = (
            run_dir,
            players,
            every,
            games,
            card_fn,
        )
        self.log_path = run_dir / "eval.jsonl"
        self.best = -float("inf")
        self._last = None
        if self.log_path.is_file():  # resuming: remember the best so far
            for line in self.log_path.read_text().splitlines():
                rec = json.loads(line)
                self.best = max(self.best, self._key(rec))
                self._last = rec["steps"]

    @property
    def last_steps(self) -> int | None:
        """Learner steps of the latest evaluation (``None`` before the first)."""
        return self._last

    def _key(self, rec: dict) -> float:
        if self.players == 1:
            return rec["solo"]["mean_score"]
        return rec["greedy"]["win_rate"]

    def _on_training_start(self) -> None:
        if self._last is None:
            self._last = self.num_timesteps - self.every  # evaluate the starting point too

    def _on_step(self) -> bool:
        if self.games and self.num_timesteps - self._last >= self.every:
            self.evaluate()
        return True

    def evaluate(self) -> dict:
        """Run the evaluation now, log it, and save ``best.zip`` if it improved."""
        self._last = self.num_timesteps
        t0 = time.time()
        pol = snapshot(self.model)
        rec: dict[str, Any] = {"steps": int(self.num_timesteps), "time": time.time()}
        opponents = ("solo",) if self.players == 1 else ("greedy", "random")
        for opp in opponents:
            rec[opp] = evaluate_policy_vs(pol, self.players, opp, self.games, self.seed)
            if self.players == 1:
                self.logger.record("charts/eval_mean_score", rec[opp]["mean_score"])
            else:
                self.logger.record(f"charts/win_rate_vs_{opp}", rec[opp]["win_rate"])
                self.logger.record(f"charts/mean_score_vs_{opp}", rec[opp]["mean_score"])
        rec["eval_seconds"] = round(time.time() - t0, 1)
        with self.log_path.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        key = self._key(rec)
        if key > self.best:
            self.best = key
            evaluation = {
                "periodic": {
                    "opponent": opponents[0],
                    "games": self.games,
                    "deals": deals_label(self.deals),
                    "seeds": f"{self.seed}..{self.seed + self.games - 1}",
                    **rec[opponents[0]],
                }
            }
            save_model(self.model, self.run_dir / "best.zip", self.card_fn(self.num_timesteps, evaluation))
        if self.verbose:
            summary = ", ".join(
                f"{o}: "
                + (f"win {rec[o]['win_rate']:.3f}" if "win_rate" in rec[o] else "")
                + f" score {rec[o]['mean_score']:.1f}"
                for o in opponents
            )
            print(f"[eval] steps={self.num_timesteps} {summary} ({rec['eval_seconds']}s)", flush=True)
        return rec


class CheckpointCallback(BaseCallback):
    """Write the resumable ``latest.zip`` (+ card, + opponent pool) every ``every`` steps."""

    def __init__(
        self,
        run_dir: Path,
        every: int,
        card_fn: Callable[[int, dict], dict],
        pool_state: Callable[[], dict] | None,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        self.run_dir, self.every, self.card_fn, self.pool_state = run_dir, every, card_fn, pool_state
        self._last = 0

    def _on_training_start(self) -> None:
        self._last = self.num_timesteps

    def _on_step(self) -> bool:
        if self.num_timesteps - self._last >= self.every:
            self.save()
        return True

    def _on_training_end(self) -> None:
        self.save()

    def save(self) -> None:
        """Save model, card and pool now."""
        self._last = self.num_timesteps
        save_model(self.model, self.run_dir / "latest.zip", self.card_fn(self.num_timesteps, {}))
        if self.pool_state is not None:
            tmp = self.run_dir / "pool.tmp.npz"
            np.savez(tmp, **self.pool_state())
            tmp.replace(self.run_dir / "pool.npz")
