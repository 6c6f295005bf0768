"""``python -m shelfie_env.train.ppo_afterstate ARGS``: ``shelfie train --algo ppo_afterstate ARGS``."""

import sys

from shelfie_env.train.ppo_afterstate import main

sys.exit(main())
