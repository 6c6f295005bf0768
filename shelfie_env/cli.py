"""The ``shelfie`` console command.

``shelfie play`` (:mod:`shelfie_env.play.terminal`), ``shelfie replay``
(:mod:`shelfie_env.play.replay`) and ``shelfie rating`` (:mod:`shelfie_env.play.rating_cli`)
need only the core package. The other
subcommands (:data:`LAZY_COMMANDS`: ``serve``, ``arena``/``eval``, ``errors``,
``levels``, ``rate``, ``train``, ``train-td``, ``solo``, ``bench``) live in their own modules (each with
``add_arguments(parser)`` and ``run(args) -> int``) and are imported only when
that subcommand is invoked. A subcommand whose module (or one of its
dependencies) is not installed still shows in ``--help`` and exits with status
2 and a message naming the extra to install.

Errors have argparse's form, naming the subcommand: ``shelfie play: error: ...``; an
unknown option is reported by its subcommand's parser, under that subcommand's usage.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from shelfie_env.play import rating_cli
from shelfie_env.play.replay import add_replay_arguments, run_replay
from shelfie_env.play.terminal import HELP, add_play_arguments, run_play

# subcommand -> (module, one-line help, extra that provides its dependencies)
LAZY_COMMANDS: dict[str, tuple[str, str, str]] = {
    "serve": ("shelfie_env.play.web.cli", "serve the web table (play in a browser)", "web"),
    "arena": (
        "shelfie_env.arena.cli",
        "play bots against each other: win rates, duplicate matches, luck-corrected results, ratings",
        "train",
    ),
    "eval": ("shelfie_env.arena.cli", "another name of `shelfie arena` (the same command)", "train"),
    "errors": (
        "shelfie_env.arena.analysis.error_rates",
        "a bot's error rate: value lost per decision against rollout-labelled positions",
        "train",
    ),
    "levels": (
        "shelfie_env.arena.ladder",
        "the ladder: every level's error rate, rating and score against the level below; `levels measure` measures one",
        "train",
    ),
    "rate": (
        "shelfie_env.arena.rate_agent",
        "rate a bot on the ladder: its rating and 95 % interval from games against the levels near it",
        "train",
    ),
    "train": (
        "shelfie_env.train.cli",
        "train a bot by self-play (--algo ppo_afterstate, the default; maskable_ppo; td; ppo_flat)",
        "train",
    ),
    "train-td": (
        "shelfie_env.train.td.cli",
        "train an after-state value network by TD(lambda) self-play (shelfie train --algo td)",
        "train",
    ),
    "solo": (
        "shelfie_env.solo.cli",
        "the solo game solved: `solo info` (E*, the shipped table), `solo solve` (recompute it)",
        "fast",
    ),
    "bench": (
        "shelfie_env.benchmark.cli",
        "the RL benchmark: train learners from random weights, rate them luck-aware; `bench report` tables them",
        "train",
    ),
}


# --------------------------------------------------------------------------- dispatcher
class _Unavailable(Exception):
    pass


def _import_command(name: str) -> ModuleType:
    module_name, _, extra = LAZY_COMMANDS[name]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise _Unavailable(f"not available in this installation (no module {module_name})") from None
        raise _Unavailable(
            f"not available in this installation: it needs the missing module "
            f"{exc.name!r} (pip install 'shelfie-env[{extra}]')"
        ) from None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``shelfie`` parser; only ``command``'s lazy module (if any) is imported."""
    parser = argparse.ArgumentParser(
        prog="shelfie", description="My Shelfie: The Dice Game — play, watch, evaluate and train bots."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    play = sub.add_parser(
        "play",
        help="play in the terminal against bots",
        description="Play against 1-3 bots in the terminal.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_play_arguments(play)
    play.set_defaults(_run=run_play, _parser=play)
    replay = sub.add_parser("replay", help="show a saved replay file", description="Show a saved replay.")
    add_replay_arguments(replay)
    replay.set_defaults(_run=run_replay, _parser=replay)
    rating = sub.add_parser(
        "rating",
        help="your rating from the games you played against the levels (shelfie play --level N)",
        description="Your rating (Glicko-2 on the ladder's scale, greedy = 1500) with its uncertainty, "
        "and your latest games with the change each made.",
    )
    rating_cli.add_arguments(rating)
    rating.set_defaults(_run=rating_cli.run, _parser=rating)
    for name, (_module_name, help_text, _) in LAZY_COMMANDS.items():
        # ``help`` is %-formatted by argparse, a ``description`` is printed as written
        sp = sub.add_parser(name, help=help_text.replace("%", "%%"), description=help_text)
        sp.set_defaults(_parser=sp)
        if name != command:
            continue
        try:
            module = _import_command(name)
        except _Unavailable as exc:
            sp.set_defaults(_unavailable=str(exc))
            continue
        module.add_arguments(sp)
        sp.set_defaults(_run=module.run)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    for token in argv:
        if not token.startswith("-"):
            return token
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``shelfie`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command_in(argv)
    parser = build_parser(command if command in LAZY_COMMANDS else None)
    args, unknown = parser.parse_known_args(argv)
    if getattr(args, "_unavailable", None):
        print(f"shelfie {args.command}: error: {args._unavailable}", file=sys.stderr)
        return 2
    if unknown:
        # the subcommand's parser reports them, under its own usage (the top level would show its usage)
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "_run", None)
    if run is None:
        parser.print_help()
        return 2
    try:
        return int(run(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout (``| head``) stopped reading: nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())
