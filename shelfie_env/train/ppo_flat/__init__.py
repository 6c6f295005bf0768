"""The flat masked PPO learner (``shelfie train --algo ppo_flat``): :mod:`.ppo` is the whole algorithm,
:mod:`.cli` what ``shelfie train`` runs. ``python -m shelfie_env.train.ppo_flat ARGS`` is
``shelfie train --algo ppo_flat ARGS``."""

from shelfie_env.train.command import Learner
from shelfie_env.train.ppo_flat.ppo import (
    ALGO,
    SOLO_SCORE_REWARD,
    Agent,
    PPOFlatConfig,
    Trainer,
    play_greedy,
    play_solo,
)

LEARNER = Learner(
    PPOFlatConfig,
    "masked PPO with a flat policy head on the batched engine, from random weights",
    "shelfie_env.train.ppo_flat.cli",
)

__all__ = [
    "ALGO",
    "LEARNER",
    "SOLO_SCORE_REWARD",
    "Agent",
    "PPOFlatConfig",
    "Trainer",
    "play_greedy",
    "play_solo",
]
