"""``python -m shelfie_env.train.ppo_afterstate ARGS``: ``shelfie train --algo ppo_afterstate ARGS``."""

import sys

from shelfie_env.train import command
from shelfie_env.train.ppo_afterstate import LEARNER, ppo

sys.exit(
    command.main(
        {"ppo_afterstate": LEARNER}, "python -m shelfie_env.train.ppo_afterstate", None, ppo.__doc__.splitlines()[0]
    )
)
