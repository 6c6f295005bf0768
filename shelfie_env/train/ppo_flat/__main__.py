import sys

from shelfie_env.train.ppo_flat.cli import main

sys.exit(main())
