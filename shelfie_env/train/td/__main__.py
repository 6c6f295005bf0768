import sys

from shelfie_env.train.td.cli import main

sys.exit(main())
