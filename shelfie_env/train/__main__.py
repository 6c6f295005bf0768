import sys

from shelfie_env.train.cli import main

sys.exit(main())
