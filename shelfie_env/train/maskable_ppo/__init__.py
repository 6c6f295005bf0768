"""MaskablePPO self-play (``shelfie train --algo maskable_ppo``), on sb3-contrib.

:mod:`.config` holds :class:`TrainConfig`; :mod:`.run` the run (warm start, PPO, checkpoints)
and what ``shelfie train`` runs; :mod:`.bc` the warm start by behaviour cloning;
:mod:`.selfplay` the training envs and the opponent pool; :mod:`.callbacks` the periodic
evaluations, snapshots and checkpoints; :mod:`.policy` the expectimax actor head.
The trainer needs the ``train`` extra; this package's face only needs the config.
"""

from shelfie_env.train.command import Learner
from shelfie_env.train.maskable_ppo.config import TrainConfig

LEARNER = Learner(
    TrainConfig,
    "sb3-contrib's MaskablePPO, warm-started by behaviour cloning of a teacher",
    "shelfie_env.train.maskable_ppo.run",
)

__all__ = ["LEARNER", "TrainConfig"]
