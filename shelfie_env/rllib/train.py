"""League self-play PPO on Ray RLlib (``shelfie train --backend rllib``).

:func:`ppo_config` returns a ready ``PPOConfig`` (new API stack): the
:class:`~shelfie_env.rllib.env.ShelfieMultiAgentEnv`, the learner's
:class:`~shelfie_env.rllib.module.MaskedPPOModule`, frozen snapshot slots and
the ``greedy``/``random`` bot modules, mapped to seats by
:class:`~shelfie_env.rllib.league.LeagueSchedule`. :class:`RLlibTrainer` drives
it: refreshes a snapshot slot every ``snapshot_every`` iterations, plays
``eval_games`` arena games against ``greedy`` every ``eval_every`` iterations
(dice seeds 10,000,000 + i, seats rotated: the protocol of ``shelfie arena``),
checkpoints to ``run_dir/checkpoint`` (``--resume`` continues), logs
``progress.jsonl`` and TensorBoard events (``run_dir/tb``), and exports the
learner as ``latest.npz`` + card (and ``best.npz`` by evaluation), which the
``ppo`` bot plays.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.deals import deal_start
from shelfie_env.rllib.league import BOTS, LEARNER, BotModule, LeagueSchedule, snapshot_ids


@dataclass
class RLlibConfig:
    """One RLlib league run."""

    players: int = 2
    """Players per game (1-4; solo runs have no opponents)."""
    total_steps: int = 1_000_000
    """Env steps to sample (every decision of every seat counts)."""
    num_env_runners: int = 0
    """Remote sampling processes (0: sample in the driver)."""
    num_envs_per_env_runner: int = 8
    """Games each env runner plays side by side."""
    address: str | None = None
    """Ray cluster to join (``auto``, ``ray://host:10001``); ``None`` starts a local Ray."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden widths of the actor and of the critic (``tanh``)."""
    head: str = "flat"
    """``flat`` or ``expect`` (the expectimax head)."""
    init_from: str | None = None
    """An exported ``.npz`` (with card) to start the learner from; its sizes win over ``hidden``/``head``."""
    reward_mode: str = "rank"
    """The env's reward (``rank``, ``score``, ``margin``)."""
    learning_rate: float = 3e-4
    entropy_coeff: float = 0.01
    gamma: float = 0.995
    train_batch_size: int = 4000
    """Env steps per training iteration (per learner)."""
    minibatch_size: int = 512
    num_epochs: int = 4
    snapshots: int = 4
    """Snapshot slots of the league."""
    snapshot_every: int = 50_000
    """Env steps between snapshot refreshes."""
    p_random: float = 0.1
    """Chance that an opponent seat is ``random``."""
    p_greedy: float = 0.2
    """Chance that an opponent seat is ``greedy`` (the rest: snapshots)."""
    eval_every: int = 100_000
    """Env steps between arena evaluations against ``greedy`` (0: only at the end)."""
    eval_games: int = 200
    deals: str = "selection"
    """Deals of the arena evaluations: ``selection``, ``test`` or a first seed (docs/evaluation.md)."""
    save_every: int = 50_000
    """Env steps between checkpoints (and always at the end)."""
    seed: int = 0
    run_dir: str = "runs/rllib"

    def __post_init__(self) -> None:
        from shelfie_env.train.fields import check_types

        check_types(self)
        if not 1 <= self.players <= 4:
            raise ValueError(f"players must be 1..4, got {self.players}")
        from shelfie_env.arena.deals import deal_start

        deal_start(self.deals)
        if self.head not in ("flat", "expect"):
            raise ValueError(f"head must be 'flat' or 'expect', got {self.head!r}")
        for name in (
            "total_steps",
            "num_envs_per_env_runner",
            "train_batch_size",
            "minibatch_size",
            "num_epochs",
            "snapshots",
            "eval_games",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("snapshot_every", "eval_every", "save_every"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("num_env_runners", "seed", "entropy_coeff"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")
        if not self.hidden or min(self.hidden) <= 0:
            raise ValueError(f"hidden needs positive layer sizes, got {self.hidden}")
        LeagueSchedule(max(self.players, 1), self.snapshots, self.p_random, self.p_greedy)


def module_config(cfg: RLlibConfig) -> dict[str, Any]:
    """The learner's ``model_config`` (from ``init_from``'s sizes when given)."""
    if cfg.init_from:
        from shelfie_env.rllib.module import module_config_from_card

        return module_config_from_card(cfg.init_from)
    return {"hidden": list(cfg.hidden), "head": cfg.head}


def ppo_config(cfg: RLlibConfig | None = None, **overrides: Any) -> Any:
    """A ready ``PPOConfig`` for ``cfg`` (or ``RLlibConfig(**overrides)``): env, modules, league, PPO settings."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from shelfie_env.rllib.env import ShelfieMultiAgentEnv
    from shelfie_env.rllib.module import MaskedPPOModule

    cfg = dataclasses.replace(cfg, **overrides) if cfg else RLlibConfig(**overrides)
    learner = RLModuleSpec(module_class=MaskedPPOModule, model_config=module_config(cfg))
    frozen = {k: v for k, v in module_config(cfg).items() if k != "init_from"}
    specs: dict[str, Any] = {LEARNER: learner}
    if cfg.players > 1:
        for sid in snapshot_ids(cfg.snapshots):
            specs[sid] = RLModuleSpec(module_class=MaskedPPOModule, model_config=frozen)
        for bot in BOTS:
            specs[bot] = RLModuleSpec(
                module_class=BotModule, model_config={"bot": bot, "players": cfg.players}
            )
    schedule = LeagueSchedule(cfg.players, cfg.snapshots, cfg.p_random, cfg.p_greedy)
    env_config = {"num_players": cfg.players, "reward_mode": cfg.reward_mode}
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(ShelfieMultiAgentEnv, env_config=env_config)
        .env_runners(num_env_runners=cfg.num_env_runners, num_envs_per_env_runner=cfg.num_envs_per_env_runner)
        .multi_agent(policies=set(specs), policy_mapping_fn=schedule, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            lr=cfg.learning_rate,
            entropy_coeff=cfg.entropy_coeff,
            gamma=cfg.gamma,
            train_batch_size_per_learner=cfg.train_batch_size,
            minibatch_size=cfg.minibatch_size,
            num_epochs=cfg.num_epochs,
        )
        # no CPU/GPU usage monitor thread (nor Ray's notice that gputil is missing)
        .debugging(seed=cfg.seed, log_sys_usage=False)
    )


def weights_to_arrays(weights: dict[str, Any]) -> dict[str, np.ndarray]:
    """An RLlib module state (tensors or arrays by name) as float32 numpy arrays."""
    return {
        k: np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v, np.float32)
        for k, v in weights.items()
    }


class RLlibTrainer:
    """Builds (or resumes) the algorithm in ``cfg.run_dir`` and runs it to ``cfg.total_steps``."""

    def __init__(self, cfg: RLlibConfig) -> None:
        self.cfg = cfg
        self.run_dir = Path(cfg.run_dir)
        self.state: dict[str, Any] = {"iteration": 0, "env_steps": 0, "cursor": 0, "wall": 0.0, "best": -1.0}
        self.state.update(
            next_snapshot=cfg.snapshot_every, next_eval=cfg.eval_every, next_save=cfg.save_every
        )

    def _due(self, key: str, every: int) -> bool:
        """Whether the env-step count has passed ``state[key]`` (then move it on by ``every``)."""
        if not every or self.state["env_steps"] < self.state[key]:
            return False
        while self.state[key] <= self.state["env_steps"]:
            self.state[key] += every
        return True

    # ------------------------------------------------------------------ ray
    def start_ray(self) -> None:
        """Join ``cfg.address`` or start a local Ray, with Ray's own INFO lines off."""
        import ray

        quiet_ray_notices()
        if ray.is_initialized():
            return
        if self.cfg.address:
            ray.init(
                address=self.cfg.address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        else:
            ray.init(
                num_cpus=os.cpu_count() or 1,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )

    def build(self, resume: bool) -> Any:
        algo = ppo_config(self.cfg).build_algo()
        if resume:
            algo.restore_from_path(str((self.run_dir / "checkpoint").resolve()))
            self.state.update(json.loads((self.run_dir / "league.json").read_text()))
        elif self.cfg.players > 1:
            start = algo.learner_group.get_weights([LEARNER])[LEARNER]
            self._set_snapshots(algo, snapshot_ids(self.cfg.snapshots), start)
        return algo

    def _set_snapshots(self, algo: Any, slots: list[str], weights: dict[str, Any]) -> None:
        algo.learner_group.set_weights({s: weights for s in slots})
        algo.env_runner_group.sync_weights(
            from_worker_or_learner_group=algo.learner_group, policies=slots, inference_only=True
        )

    def learner_arrays(self, algo: Any) -> dict[str, np.ndarray]:
        return weights_to_arrays(algo.learner_group.get_weights([LEARNER])[LEARNER])

    # ---------------------------------------------------------------- steps
    def refresh_snapshot(self, algo: Any) -> str:
        """Copy the learner into the oldest snapshot slot; returns its id."""
        slot = snapshot_ids(self.cfg.snapshots)[self.state["cursor"] % self.cfg.snapshots]
        self._set_snapshots(algo, [slot], algo.learner_group.get_weights([LEARNER])[LEARNER])
        self.state["cursor"] += 1
        return slot

    def evaluate(self, algo: Any) -> dict[str, Any]:
        """Arena games of the learner (most likely legal move) against ``greedy`` (solo: mean score)."""
        from shelfie_env.arena import run_arena
        from shelfie_env.bots.learned.bot import PPOBot
        from shelfie_env.bots.learned.policy import NumpyPolicy

        bot = PPOBot(NumpyPolicy.from_state_dict(self.learner_arrays(algo), "tanh"), self.cfg.players)
        n = self.cfg.players
        names = ["rllib"] + (["greedy"] * (n - 1))
        res = run_arena(
            names if n > 1 else ["rllib"],
            n,
            self.cfg.eval_games,
            deal_start(self.cfg.deals),
            workers=1,
            ratings=False,
            bots={"rllib": bot},
        )
        rec: dict[str, Any] = {"iteration": self.state["iteration"], "env_steps": self.state["env_steps"]}
        if n == 1:
            learner = next(b for b in res["bots"] if b["bot"] == "rllib")  # res["bots"]: one summary per bot
            rec["solo"] = {"mean_score": learner["mean_score"]}
        else:
            pair = res["pairings"][0] if res.get("pairings") else {}
            rec["greedy"] = {
                k: pair[k] for k in ("games", "wins", "ties", "losses", "win_rate", "win_ci95") if k in pair
            }
        return rec

    def save(self, algo: Any) -> None:
        algo.save_to_path(str((self.run_dir / "checkpoint").resolve()))
        (self.run_dir / "league.json").write_text(json.dumps(self.state) + "\n")
        self.export(algo, self.run_dir / "latest.npz", {})

    def export(self, algo: Any, path: Path, evaluation: dict[str, Any]) -> Path:
        from shelfie_env.rllib.module import export_module

        return export_module(
            self.learner_arrays(algo),
            path,
            self.cfg.players,
            config=dataclasses.asdict(self.cfg),
            steps=int(self.state["env_steps"]),
            wall_time_s=float(self.state["wall"]),
            evaluation=evaluation,
            extra={
                "teacher": "none" if not self.cfg.init_from else f"init_from {self.cfg.init_from}",
                "train_command": train_command(self.cfg),
            },
        )

    def run(self, resume: bool = False, export: str | None = None, log: Any = print) -> Path:
        """Train to ``total_steps``; returns the run directory."""
        if not resume and (self.run_dir / "league.json").exists():
            raise FileExistsError(f"{self.run_dir} already holds a run; resume it or choose another run_dir")
        if resume and not (self.run_dir / "league.json").exists():
            raise FileNotFoundError(f"--resume: no run in {self.run_dir}")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.json").write_text(json.dumps(dataclasses.asdict(self.cfg), indent=2) + "\n")
        import torch

        torch.set_num_threads(1)
        self.start_ray()
        algo = self.build(resume)
        writer = _tensorboard(self.run_dir / "tb")
        try:
            while self.state["env_steps"] < self.cfg.total_steps:
                t0 = time.time()
                result = algo.train()
                self.state["wall"] += time.time() - t0
                self.state["iteration"] += 1
                it = self.state["iteration"]
                self.state["env_steps"] = int(_get(result, "env_runners", "num_env_steps_sampled_lifetime"))
                row = progress_row(result, self.state)
                with (self.run_dir / "progress.jsonl").open("a") as f:
                    f.write(json.dumps(row) + "\n")
                if writer is not None:
                    for k, v in row.items():
                        if isinstance(v, (int, float)) and k not in ("iteration", "env_steps"):
                            writer.add_scalar(k, v, self.state["env_steps"])
                log(
                    f"[rllib] iteration {it}: {self.state['env_steps']:,} env steps, "
                    f"{row['env_steps_per_s']:.0f} env steps/s, learner return {row['learner_return']:.3f}"
                )
                if self._due("next_snapshot", self.cfg.snapshot_every) and self.cfg.players > 1:
                    log(f"[rllib] snapshot -> {self.refresh_snapshot(algo)}")
                done = self.state["env_steps"] >= self.cfg.total_steps
                if self._due("next_eval", self.cfg.eval_every) or done:
                    rec = self.evaluate(algo)
                    with (self.run_dir / "eval.jsonl").open("a") as f:
                        f.write(json.dumps(rec) + "\n")
                    key = rec["solo"]["mean_score"] if "solo" in rec else rec["greedy"]["win_rate"]
                    log(eval_line(rec, self.cfg.eval_games))
                    if key > self.state["best"]:
                        self.state["best"] = key
                        self.export(algo, self.run_dir / "best.npz", {"periodic": rec})
                if self._due("next_save", self.cfg.save_every) or done:
                    self.save(algo)
            if export:
                self.export(algo, Path(export), {})
        finally:
            if writer is not None:
                writer.close()
            algo.stop()
        return self.run_dir


def eval_line(rec: dict[str, Any], games: int) -> str:
    """One evaluation as the console shows it."""
    head = f"[rllib] eval at {rec['env_steps']:,} env steps:"
    if "solo" in rec:
        return f"{head} mean score {rec['solo']['mean_score']:.1f} over {games} solo games"
    g = rec["greedy"]
    low, high = g.get("win_ci95", (0.0, 1.0))
    return (
        f"{head} win rate against greedy {g['win_rate']:.1%} (95% CI {low:.1%}-{high:.1%}; "
        f"{g['wins']} won, {g['ties']} tied, {g['losses']} lost of {g['games']})"
    )


_NOTICES = {
    "ray._private.authentication.authentication_token_setup": "Token authentication is enabled for this Ray",
    "ray.rllib.algorithms.algorithm_config": "You are running PPO on the new API stack!",
    "ray._common.deprecation": "`RLModule(config=[RLModuleConfig object])` has been deprecated",
}
"""Ray notices that no public setting turns off: a local Ray announces that it keeps its default,
token authentication on (the only way to silence it, ``RAY_AUTH_MODE``, is read when Ray is
imported); the new API stack, chosen here explicitly, is announced anyway; and every RLModule
Ray builds makes Ray itself use its deprecated ``RLModuleConfig``."""


class _DropNotice(logging.Filter):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def quiet_ray_notices() -> None:
    """Drop :data:`_NOTICES` (those two messages only; every other warning and error still shows)."""
    for name, text in _NOTICES.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropNotice) for f in logger.filters):
            logger.addFilter(_DropNotice(text))


def describe(cfg: RLlibConfig) -> str:
    """One line saying what a run will do."""
    where = f"the Ray cluster at {cfg.address}" if cfg.address else "a local Ray"
    start = f", starting from {cfg.init_from}" if cfg.init_from else ""
    league = f", {cfg.snapshots} snapshot slots" if cfg.players > 1 else ""
    return (
        f"PPO league self-play on Ray RLlib, {cfg.players} player(s), {cfg.total_steps:,} env steps "
        f"(every seat's decisions; whole iterations of {cfg.train_batch_size:,}), {cfg.head} head {cfg.hidden}"
        f"{league}{start}, {cfg.num_env_runners} env runner(s) on {where}"
    )


def _get(d: dict[str, Any], *keys: str, default: float = 0.0) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def progress_row(result: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """The numbers of one iteration that go to ``progress.jsonl`` and TensorBoard."""
    returns = _get(result, "env_runners", "module_episode_returns_mean", default={}) or {}
    timers = _get(result, "timers", default={}) or {}
    it_time = float(timers.get("training_iteration", 0.0) or 0.0)
    steps = float(_get(result, "env_runners", "num_env_steps_sampled", default=0.0))
    learner = _get(result, "learners", LEARNER, default={}) or {}
    return {
        "iteration": state["iteration"],
        "env_steps": state["env_steps"],
        "wall_s": round(state["wall"], 1),
        "env_steps_per_s": steps / it_time if it_time else 0.0,
        "learner_return": float(returns.get(LEARNER, 0.0)),
        "learner_samples": float(
            _get(result, "env_runners", "num_module_steps_sampled", default={}).get(LEARNER, 0.0)
        ),
        "policy_loss": float(learner.get("policy_loss", 0.0)),
        "vf_loss": float(learner.get("vf_loss", 0.0)),
        "entropy": float(learner.get("entropy", 0.0)),
    }


def _tensorboard(path: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard not installed: progress.jsonl only
        return None
    return SummaryWriter(str(path))


def train_command(cfg: RLlibConfig) -> str:
    """The ``shelfie train --backend rllib`` line that reproduces ``cfg``."""
    default = RLlibConfig()
    parts = ["shelfie train --backend rllib"]
    for f in dataclasses.fields(RLlibConfig):
        value = getattr(cfg, f.name)
        if value != getattr(default, f.name) and f.name != "address":
            flag = "--" + f.name.replace("_", "-")
            parts.append(
                f"{flag} {' '.join(map(str, value))}" if isinstance(value, list) else f"{flag} {value}"
            )
    return " ".join(parts)
