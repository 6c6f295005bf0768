"""The benchmark's learners: one small adapter module each, imported only when its learner runs.

Every adapter has ``train(run: Run) -> Trained | None``: train ``run.algo`` from random weights for
``run.steps`` learner decisions under the protocol (:mod:`shelfie_env.benchmark.tasks`), adding
learning-curve points to ``run.curve``; ``None`` when it stopped early (``run.stop_after``) with its
checkpoint written. The learners that resume (:data:`RESUMABLE`) write a checkpoint of the whole run into
``run.run_dir`` every ``run.checkpoint_every`` decisions and continue from it with ``run.resume``.

* ``sb3`` - ``maskable_ppo``, ``maskable_ppo_expect`` (sb3-contrib MaskablePPO, flat or expectimax head)
  on the batched SB3 adapter, and ``a2c`` (SB3 A2C, no masks) on one-game envs;
* ``ppo_flat`` - the package's masked flat-head PPO (:mod:`shelfie_env.train.ppo_flat`);
* ``ppo_afterstate`` - the after-state PPO trainer; ``td`` - TD(lambda) with the planner's search over the
  dice; ``rllib_ppo`` - RLlib PPO.

Training needs the ``train`` extra (torch, Stable-Baselines3, sb3-contrib), ``rllib_ppo`` the ``scale``
extra; the adapters import them when they run.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from shelfie_env.arena.rows import Curve
from shelfie_env.benchmark.ablations import ABLATION
from shelfie_env.benchmark.tasks import TRAIN_OPPONENTS

LEARNERS: dict[str, str] = {
    "maskable_ppo": "sb3",
    "maskable_ppo_expect": "sb3",
    "a2c": "sb3",
    "td": "td",
    "rllib_ppo": "rllib_ppo",
    "ppo_afterstate": "ppo_afterstate",
    "ppo_flat": "ppo_flat",
}
"""Learner name -> its adapter module under ``shelfie_env.benchmark.learners``."""
SB3 = ("maskable_ppo", "maskable_ppo_expect", "a2c")
SETTINGS: dict[str, frozenset[str]] = {
    "maskable_ppo": frozenset(ABLATION),
    "maskable_ppo_expect": frozenset(ABLATION) - {"obs"},
    "a2c": frozenset(ABLATION) - {"obs"},
    "ppo_flat": frozenset(
        {"net_arch", "ent_coef", "train_opponents", "margin_coef", "score_reward", "reroll", "obs"}
    ),
}
"""The settings of :data:`~shelfie_env.benchmark.ablations.ABLATION` each learner can change (others: none)."""
BASE: dict[str, dict[str, Any]] = {"ppo_flat": {"obs": "features"}}
"""A learner's own value of a setting where it differs from the protocol's (the run is not tagged with it)."""
RESUMABLE = ("maskable_ppo", "maskable_ppo_expect", "ppo_flat")
"""Learners that checkpoint the whole run and resume it exactly (``maskable_ppo*`` with ``--reroll ids|keep``)."""
TASKS_OF: dict[str, tuple[str, ...]] = {
    "maskable_ppo": ("versus-2p", "field-3p", "field-4p", "solo"),
    "maskable_ppo_expect": ("versus-2p",),
    "a2c": ("versus-2p",),
    "td": ("versus-2p", "field-3p", "field-4p"),
    "rllib_ppo": ("versus-2p",),
    "ppo_afterstate": ("versus-2p", "field-3p", "field-4p"),
    "ppo_flat": ("versus-2p", "field-3p", "field-4p", "solo"),
}
"""The tasks (:data:`~shelfie_env.benchmark.suite.TASKS`) each learner trains on."""
WHY_NOT = {
    "td": "its after-state values learn a rank against rivals, and a solo game has none",
    "ppo_afterstate": "its after-state values learn a rank against rivals, and a solo game has none",
}
"""Why a learner does not train on ``solo``, where a reason is more than "not built"."""


def check_task(algo: str, task: str) -> None:
    """``ValueError`` naming the tasks ``algo`` trains on when ``task`` is not one of them."""
    fits = TASKS_OF.get(algo, ())
    if task not in fits:
        why = f" ({WHY_NOT[algo]})" if task == "solo" and algo in WHY_NOT else ""
        raise ValueError(f"{algo} does not train on {task}{why}; it trains on {', '.join(fits)}")


OWN_OPPONENTS = {"ppo_afterstate": "its recipe's: itself, greedy in 1/5 of the seats"}
"""Learners trained against other opponents than :data:`~shelfie_env.benchmark.tasks.TRAIN_OPPONENTS`."""


def base(algo: str) -> dict[str, Any]:
    """The settings ``algo`` runs with when no option changes them."""
    return {**ABLATION, **BASE.get(algo, {})}


@dataclass
class Run:
    """One training run of the benchmark: a learner, a budget, a seed and the settings it trains with."""

    algo: str
    steps: int
    seed: int
    curve: Curve
    settings: dict[str, Any] = field(default_factory=lambda: dict(ABLATION))
    run_dir: Path | None = None
    checkpoint_every: int = 0
    resume: bool = False
    stop_after: int | None = None
    save: Path | None = None
    flat: dict[str, Any] = field(default_factory=dict)
    """``--flat`` fields of :class:`~shelfie_env.train.ppo_flat.ppo.PPOFlatConfig` (``ppo_flat`` only)."""
    tag: str = ""
    """The run's ``variant`` (its row's; it names the ``save`` export)."""
    players: int = 2
    """Table size of the run's task (1: ``solo``)."""

    def export_name(self) -> str:
        """``<learner>[_<variant>]_s<seed>_<budget>``: the name of the run's ``save`` export."""
        safe = self.tag.replace(",", "_").replace("=", "-").replace(".", "p")
        return f"{self.algo}{'_' + safe if safe else ''}_s{self.seed}_{self.steps}"


@dataclass
class Trained:
    """A finished run: the bot that plays its evaluation, training seconds, decisions trained, row fields."""

    bot: Any
    train_s: float
    decisions: int
    extra: dict[str, Any] = field(default_factory=dict)
    policy: Any = None
    """The numpy policy, where the learner has one (A2C's row counts its unmasked first choices)."""


def adapter(algo: str) -> ModuleType:
    """The adapter module of ``algo`` (imports its training libraries)."""
    if algo not in LEARNERS:
        raise ValueError(f"unknown learner {algo!r}; the learners are {', '.join(LEARNERS)}")
    return importlib.import_module(f"{__name__}.{LEARNERS[algo]}")


def train(run: Run) -> Trained | None:
    """Train ``run`` with its learner's adapter."""
    return adapter(run.algo).train(run)


def train_opponents_of(algo: str, settings: dict[str, Any]) -> str:
    """The ``train_opponents`` field of ``algo``'s row."""
    from shelfie_env.benchmark.ablations import train_opponents

    if algo in OWN_OPPONENTS:
        return OWN_OPPONENTS[algo]
    return train_opponents(settings) if algo in SETTINGS else TRAIN_OPPONENTS
