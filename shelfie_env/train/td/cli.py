"""``shelfie train-td`` / ``python -m shelfie_env.train.td``: ``shelfie train --algo td``."""

from __future__ import annotations

import argparse

from shelfie_env.train import command
from shelfie_env.train.td import LEARNER

LEARNERS = {"td": LEARNER}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--resume``, ``--export`` and one flag per :class:`~.config.TDConfig` field."""
    command.add_arguments(parser, LEARNERS)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie train-td``."""
    return command.run(args, LEARNERS, "shelfie train-td")


def main(argv: list[str] | None = None) -> int:
    """``python -m shelfie_env.train.td ARGS``."""
    return command.main(LEARNERS, "python -m shelfie_env.train.td", argv, __doc__.splitlines()[0])
