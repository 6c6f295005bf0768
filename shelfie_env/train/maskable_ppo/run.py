"""MaskablePPO self-play (``shelfie train --algo maskable_ppo``): warm start, PPO, checkpoints.

:func:`train` runs (or resumes) the run of a :class:`~shelfie_env.train.maskable_ppo.config.TrainConfig`:
behaviour cloning of ``bc_teacher`` (:mod:`.bc`, with DAgger rounds) or ``init_from`` a model,
then sb3-contrib's MaskablePPO against the opponent pool (:mod:`.selfplay`: ``random``,
``greedy`` and frozen snapshots), with periodic evaluations and checkpoints (:mod:`.callbacks`);
:func:`train_cli` is what ``shelfie train --algo maskable_ppo`` runs.

The run directory holds ``config.json``, ``progress.csv``, ``bc.json``, ``tb/`` (TensorBoard:
``charts/`` and ``losses/``), ``eval.jsonl``, ``latest.zip``/``.json``,
``best.zip``/``.json``, ``pool.npz``, and ``distilled.zip`` (the network right
after the warm start, with its card).
"""

from __future__ import annotations

import json
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from shelfie_env.bots.learned.card import CheckpointMismatchError
from shelfie_env.train import messages as console
from shelfie_env.train.checkpoint import export_weights, load_model, load_weights, name_model, save_model
from shelfie_env.train.maskable_ppo.config import TrainConfig
from shelfie_env.train.messages import config_flags


def rollout_size(cfg: TrainConfig) -> int:
    """Learner steps per PPO rollout: training runs in whole rollouts."""
    return cfg.n_envs * cfg.n_steps


def planned_steps(cfg: TrainConfig, done: int = 0) -> int:
    """The step count a run from ``done`` steps ends at: ``total_steps`` rounded up to whole rollouts."""
    remaining = cfg.total_steps - done
    if remaining <= 0:
        return done
    rollout = rollout_size(cfg)
    return done + -(-remaining // rollout) * rollout


def build_vec_env(cfg: TrainConfig, seed_offset: int = 0) -> tuple[Any, Any]:
    """The training VecEnv (monitored) and a callable returning the pool state of env 0."""
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from shelfie_env.train.maskable_ppo.selfplay import OpponentPool, SelfPlayEnv, batched_selfplay_env

    def new_pool(seed: int) -> OpponentPool | None:
        if cfg.players == 1:
            return None
        return OpponentPool(
            cfg.opp_random,
            cfg.opp_greedy,
            cfg.opp_latest,
            cfg.pool_size,
            cfg.snapshot_deterministic,
            seed=seed,
        )

    pools: list[OpponentPool] = []
    if cfg.batched:
        seed = cfg.seed * 1000 + seed_offset
        pool = new_pool(seed)
        venv = batched_selfplay_env(
            cfg.players, cfg.n_envs, pool, cfg.margin_coef, cfg.solo_reward_scale, seed
        )
        venv.seed(seed)
        return venv, (pool.state if pool is not None else dict)

    def factory(i: int):
        def make_env():
            seed = cfg.seed * 1000 + seed_offset + i
            pool = new_pool(seed)
            if pool is not None:
                pools.append(pool)
            env = SelfPlayEnv(cfg.players, pool, cfg.margin_coef, cfg.solo_reward_scale, seed=seed)
            return Monitor(env, info_keywords=("win",) if cfg.players > 1 else ())

        return make_env

    venv = DummyVecEnv([factory(i) for i in range(cfg.n_envs)])
    venv.seed(cfg.seed * 1000 + seed_offset)

    def pool_state() -> dict:
        return pools[0].state() if pools else {}

    return venv, pool_state


def opponent_pools(venv: Any) -> list:
    """The opponent pools of a training VecEnv (one per scalar env, or the batched env's one)."""
    if getattr(venv, "pool", None) is not None:
        return [venv.pool]
    return [env.get_wrapper_attr("pool") for env in getattr(venv, "envs", [])]


def train(cfg: TrainConfig, resume: bool = False, preset: str | None = None) -> Path:
    """Train (or resume) the run in ``cfg.run_dir``; returns the run directory.

    ``preset`` (the ``--config`` the fields came from) is written into every card.
    """
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.logger import CSVOutputFormat, HumanOutputFormat, Logger

    from shelfie_env.bots.learned.card import make_card
    from shelfie_env.train.maskable_ppo.callbacks import (
        CheckpointCallback,
        EvalCallback,
        RenamedTensorBoard,
        SelfPlayCallback,
    )

    torch.set_num_threads(1)
    run_dir = Path(cfg.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    latest = run_dir / "latest.zip"
    if resume and not latest.is_file():
        raise FileNotFoundError(f"--resume: no checkpoint {latest}")
    if not resume and latest.is_file():
        raise FileExistsError(f"{run_dir} already holds a run; pass --resume or choose another --run-dir")
    (run_dir / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
    source = f" (config {preset})" if preset else ""
    print(f"[train] {describe(cfg)}{source} -> {run_dir}", flush=True)

    prior_wall = 0.0
    if resume:
        prior = json.loads((run_dir / "latest.json").read_text())
        prior_wall = float(prior.get("wall_time_s", 0.0))
        preset = preset or prior.get("preset")
    venv, pool_state = build_vec_env(cfg, seed_offset=int(prior_wall) if resume else 0)
    start = time.time()

    def card_fn(steps: int, evaluation: dict) -> dict:
        cmd = train_command(cfg)
        return make_card(
            cfg.players,
            config=cfg.to_dict(),
            steps=steps,
            wall_time_s=prior_wall + time.time() - start,
            evaluation=evaluation,
            extra={"train_command": cmd, "preset": preset, "teacher": teacher_of(cfg)},
        )

    if resume:
        # hyper-parameters of the (possibly edited) config replace the saved ones
        overrides = {
            "learning_rate": cfg.learning_rate,
            "ent_coef": cfg.ent_coef,
            "vf_coef": cfg.vf_coef,
            "clip_range": cfg.clip_range,
            "n_epochs": cfg.n_epochs,
            "gae_lambda": cfg.gae_lambda,
        }
        model, _ = load_model(latest, cfg.players, env=venv, custom_objects=overrides)
        pool_file = run_dir / "pool.npz"
        if cfg.players > 1 and pool_file.is_file():
            with np.load(pool_file) as data:
                for pool in opponent_pools(venv):
                    pool.load_state(data)
        print(f"resumed {latest} at {model.num_timesteps} steps", flush=True)
    else:
        act = torch.nn.Tanh if cfg.activation == "tanh" else torch.nn.ReLU
        policy_kwargs: dict[str, Any] = {
            "net_arch": {"pi": list(cfg.net_arch), "vf": list(cfg.net_arch)},
            "activation_fn": act,
        }
        policy: Any = "MlpPolicy"
        if cfg.policy_head == "expect":
            from shelfie_env.train.maskable_ppo.policy import ExpectHeadPolicy

            policy = ExpectHeadPolicy
            policy_kwargs.update(players=cfg.players, set_arch=list(cfg.net_arch))
        model = MaskablePPO(
            policy,
            venv,
            learning_rate=cfg.learning_rate,
            n_steps=cfg.n_steps,
            batch_size=cfg.batch_size,
            n_epochs=cfg.n_epochs,
            gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda,
            clip_range=cfg.clip_range,
            ent_coef=cfg.ent_coef,
            vf_coef=cfg.vf_coef,
            seed=cfg.seed,
            device="cpu",
            verbose=0,
            policy_kwargs=policy_kwargs,
        )
    if not resume and cfg.init_from:
        start_from(model, cfg)
    elif not resume and cfg.bc_games > 0 and cfg.bc_epochs > 0:
        warm_start(model, cfg, run_dir)
        # the distilled network before any PPO update, for comparison or --init-from
        save_model(model, run_dir / "distilled.zip", card_fn(0, {}), optimizer_state=False)
    model.set_logger(
        Logger(
            str(run_dir),
            [
                HumanOutputFormat(sys.stdout),
                CSVOutputFormat(str(run_dir / "progress.csv")),
                RenamedTensorBoard(str(run_dir / "tb")),
            ],
        )
    )
    evaluator = EvalCallback(run_dir, cfg.players, cfg.eval_every, cfg.eval_games, card_fn, deals=cfg.deals)
    callbacks = [
        evaluator,
        CheckpointCallback(run_dir, cfg.save_every, card_fn, pool_state if cfg.players > 1 else None),
    ]
    if cfg.players > 1:
        callbacks.insert(0, SelfPlayCallback(cfg.snapshot_every))
        if resume and any(pool.snapshots for pool in opponent_pools(venv)):
            callbacks[0]._last = model.num_timesteps
    remaining = planned_steps(cfg, model.num_timesteps) - model.num_timesteps
    if remaining > 0:
        model.learn(
            remaining,
            callback=CallbackList(callbacks),
            reset_num_timesteps=not resume,
            progress_bar=cfg.progress,
        )
        if cfg.eval_games and evaluator.last_steps != model.num_timesteps:
            evaluator.evaluate()  # the final network is a candidate for best.zip too
    else:
        print(f"already at {model.num_timesteps} >= total_steps {cfg.total_steps}", flush=True)
    venv.close()
    return run_dir


def teacher_of(cfg: TrainConfig) -> str:
    """What the network learned from besides its own games: a bot spec, a model, or ``none``."""
    if cfg.init_from:
        return f"init_from {cfg.init_from}"
    if cfg.bc_games > 0 and cfg.bc_epochs > 0:
        return cfg.bc_teacher
    return "none"


def describe(cfg: TrainConfig) -> str:
    """One line saying what a run will do."""
    who = "solo" if cfg.players == 1 else f"{cfg.players} players"
    warm = (
        f"init from {cfg.init_from}"
        if cfg.init_from
        else f"warm start: {cfg.bc_games} {cfg.bc_teacher} games + {cfg.bc_dagger_rounds} DAgger round(s)"
        if cfg.bc_games and cfg.bc_epochs
        else "from random weights"
    )
    rollout = rollout_size(cfg)
    planned = planned_steps(cfg)
    steps = f"{cfg.total_steps:,} PPO steps"
    if planned != cfg.total_steps:
        steps += f" (rounded up to {planned:,}: {planned // rollout} whole rollouts of {rollout:,})"
    return (
        f"{who}, {steps}, {cfg.policy_head} head {cfg.net_arch}, {warm}, "
        f"{'batched' if cfg.batched else 'scalar'} envs x{cfg.n_envs}"
    )


def train_command(cfg: TrainConfig) -> str:
    """The ``shelfie train`` command line that reproduces ``cfg`` (every field, booleans included;
    shell-quoted, so an empty ``init_from`` reads ``--init-from ''``)."""
    return f"shelfie train --algo maskable_ppo {config_flags(cfg.to_dict())}"


def start_from(model: Any, cfg: TrainConfig) -> None:
    """Copy the network of model ``cfg.init_from`` (``.npz`` or ``.zip``) into ``model``."""
    from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card

    card = load_card(cfg.init_from, cfg.players)
    theirs = card.get("config", {})
    for key in ("policy_head", "net_arch", "activation"):
        default = getattr(TrainConfig(), key)
        if theirs.get(key, default) != getattr(cfg, key):
            raise CheckpointMismatchError(
                f"--init-from {cfg.init_from}: its {key} is {theirs.get(key, default)!r}, "
                f"this run's is {getattr(cfg, key)!r}"
            )
    load_weights(model, cfg.init_from, cfg.players)
    print(f"[init] network from {cfg.init_from} ({card.get('steps', 0)} steps)", flush=True)


def teacher_cache_path(cfg: TrainConfig, run_dir: Path, teacher: Any, *, valued: bool, sets: bool) -> Path:
    """Where the warm start's teacher data is cached: ``<run_dir>/../teacher/<name>.npz``.

    The name carries everything the recorded data depends on: the teacher and,
    for a teacher with parameters (the planner's ``weights``, or the settings
    of any other bot's spec), a fingerprint of them, so data recorded before
    its defaults changed is never reused; the players, games, seed and reward
    settings; whether action values and placement values were recorded; the
    observation layout.
    """
    from shelfie_env.bots.spec import parse_spec
    from shelfie_env.observation.vector import OBS_VERSION

    name, settings = parse_spec(cfg.bc_teacher)
    # The planner's full weights (defaults included); for any other bot, the spec's own settings.
    params = getattr(teacher, "weights", None)
    if params is None and settings:
        params = sorted(settings.items())
    teacher_tag = f"_w{zlib.crc32(repr(params).encode()):08x}" if params is not None else ""
    return (
        run_dir.parent
        / "teacher"
        / (
            f"{name}{teacher_tag}_{cfg.players}p_{cfg.bc_games}g_seed{cfg.seed}_"
            f"g{cfg.gamma}_m{cfg.margin_coef}_s{cfg.solo_reward_scale}{'_q' if valued else ''}"
            f"{'_sv' if sets else ''}_obs{OBS_VERSION}.npz"
        )
    )


def warm_start(model: Any, cfg: TrainConfig, run_dir: Path) -> None:
    """Behaviour cloning of ``cfg.bc_teacher`` (teacher data cached in ``<run_dir>/../teacher/``)."""
    import numpy as np

    from shelfie_env.bots.learned.bot import PPOBot
    from shelfie_env.bots.learned.policy import NumpyPolicy
    from shelfie_env.bots.spec import build_bot
    from shelfie_env.train.maskable_ppo.bc import clone, merge, record_games, reports_values

    teacher = build_bot(cfg.bc_teacher)
    valued = reports_values(teacher)
    # the expectimax head learns the planner's placement values (shelfie_env/train/maskable_ppo/bc.py)
    sets = cfg.policy_head == "expect" and hasattr(teacher, "set_values_game")
    if cfg.bc_soft_tau > 0 and not valued:
        raise ValueError(
            f"bc_soft_tau > 0 needs a teacher that reports action values (planner), not {cfg.bc_teacher!r}"
        )
    cache = teacher_cache_path(cfg, run_dir, teacher, valued=valued, sets=sets)
    t0 = time.time()
    if cache.is_file():
        with np.load(cache) as f:
            data = {k: f[k] for k in f.files}
        print(f"[bc] teacher data from {cache}", flush=True)
    else:
        data = record_games(
            cfg.players,
            cfg.bc_games,
            cfg.bc_teacher,
            cfg.seed + 12345,
            cfg.gamma,
            cfg.margin_coef,
            cfg.solo_reward_scale,
            set_values=sets,
            progress="[bc] teacher",
        )
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(cache, **data)
        print(
            f"[bc] {len(data['actions'])} teacher decisions in {time.time() - t0:.0f}s -> {cache}", flush=True
        )
    metrics = clone(model, data, cfg.bc_epochs, seed=cfg.seed, tau=cfg.bc_soft_tau)
    for k in range(cfg.bc_dagger_rounds):
        t1 = time.time()
        learner = PPOBot(
            NumpyPolicy.from_sb3(model.policy), cfg.players, deterministic=False, seed=cfg.seed + k
        )
        extra = record_games(
            cfg.players,
            cfg.bc_dagger_games,
            cfg.bc_teacher,
            cfg.seed + 777 + k,
            cfg.gamma,
            cfg.margin_coef,
            cfg.solo_reward_scale,
            learner=learner,
            set_values=sets,
            progress=f"[bc] DAgger round {k + 1}:",
        )
        data = merge(data, extra)
        print(
            f"[bc] DAgger round {k + 1}: +{len(extra['actions'])} labelled positions "
            f"({time.time() - t1:.0f}s)",
            flush=True,
        )
        metrics = clone(model, data, cfg.bc_dagger_epochs, seed=cfg.seed + k + 1, tau=cfg.bc_soft_tau)
    (run_dir / "bc.json").write_text(
        json.dumps(
            {**metrics, "decisions": len(data["actions"]), "seconds": round(time.time() - t0, 1)}, indent=2
        )
        + "\n"
    )


def train_cli(
    cfg: TrainConfig, preset: str | None = None, resume: bool = False, export: Path | None = None
) -> int:
    """Run ``cfg`` as ``shelfie train --algo maskable_ppo`` does: the trainer's log, then the model and
    the command that plays it (or, on Ctrl-C, the command that continues the run); the exit status."""
    try:
        run_dir = train(cfg, resume=resume, preset=preset)
    except (FileExistsError, FileNotFoundError, CheckpointMismatchError) as exc:
        print(f"shelfie train: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(interrupted_message(cfg, export), file=sys.stderr, flush=True)
        return 130
    source = run_dir / f"{cfg.export_from}.zip"
    if not source.is_file():
        source = run_dir / "latest.zip"
    model_file = source
    if export is not None:
        model, card = load_model(source, cfg.players)
        model_file = export_weights(model, export, card)
        print(f"exported {source} -> {model_file} and {model_file.with_suffix('.json')}")
    else:
        model_file = name_model(run_dir, source)
    print(done_message(cfg, run_dir, model_file, source), flush=True)
    return 0


def done_message(cfg: TrainConfig, run_dir: Path, model_file: Path, source: Path) -> str:
    """The last lines of a run: steps trained, the model file and the command that plays it."""
    steps = 0
    card = run_dir / "latest.json"
    if card.is_file():
        steps = int(json.loads(card.read_text()).get("steps", 0))
    what = "the best periodic evaluation" if source.stem == "best" else "the network when training ended"
    origin = f"{source.name}: {what}" if model_file != source else what
    return console.done_message("train", f"{steps:,} steps", run_dir, model_file, origin, "ppo", cfg.players)


def interrupted_message(cfg: TrainConfig, export: Path | None) -> str:
    """What Ctrl-C prints: where the run stands and the command that continues it."""
    run_dir = Path(cfg.run_dir)
    extra = ("--export", str(export)) if export is not None else ()
    card = run_dir / "latest.json"
    where = None
    if card.is_file():
        steps = int(json.loads(card.read_text()).get("steps", 0))
        where = f"at {steps:,} steps ({card.with_suffix('.zip')})"
    return console.interrupted_message(run_dir, where, "train", *extra)
