"""``td``: TD(lambda) on after-state values with the planner's exact search over the dice.

The ``td_Np`` recipe of the task's table size (network 2 x 128, its step sizes, lambda 0.7), trained against
the protocol's opponents (``random`` or ``greedy``, 1/2 each per seat) instead of itself; 200 games an iteration, so a run ends at the first
iteration past its budget. It does not checkpoint.
"""

from __future__ import annotations

import tempfile

from shelfie_env.benchmark.learners import Run, Trained

PRESETS = {2: "td_2p", 3: "td_3p", 4: "td_4p"}
"""The recipe whose network and step sizes a run at each table size takes."""


def train(run: Run) -> Trained:
    from threadpoolctl import threadpool_limits

    from shelfie_env.bots.learned.value import ValueBot
    from shelfie_env.train.config import read_config
    from shelfie_env.train.td import TDConfig, TDTrainer

    recipe = {k: v for k, v in read_config(PRESETS[run.players]).items() if k not in ("algo", "eval_opponents")}
    curve = run.curve
    with tempfile.TemporaryDirectory() as tmp, threadpool_limits(1):
        cfg = TDConfig(
            **{
                **recipe,
                "seed": run.seed,
                "players": run.players,
                "opp_greedy": 0.5,
                "opp_random": 0.5,
                "eval_every": 0,
                "run_dir": tmp,
            }
        )
        trainer = TDTrainer(cfg)
        with trainer.workers() as pool:
            while trainer.decisions < run.steps:
                trainer.step(pool, log=lambda s: None)
                if curve.due(trainer.decisions):
                    curve.add(trainer.decisions, ValueBot(trainer.numpy_net()))
        wall = curve.train_s()
        bot = ValueBot(trainer.numpy_net())
    curve.add(trainer.decisions, bot, final=True)
    return Trained(bot, wall, int(trainer.decisions))
