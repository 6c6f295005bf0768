"""The after-state PPO (``shelfie train``, the default ``--algo ppo_afterstate``).

:mod:`.config` holds :class:`PPOAfterstateConfig`; :mod:`.ppo` the trainer and what
``shelfie train`` runs; :mod:`.rollout` plays an iteration's games on the batched engine;
:mod:`.torch_net` is the policy network. ``python -m shelfie_env.train.ppo_afterstate ARGS`` is
``shelfie train --algo ppo_afterstate ARGS``.
"""

from shelfie_env.train.command import Learner
from shelfie_env.train.ppo_afterstate.config import PPOAfterstateConfig
from shelfie_env.train.ppo_afterstate.ppo import (
    PPOAfterstateTrainer,
    RolloutSource,
    evaluate_policy,
    numpy_bot,
    train_cli,
)

LEARNER = Learner(
    PPOAfterstateConfig,
    "PPO with the after-state policy, from random weights, no teacher",
    "shelfie_env.train.ppo_afterstate.ppo",
)



def main(argv: list[str] | None = None) -> int:
    """``python -m shelfie_env.train.ppo_afterstate ARGS``: ``shelfie train --algo ppo_afterstate ARGS``."""
    from shelfie_env.train import command
    from shelfie_env.train.ppo_afterstate import ppo

    prog = "python -m shelfie_env.train.ppo_afterstate"
    return command.main({"ppo_afterstate": LEARNER}, prog, argv, (ppo.__doc__ or "").splitlines()[0])


__all__ = [
    "LEARNER",
    "PPOAfterstateConfig",
    "PPOAfterstateTrainer",
    "RolloutSource",
    "evaluate_policy",
    "main",
    "numpy_bot",
    "train_cli",
]
