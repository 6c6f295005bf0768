"""``shelfie arena`` (alias ``shelfie eval``): the command line of the arena."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from shelfie_env.arena.protocol import run_arena
from shelfie_env.arena.report import plot_run, record_in_card, to_markdown


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``shelfie eval`` / ``shelfie arena``."""
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="bot specs: a name (random, greedy, planner, ppo) or name:key=value,... "
        "e.g. ppo:path=runs/x/best.zip,deterministic=false",
    )
    parser.add_argument("--players", type=int, default=2, help="players per game, 1-4 (default 2)")
    parser.add_argument(
        "--field",
        default=None,
        metavar="SPEC",
        help="seat each BOT alone against PLAYERS-1 copies of this bot (e.g. --players 4 --field greedy)",
    )
    parser.add_argument("--games", type=int, default=200, help="games per group of bots (default 200)")
    parser.add_argument(
        "--seed", type=int, default=0, help="dice seed of game 0; game i uses seed+i (default 0)"
    )
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--out", type=Path, default=None, help="write OUT.json and OUT.md")
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
        "--plot-out", type=Path, default=None, help="PNG path for --plot (default RUN/win_rate.png)"
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie eval`` / ``shelfie arena``."""
    try:
        if args.plot is not None:
            print(f"wrote {plot_run(args.plot, args.plot_out)}")
            if not args.bots:
                return 0
        if not args.bots:
            print("shelfie arena: give at least one bot (or --plot RUN)", file=sys.stderr)
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
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"shelfie arena: {exc}", file=sys.stderr)
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
    parts = [
        "shelfie arena",
        *args.bots,
        f"--players {args.players}",
        *([f"--field {args.field}"] if getattr(args, "field", None) else []),
        f"--games {args.games}",
        f"--seed {args.seed}",
    ]
    return " ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shelfie_env.arena.cli", description="Play bots against each other over the same seeded dice.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
