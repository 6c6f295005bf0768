import sys

from shelfie_env.train.ppo_afterstate.ppo import main

sys.exit(main())
