"""``python -m shelfie_env.benchmark``: the same as ``shelfie bench``."""

import sys

from shelfie_env.benchmark.cli import main

sys.exit(main(prog="python -m shelfie_env.benchmark"))
