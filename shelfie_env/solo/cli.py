"""``shelfie solo``: solve the solo game (``solve``) and describe the shipped table (``info``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from shelfie_env.game.scoring import DEFAULT_POINTS, validate_points
from shelfie_env.solo.boards import board_count, symmetric_points
from shelfie_env.solo.table import SHIPPED, SOLVE_COMMAND, TableError, read_table, shipped_table

DEFAULT_OUT = Path("runs/solo")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``solve`` and ``info`` subcommands."""
    sub = parser.add_subparsers(dest="solo_command", metavar="{solve,info}")
    sub.required = True
    solve = sub.add_parser(
        "solve",
        help="compute the optimal expected final score of every solo board (numba; about a minute on two cores)",
        description=(
            "Solve the solo game backward over the boards between turns, one layer of filled cells at a time. "
            "Each layer is saved in the run folder; the same command on the same folder resumes. "
            "The finished table is OUT/table.npz."
        ),
    )
    solve.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"run folder (default {DEFAULT_OUT})")
    solve.add_argument(
        "--points",
        type=Path,
        default=None,
        help="JSON file with a 5x5 points matrix (default: the rules' 1, 2, 3, 5, 8 in every row)",
    )
    solve.add_argument(
        "--stop-after", type=int, default=None, metavar="N", help="stop after N layers (resume later)"
    )
    info = sub.add_parser("info", help="E*, the size and fingerprint of the shipped table (or of --table)")
    info.add_argument("--table", type=Path, default=None, help="a table file written by `shelfie solo solve`")


def read_points(path: Path | None) -> tuple[tuple[int, ...], ...]:
    """The points matrix of a JSON file (``ValueError`` naming the file and the problem)."""
    if path is None:
        return DEFAULT_POINTS
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"--points {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--points {path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    try:
        return validate_points(raw)
    except ValueError as exc:
        raise ValueError(f"--points {path}: {exc}") from None


def _solve(args: argparse.Namespace) -> int:
    from shelfie_env.solo.solve import check_writable, estimate_seconds, solve

    points = read_points(args.points)
    if args.stop_after is not None and args.stop_after < 1:
        raise ValueError(f"--stop-after must be at least 1, got {args.stop_after}")
    check_writable(args.out)
    symmetric = symmetric_points(points)
    say = _say
    n = board_count(symmetric)
    if symmetric:
        say(f"every row has the same points: solving {n:,} boards up to a permutation of the rows")
    else:
        say(
            f"the rows' points differ, so no symmetry: solving {n:,} boards ({8 * n / 2**30:.1f} GiB of values)"
        )
    say("compiling the solver (numba, once) and timing a sample of boards ...")
    eta = estimate_seconds(points)
    say(f"this should take about {_duration(eta)} on this machine")
    table = solve(points, args.out, say=say, stop_after=args.stop_after)
    if table is not None:
        print(
            f"E* = {table.optimum:.6f} (fingerprint {table.fingerprint()}), table: {args.out / 'table.npz'}"
        )
    return 0


def _info(args: argparse.Namespace) -> int:
    table = read_table(args.table) if args.table is not None else shipped_table()
    where = str(args.table) if args.table is not None else f"shipped (shelfie_env/data/solo/{SHIPPED})"
    print(f"E* = {table.optimum:.6f}  expected final score of the solo game under optimal play")
    print(f"table: {where}")
    print(f"points: {[list(r) for r in table.points]}")
    kind = "up to a permutation of the rows" if table.symmetric else "no symmetry"
    print(f"boards: {table.values.size:,} between turns ({kind}); fingerprint {table.fingerprint()}")
    print(f"recompute: {SOLVE_COMMAND}   (the default points; --points FILE for others)")
    return 0


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def run(args: argparse.Namespace) -> int:
    """Run ``shelfie solo solve`` or ``shelfie solo info``; a bad argument or file is one line, status 2."""
    try:
        return _solve(args) if args.solo_command == "solve" else _info(args)
    except (ValueError, TableError) as exc:
        print(f"shelfie solo {args.solo_command}: error: {exc}", file=sys.stderr)
        return 2
