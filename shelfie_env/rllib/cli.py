"""``shelfie train --backend rllib``: the shared training flags mapped onto :class:`RLlibConfig`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

SHARED = {
    "players": "players",
    "total_steps": "total_steps",
    "seed": "seed",
    "n_envs": "num_envs_per_env_runner",
    "batch_size": "minibatch_size",
    "n_epochs": "num_epochs",
    "learning_rate": "learning_rate",
    "gamma": "gamma",
    "ent_coef": "entropy_coeff",
    "net_arch": "hidden",
    "policy_head": "head",
    "opp_random": "p_random",
    "opp_greedy": "p_greedy",
    "init_from": "init_from",
    "pool_size": "snapshots",
    "snapshot_every": "snapshot_every",
    "eval_every": "eval_every",
    "eval_games": "eval_games",
    "deals": "deals",
    "save_every": "save_every",
    "run_dir": "run_dir",
}
"""``shelfie train`` flag (TrainConfig field) -> RLlibConfig field."""

OWN = ("num_env_runners", "address", "train_batch_size")
"""Flags only the RLlib backend reads (``shelfie train`` declares them)."""

NOT_FIELDS = {"command", "algo", "config", "resume", "export", "backend", *OWN}
"""Arguments of ``shelfie train`` that are not config fields of a learner."""


def config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`RLlibConfig` of the flags (and of the resumed run's ``config.json``)."""
    from shelfie_env.rllib.train import RLlibConfig

    fields = {f.name for f in dataclasses.fields(RLlibConfig)}
    if getattr(args, "algo", None) not in (None, "maskable_ppo"):
        raise ValueError(f"--backend rllib trains its own PPO, not --algo {args.algo} (drop --backend rllib)")
    data: dict[str, Any] = {}
    if getattr(args, "resume", False):
        path = Path(args.run_dir or RLlibConfig.run_dir) / "config.json"
        if not path.is_file():
            raise FileNotFoundError(f"--resume: no {path}")
        data.update(json.loads(path.read_text()))
    if getattr(args, "config", None):
        from shelfie_env.train.config import read_config

        extra = read_config(args.config)
        algo = extra.pop("algo", "maskable_ppo")
        if algo != "maskable_ppo":
            raise ValueError(
                f"--config {args.config} is a config of --algo {algo}, not of --backend rllib; "
                f"run: shelfie train --config {args.config}"
            )
        unknown = sorted(set(extra) - fields - {"backend"})
        if unknown:
            raise ValueError(f"{args.config}: not RLlib config field(s): {', '.join(unknown)}")
        data.update({k: v for k, v in extra.items() if k != "backend"})
    unused = []
    flags: dict[str, str] = {}  # RLlibConfig field -> the flag's field that set it
    for name in sorted(vars(args)):
        value = getattr(args, name)
        if name in NOT_FIELDS or name.startswith("_"):
            continue
        if value is None:
            continue
        if name in SHARED:
            data[SHARED[name]] = list(value) if isinstance(value, list) else value
            flags[SHARED[name]] = name
        else:
            unused.append("--" + name.replace("_", "-"))
    if unused:
        raise ValueError(f"not used by --backend rllib: {', '.join(unused)}")
    for name in OWN:
        value = getattr(args, name, None)
        if value is not None:
            data[name] = value
            flags[name] = name
    if data.get("init_from") is not None:
        data["init_from"] = str(data["init_from"])
    try:
        return RLlibConfig(**data)
    except ValueError as exc:
        from shelfie_env.train.messages import name_flags

        raise ValueError(name_flags(str(exc), flags)) from None


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie train --backend rllib``."""
    from shelfie_env.rllib.train import RLlibTrainer, describe
    from shelfie_env.train.messages import done_message, interrupted_message

    export = getattr(args, "export", None)
    cfg = None
    try:
        cfg = config_from_args(args)
        print(f"[rllib] {describe(cfg)} -> {cfg.run_dir}", flush=True)
        run_dir = RLlibTrainer(cfg).run(
            resume=bool(getattr(args, "resume", False)),
            export=str(export) if export else None,
            log=lambda s: print(s, flush=True),
        )
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"shelfie train: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        run_dir = Path(cfg.run_dir if cfg is not None else ".")
        where = None
        if cfg is not None and (run_dir / "league.json").is_file():
            steps = int(json.loads((run_dir / "league.json").read_text()).get("env_steps", 0))
            where = f"at {steps:,} env steps ({run_dir / 'checkpoint'})"
        extra = ("--export", str(export)) if export else ()
        print(
            interrupted_message(run_dir, where, "train", "--backend", "rllib", *extra),
            file=sys.stderr,
            flush=True,
        )
        return 130
    state = json.loads((run_dir / "league.json").read_text())
    model = Path(export).with_suffix(".npz") if export else run_dir / "latest.npz"
    trained = f"{int(state['env_steps']):,} env steps"
    print(
        done_message("rllib", trained, run_dir, model, "the learner when training ended", "ppo", cfg.players),
        flush=True,
    )
    return 0
