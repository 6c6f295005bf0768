"""``shelfie rating``: the terminal person's rating (Glicko-2 on the ladder's scale) with its
uncertainty, and their latest games with the change each made, from the ratings store that
``shelfie play`` and ``shelfie serve`` share (:mod:`shelfie_env.play.rated_games`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from shelfie_env.clip import printable
from shelfie_env.play import options
from shelfie_env.play.command_line import fail

RECENT = 10
"""Games listed by default."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``shelfie rating``."""
    parser.add_argument(
        "--players", type=options.players, default=None,
        help="only the rating at this table size, 2-4 (default: every table size played)",
    )
    parser.add_argument("--db", metavar="FILE", default=None,
                        help="the ratings store (default: the web table's database, as 'shelfie play' uses)")
    parser.add_argument("--games", type=options.whole_number(1, 1000), default=RECENT, metavar="N",
                        help=f"how many of the latest games to list (default {RECENT})")


def _game_line(entry: dict[str, Any]) -> str:
    """One game of the history: when, the table, the result, the rating after it and its change."""
    from shelfie_env.play.rated_games import finished_at

    seat = entry["seat"]
    scores = entry["scores"]
    rivals = ", ".join(f"{printable(str(entry['names'][k]))} {s}" for k, s in enumerate(scores) if k != seat)
    head = f"  {finished_at(entry)}  {entry['players']}p  you {scores[seat]} vs {rivals}"
    if entry.get("resigned") == seat:
        head += " (you resigned)"
    if not entry["rated"]:
        return f"{head}: unrated ({entry['reason']})"
    return f"{head}: {entry['after']:.0f} ({entry['change']:+.0f})"


def report_text(report: dict[str, Any], players: int | None, where: str, limit: int) -> str:
    """``shelfie rating``'s output for a person's report (:func:`~shelfie_env.play.rated_games.person_report`)."""
    from shelfie_env.play.ladder_levels import level_label

    lines = []
    ratings = report["ratings"]
    if not ratings:
        at = f" at {players} players" if players else ""
        lines.append(f"No rated game yet{at} in {where}; play one with: shelfie play --level 3")
    for n, r in sorted(ratings.items()):
        lo, hi = r["ci95"]
        lines.append(f"Rating at {n} players: {r['rating']:.0f} ± {r['rd']:.0f} (95 %: {lo:.0f} to {hi:.0f}), "
                     f"{r['games']} rated game{'s' if r['games'] != 1 else ''}; "
                     f"next: {level_label(r['suggested_level'], int(n))}")
    games = report["games"][:limit]
    if games:
        lines += ["", f"Latest games (the latest first; {where}):", *(_game_line(g) for g in games)]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the terminal person's rating(s) and latest games; 2 with one line when the store cannot be read."""
    from shelfie_env.play.rated_games import TERMINAL_PERSON, person_report
    from shelfie_env.play.terminal_rating import open_store
    from shelfie_env.play.web.database import default_db_path

    out = sys.stdout if out is None else out
    if args.players is not None and args.players < 2:
        return fail(f"--players {args.players}: a rating is kept for tables of 2, 3 and 4 players", "rating")
    where = Path(args.db) if args.db else default_db_path()
    if not where.exists():  # nothing played yet: no store is made for reading it
        out.write(report_text({"ratings": {}, "games": []}, args.players, str(where), args.games))
        return 0
    try:
        store = open_store(where)
    except ValueError as exc:
        return fail(str(exc), "rating")
    try:
        report = person_report(store, TERMINAL_PERSON, args.players, args.games)
    finally:
        store.close()
    out.write(report_text(report, args.players, store.path, args.games))
    return 0


__all__ = ["add_arguments", "report_text", "run"]
