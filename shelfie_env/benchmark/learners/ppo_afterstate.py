"""``ppo_afterstate``: the no-teacher after-state PPO trainer with the ``ppo_afterstate_2p`` preset's settings
at the task's table size.

From random weights, against its recipe's opponents (itself, ``greedy`` in a share ``opp_greedy`` of the
seats: its batched rollouts have no ``random`` seat); its games are played in a worker process while it
updates. An iteration plays 128 games to the end, so small budgets end past their mark. It does not
checkpoint.
"""

from __future__ import annotations

import tempfile

from shelfie_env.benchmark.learners import Run, Trained

PRESET = "ppo_afterstate_2p"


def train(run: Run) -> Trained:
    import torch

    from shelfie_env.train.config import read_config
    from shelfie_env.train.ppo_afterstate import (
        PPOAfterstateConfig,
        PPOAfterstateTrainer,
        RolloutSource,
        numpy_bot,
    )

    recipe = {k: v for k, v in read_config(PRESET).items() if k != "algo"}
    curve = run.curve
    with tempfile.TemporaryDirectory() as tmp:
        cfg = PPOAfterstateConfig(
            **{**recipe, "seed": run.seed, "players": run.players, "total_steps": run.steps, "eval_games": 0, "run_dir": tmp}
        )
        torch.set_num_threads(cfg.threads)
        trainer = PPOAfterstateTrainer(cfg, PRESET)
        trainer.source = RolloutSource(cfg)
        try:
            while trainer.steps < run.steps:
                trainer.iterate(log=lambda s: None)
                if curve.due(trainer.steps):
                    curve.add(trainer.steps, numpy_bot(trainer.net, cfg))
        finally:
            trainer.source.close()
        wall = curve.train_s()
        bot = numpy_bot(trainer.net, cfg)
    curve.add(trainer.steps, bot, final=True)
    return Trained(bot, wall, int(trainer.steps))
