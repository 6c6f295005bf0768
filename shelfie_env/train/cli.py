"""``shelfie train`` / ``python -m shelfie_env.train``: one command for every learner.

``--algo`` picks the learner; each is a subpackage with its own config:

* ``ppo_afterstate`` (the default) - PPO with the after-state policy, from random weights
  (:mod:`shelfie_env.train.ppo_afterstate`);
* ``maskable_ppo`` - sb3-contrib's MaskablePPO, warm-started by behaviour cloning
  (:mod:`shelfie_env.train.maskable_ppo`);
* ``td`` - TD(lambda) self-play of an after-state value network (:mod:`shelfie_env.train.td`;
  ``shelfie train-td`` is ``shelfie train --algo td``);
* ``ppo_flat`` - masked PPO with a flat policy head on the batched engine
  (:mod:`shelfie_env.train.ppo_flat`).

A ``--config`` (a preset such as ``ppo_afterstate_2p``, ``ppo_2p``, ``td_2p``, ``ppo_flat_2p``, or
a TOML/JSON file) or a resumed run says its own algorithm (its ``algo``, or the learner whose
config has all its fields); every config field of every learner is a flag, and a flag of another
learner is refused with its name. The run's first line names the algorithm and what chose it.
``--resume`` continues a run from its last checkpoint; ``--export x.npz`` writes the run's model
and card there. ``--backend rllib`` hands the flags to :mod:`shelfie_env.rllib.cli`.

The one import of this room that runs up is that hand-over: the RLlib league is a learner of its
own room (the ``scale`` extra), built on this room's field checks, expect head and console lines,
and ``shelfie train`` is the door users know.
"""

from __future__ import annotations

import argparse
from typing import Any

from shelfie_env.train import command
from shelfie_env.train.command import RLLIB_FLAGS, Learner
from shelfie_env.train.maskable_ppo import LEARNER as MASKABLE_PPO
from shelfie_env.train.ppo_afterstate import LEARNER as PPO_AFTERSTATE
from shelfie_env.train.ppo_flat import LEARNER as PPO_FLAT
from shelfie_env.train.td import LEARNER as TD

LEARNERS: dict[str, Learner] = {
    "ppo_afterstate": PPO_AFTERSTATE,
    "maskable_ppo": MASKABLE_PPO,
    "td": TD,
    "ppo_flat": PPO_FLAT,
}
"""``--algo`` -> its learner; the first is the default."""

ALGOS = tuple(LEARNERS)
DEFAULT_ALGO = ALGOS[0]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--algo``, ``--config``, ``--resume``, ``--export``, one flag per config field of every learner,
    ``--backend`` and the RLlib backend's flags."""
    command.add_arguments(parser, LEARNERS)
    parser.add_argument(
        "--backend",
        choices=("sb3", "rllib"),
        default=None,
        help="sb3: MaskablePPO in one process (the backend of --algo maskable_ppo); "
        "rllib: league self-play on Ray RLlib (docs/scale.md)",
    )
    group = parser.add_argument_group("RLlib backend (--backend rllib)")
    group.add_argument(
        "--num-env-runners", type=int, default=None, help="remote sampling processes (default 0)"
    )
    group.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join: auto, or ray://HOST:10001 (default: a local Ray)",
    )
    group.add_argument(
        "--train-batch-size", type=int, default=None, help="env steps per iteration (default 4000)"
    )


def choose_algo(args: argparse.Namespace) -> tuple[str, str]:
    """The algorithm of a ``shelfie train`` command line and what chose it (:func:`.command.choose_algo`)."""
    return command.choose_algo(args, LEARNERS)


def config_from_args(args: argparse.Namespace) -> Any:
    """The config a ``shelfie train`` command line trains: its algorithm's, from the resumed run,
    ``--config`` and the flags."""
    algo, chosen_by = choose_algo(args)
    command.check_options(args, algo, chosen_by, LEARNERS)
    return command.config_from_args(args, algo, LEARNERS)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie train``."""
    if getattr(args, "backend", None) == "rllib":
        from shelfie_env.rllib.cli import run as run_rllib

        return run_rllib(args)
    return command.run(args, LEARNERS)


def main(argv: list[str] | None = None) -> int:
    """``python -m shelfie_env.train ARGS``: ``shelfie train ARGS``."""
    parser = argparse.ArgumentParser(prog="python -m shelfie_env.train", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


__all__ = [
    "ALGOS",
    "DEFAULT_ALGO",
    "LEARNERS",
    "RLLIB_FLAGS",
    "add_arguments",
    "choose_algo",
    "config_from_args",
    "run",
]
