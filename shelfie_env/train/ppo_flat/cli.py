"""What ``shelfie train --algo ppo_flat`` runs; ``python -m shelfie_env.train.ppo_flat ARGS`` is that command.

Every field of :class:`~shelfie_env.train.ppo_flat.ppo.PPOFlatConfig` is a flag
(``--total-steps 10M --obs features --stop-bias 4``); ``--config`` reads a preset
(``ppo_flat_2p``) or a TOML/JSON file first, and ``--resume`` continues the run in
``--run-dir`` from its checkpoint exactly where it stopped (``--total-steps`` may then be
raised to train further; no other field may change).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from shelfie_env.train import messages as console
from shelfie_env.train.ppo_flat.ppo import ALGO, PPOFlatConfig, Trainer


def describe(cfg: PPOFlatConfig) -> str:
    """One line saying what a run will do."""
    if cfg.players == 1:
        table = "solo (1 player)"
        seats = f"none; reward {cfg.point_reward:g} per point"
    else:
        table = f"{cfg.players} players"
        seats = f"random {cfg.opp_random:.0%}, greedy {cfg.opp_greedy:.0%}"
        if cfg.opp_random + cfg.opp_greedy < 1.0:
            seats += ", snapshots the rest"
    return (
        f"flat masked PPO, {table}, {cfg.total_steps:,} learner decisions from random weights, "
        f"obs {cfg.obs}, reroll {cfg.reroll}, network {list(cfg.net_arch)}, {cfg.num_envs} games x "
        f"{cfg.num_steps} decisions per iteration, opponents: {seats}"
    )


def _trainer(cfg: PPOFlatConfig, resume: bool) -> Trainer:
    """A fresh trainer of ``cfg`` (its config written to ``config.json``), or the run it resumes."""
    run_dir = Path(cfg.run_dir)
    checkpoint = run_dir / "latest.pt"
    if not resume:
        cfg.check()
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.json").write_text(
            json.dumps({"algo": ALGO, **dataclasses.asdict(cfg)}, indent=2) + "\n"
        )
        return Trainer(cfg)
    if not checkpoint.is_file():
        raise FileNotFoundError(f"--resume: no checkpoint {checkpoint}")
    saved = json.loads((run_dir / "config.json").read_text())
    changes = {k: v for k, v in dataclasses.asdict(cfg).items() if saved.get(k) != v}
    trainer = Trainer.resume(checkpoint, **changes)
    if changes:
        (run_dir / "config.json").write_text(
            json.dumps({"algo": ALGO, **dataclasses.asdict(cfg)}, indent=2) + "\n"
        )
    return trainer


def train_cli(
    cfg: PPOFlatConfig, preset: str | None = None, resume: bool = False, export: Path | None = None
) -> int:
    """Run ``cfg`` as ``shelfie train --algo ppo_flat`` does: a line per iteration, then the model and
    the command that plays it (or, on Ctrl-C, the command that continues the run); the exit status."""
    import torch

    from shelfie_env.train.checkpoint import copy_model, name_model

    torch.set_num_threads(1)
    run_dir = Path(cfg.run_dir)
    try:
        trainer = _trainer(cfg, resume)
    except (ValueError, FileNotFoundError) as exc:
        print(f"shelfie train: error: {exc}", file=sys.stderr)
        return 2
    recipe = f" (config {preset})" if preset else ""
    print(f"[ppo_flat] {describe(trainer.config)}{recipe} -> {run_dir}", flush=True)
    try:
        source = trainer.train(out=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        where = f"at {trainer.global_step:,} steps ({run_dir / 'latest.pt'})" if trainer.iteration else None
        extra = ("--export", str(export)) if export is not None else ()
        print(console.interrupted_message(run_dir, where, "train", *extra), file=sys.stderr, flush=True)
        return 130
    assert source is not None  # train() without stop_after runs to the end
    if export is not None:
        model = copy_model(source, export)
        print(f"exported {source} -> {model} and {model.with_suffix('.json')}", flush=True)
    else:
        model = name_model(run_dir, source)
    trained = f"{trainer.global_step:,} steps"
    origin = f"{source.name}: the network when training ended"
    print(console.done_message("ppo_flat", trained, run_dir, model, origin, "ppo", cfg.players), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m shelfie_env.train.ppo_flat ARGS``: ``shelfie train --algo ppo_flat ARGS``."""
    from shelfie_env.train import command
    from shelfie_env.train.ppo_flat import LEARNER

    return command.main(
        {ALGO: LEARNER}, "python -m shelfie_env.train.ppo_flat", argv, __doc__.splitlines()[0]
    )
