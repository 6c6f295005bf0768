"""``shelfie arena`` (alias ``shelfie eval``): the command line of the arena."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from shelfie_env.arena.deals import deal_start
from shelfie_env.arena.protocol import run_arena
from shelfie_env.arena.report import plot_run, record_in_card, to_markdown
from shelfie_env.arena.values import DEFAULT_LUCK
from shelfie_env.argtypes import number, output_file
from shelfie_env.bots import available
from shelfie_env.game.dice import DICE_MODES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``shelfie eval`` / ``shelfie arena``."""
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help=f"bot specs: a name ({', '.join(available())}) or name:key=value,... "
        "e.g. td:path=runs/x/td.npz or planner:threat=0.5",
    )
    parser.add_argument(
        "--players", type=number(int, 1, 4), default=2, help="players per game, 1-4 (default 2)"
    )
    parser.add_argument(
        "--field",
        default=None,
        metavar="SPEC",
        help="seat each BOT alone against PLAYERS-1 copies of this bot (e.g. --players 4 --field greedy)",
    )
    parser.add_argument(
        "--games", type=number(int, 1), default=200, help="games per group of bots (default 200)"
    )
    parser.add_argument(
        "--deals",
        type=deals_arg,
        default=None,
        metavar="SET",
        help="deal set: test (default; every reported number), selection (for choosing models), "
        "or a first dice seed N (game i is dealt seed N+i)",
    )
    parser.add_argument(
        "--seed",
        type=number(int, 0),
        default=None,
        help="same as --deals N: game i is dealt dice seed N+i",
    )
    parser.add_argument(
        "--dice",
        choices=DICE_MODES,
        default="tape",
        help="tape: common dice, the same faces for a seat at the same turn and roll whoever plays "
        "(default); stream: one random stream per game",
    )
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="play every deal under every rotation of the seats (GAMES must be a multiple of PLAYERS)",
    )
    parser.add_argument(
        "--permutations",
        action="store_true",
        help="with --duplicate: every permutation of the seats instead of the rotations",
    )
    parser.add_argument(
        "--luck",
        nargs="?",
        const=DEFAULT_LUCK,
        default=None,
        metavar="VALUE",
        help="also report luck-corrected results, luck measured with VALUE: td+planner (default: the mean "
        "of the luck the shipped td network of the table size and the planner's evaluation see), td, "
        "planner, or td:path=MODEL",
    )
    parser.add_argument("--workers", type=number(int, 1), default=None, help="processes (default: all cores)")
    parser.add_argument(
        "--out", type=output_file(".json", ".md"), default=None, help="write OUT.json and OUT.md"
    )
    parser.add_argument("--no-ratings", action="store_true", help="skip the OpenSkill ratings")
    parser.add_argument("--progress", action="store_true", help="print progress to stderr")
    parser.add_argument(
        "--record-card",
        type=Path,
        default=None,
        metavar="MODEL",
        help="also store the results and the command in MODEL's card (MODEL.json)",
    )
    parser.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="RUN",
        help="plot win rate vs steps from RUN/eval.jsonl (a run dir or the file)",
    )
    parser.add_argument(
        "--plot-out", type=output_file(), default=None, help="PNG path for --plot (default RUN/win_rate.png)"
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie eval`` / ``shelfie arena``."""
    command = getattr(args, "command", None) or "arena"
    try:
        if args.plot is not None:
            print(f"wrote {plot_run(args.plot, args.plot_out)}")
            if not args.bots:
                return 0
        if not args.bots:
            print(f"shelfie {command}: error: give at least one bot (or --plot RUN)", file=sys.stderr)
            return 2
        result = run_arena(
            args.bots,
            players=args.players,
            games=args.games,
            seed=args.seed,
            workers=args.workers,
            ratings=not args.no_ratings,
            progress=args.progress,
            field=args.field,
            deals=args.deals,
            dice=args.dice,
            duplicate=args.duplicate,
            permutations=args.permutations,
            luck=args.luck,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"shelfie {command}: error: {exc}", file=sys.stderr)
        return 2
    md = to_markdown(result)
    print(md)
    if args.out is not None:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
        out.with_suffix(".md").write_text(md)
        print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
    if args.record_card is not None:
        print(f"recorded in {record_in_card(args.record_card, result, command_line(args))}")
    return 0


def command_line(args: argparse.Namespace) -> str:
    """The ``shelfie arena`` command that reproduces ``args`` (without output flags)."""
    deals = getattr(args, "deals", None)
    if deals is None:
        deals = "test" if getattr(args, "seed", None) is None else str(args.seed)
    parts = [
        "shelfie arena",
        *args.bots,
        f"--players {args.players}",
        *([f"--field {args.field}"] if getattr(args, "field", None) else []),
        f"--games {args.games}",
        f"--deals {deals}",
        *([f"--dice {args.dice}"] if getattr(args, "dice", "tape") != "tape" else []),
        *(["--duplicate"] if getattr(args, "duplicate", False) else []),
        *(["--permutations"] if getattr(args, "permutations", False) else []),
        *([f"--luck {args.luck}"] if getattr(args, "luck", None) else []),
    ]
    return " ".join(parts)


def deals_arg(text: str) -> str:
    """An argparse ``type`` for ``--deals``: a deal set's name or a first seed, checked now."""
    try:
        deal_start(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shelfie_env.arena.cli",
        description="Play bots against each other over the same seeded dice.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
