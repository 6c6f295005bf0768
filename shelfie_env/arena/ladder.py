"""The ladder: every level's error rate, rating and score against the level below, at 2, 3 and 4 players.

:func:`measure` reproduces a table size's ladder: the error rate of every level and named bot on
the labelled ``test`` positions (:func:`~shelfie_env.arena.analysis.error_rates.error_rates`),
then luck-corrected duplicate matches on the ``test`` deals (:func:`~shelfie_env.arena.evaluate.evaluate`):

* each level against the level below (``games`` games; at three and four players the level sits
  alone against a field of copies of the level below, and its score is its mean share of rivals
  beaten);
* each level against the level two below (``other_games``), which ties the chain tighter;
* each named bot against the two levels nearest to it by error rate (``other_games``).

:func:`~shelfie_env.arena.rating_scale.fit` turns the matches into ratings anchored at
``greedy`` = 1500. Every finished match is appended to ``OUT.matches.jsonl`` first, so a run that
stops resumes where it was (a match cached over at least the games asked for is kept). The shipped
ladders are package data (:func:`shipped_ladder`); ``shelfie levels`` prints them and
``shelfie levels measure`` measures one.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import sys
import time
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from shelfie_env.arena.rating_scale import ANCHOR, Match, fit, row_score
from shelfie_env.argtypes import output_file
from shelfie_env.bots.levels import LEVELS, check_players

NAMED = {2: ("random", "greedy", "planner", "ppo", "ppo-flat"), 3: ("random", "greedy", "planner"),
         4: ("random", "greedy", "planner")}
"""The named bots rated beside the levels at each table size (``td`` plays as the top level)."""
GAMES = {2: 1000, 3: 300, 4: 300}
"""Games of each level against the level below, by table size (``measure``'s default)."""
OTHER_GAMES = {2: 200, 3: 150, 4: 100}
"""Games of every other match, by table size."""
REGRET_GAMES = {2: 30, 3: 24, 4: 24}
"""Games each level plays for the error rate → rating calibration, by table size."""
SCHEMA = 1
REGRET_SE_FLOOR = 0.002
"""The smallest standard error a level's regret counts with in the calibration's fit (the top level's
regret is nearly zero by its own judge, and must not hold the line alone)."""


def shipped_ladder(players: int = 2) -> dict[str, Any]:
    """The shipped ladder of ``players`` (package data ``shelfie_env/data/ladder/ladder_{n}p.json``),
    read once per process; the caller gets its own copy."""
    check_players(players)
    return copy.deepcopy(_read_ladder(players))


@functools.cache
def _read_ladder(players: int) -> dict[str, Any]:
    path = files("shelfie_env") / "data" / "ladder" / f"ladder_{players}p.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"no shipped ladder at {players} players ({path})") from None


def level_ratings(players: int = 2) -> dict[str, tuple[float, float]]:
    """``{spec: (rating, se)}`` of the shipped ladder's levels at ``players``."""
    lad = shipped_ladder(players)
    return {e["spec"]: (e["rating"], e["se"]) for e in lad["levels"]}


def nearest_level(rating: float, players: int = 2) -> str:
    """The level whose shipped rating is nearest ``rating``."""
    ratings = level_ratings(players)
    return min(ratings, key=lambda s: abs(ratings[s][0] - rating))


def plan(players: int, errors: dict[str, float], games: int, other_games: int) -> list[tuple[str, str, int]]:
    """The matches of a ladder measurement: ``(bot, opponent or field, games)`` (module doc)."""
    specs = [lv.spec for lv in LEVELS]
    out = [(specs[k + 1], specs[k], games) for k in range(len(specs) - 1)]
    out += [(specs[k + 2], specs[k], other_games) for k in range(len(specs) - 2)]
    for bot in NAMED[players]:
        near = sorted(specs, key=lambda s: abs(errors[s] - errors[bot]))[:2]
        out += [(bot, s, other_games) for s in sorted(near)]
    return out


def _match(a: str, b: str, games: int, players: int, workers: int) -> Match:
    from shelfie_env.arena.evaluate import evaluate

    score, se, played = row_score(evaluate(a, opponents=[b], players=players, games=games, workers=workers,
                                           name=a).rows[0])
    return Match(a, b, score, se, played, players)


def _errors(players: int) -> dict[str, dict[str, Any]]:
    from shelfie_env.arena.analysis.error_rates import error_rates
    from shelfie_env.bots.rollout.rollouts import one_blas_thread

    out = {}
    with one_blas_thread():
        for spec in [lv.spec for lv in LEVELS] + list(NAMED[players]):
            r = error_rates(spec, players, "test")
            out[spec] = {k: r[k] for k in ("error_rate", "ci95", "large_share", "huge_share", "ms_median",
                                            "ms_per_decision", "positions")}
            out[spec]["losses"] = r["losses"]
            print(f"{spec}: error rate {r['error_rate']:.4f}, {r['ms_median']:.1f} ms", file=sys.stderr, flush=True)
    return out


def plays(spec: str, players: int) -> str:
    """What ``spec`` plays at ``players`` players: a level's noise (``Level.describe``), else the spec."""
    from shelfie_env.bots.levels import find_level

    return find_level(spec).describe(players) if spec.startswith("level-") else spec


def _done_matches(cache: Path, players: int) -> dict[tuple[str, str], Match]:
    """The matches of ``cache`` by ``(bot, opponent)``: the one over the most games of each, among
    those played by the levels as they play now (a level whose noise changed plays its matches anew)."""
    if not cache.exists():
        return {}
    out: dict[tuple[str, str], Match] = {}
    for line in cache.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            m = Match.from_dict(d)
            if d.get("plays") != [plays(m.a, players), plays(m.b, players)]:
                continue
            if (m.a, m.b) not in out or m.games > out[(m.a, m.b)].games:
                out[(m.a, m.b)] = m
    return out


def labels_digest(players: int) -> str:
    """A fingerprint of the shipped ``test`` labels of ``players`` (the ids and every action's value)."""
    import hashlib

    from shelfie_env.arena.analysis.positions import load_positions

    body = [(r["id"], r["label"]["actions"], r["label"]["value"])
            for r in load_positions(None, players=players, part="test")]
    return hashlib.sha256(json.dumps(body).encode()).hexdigest()[:16]


def cached_errors(players: int, out: Path) -> dict[str, dict[str, Any]]:
    """The error rates of a measurement, from ``OUT.errors.json`` or measured and written there
    (measured anew when a level there played other noise than it does now, or the shipped labels
    changed)."""
    path = out.with_suffix(".errors.json")
    labels = labels_digest(players)
    if path.exists():
        errors = json.loads(path.read_text(encoding="utf-8"))
        if all(e.get("plays") == plays(spec, players) and e.get("labels") == labels for spec, e in errors.items()):
            return errors
    errors = _errors(players)
    for spec, e in errors.items():
        e["plays"] = plays(spec, players)
        e["labels"] = labels
    path.write_text(json.dumps(errors), encoding="utf-8")
    return errors


def cached_regrets(players: int, out: Path, games: int) -> dict[str, dict[str, float]]:
    """Every level's regret per decision in games (:mod:`~shelfie_env.arena.analysis.calibration`),
    from ``OUT.regrets.json`` or measured and written there (anew when a level's noise changed)."""
    from shelfie_env.arena.analysis.calibration import level_regrets

    path = out.with_suffix(".regrets.json")
    if path.exists():
        cached = json.loads(path.read_text(encoding="utf-8"))
        regrets = cached.get("regrets", {})
        if regrets and cached.get("plays") == {spec: plays(spec, players) for spec in regrets}:
            return regrets
    regrets = level_regrets(players, games)
    body = {"plays": {spec: plays(spec, players) for spec in regrets}, "regrets": regrets}
    path.write_text(json.dumps(body), encoding="utf-8")
    return regrets


def measure(
    players: int, out: str | Path, games: int | None = None, other_games: int | None = None,
    workers: int = 1, command: str | None = None, regret_games: int | None = None,
) -> dict[str, Any]:
    """Measure the ladder of ``players`` and write it to ``out`` (module doc); returns it."""
    check_players(players)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    games = GAMES[players] if games is None else games
    other_games = OTHER_GAMES[players] if other_games is None else other_games
    errors = cached_errors(players, out)
    cache = out.with_suffix(".matches.jsonl")
    done = _done_matches(cache, players)
    matches = []
    for a, b, g in plan(players, {k: v["error_rate"] for k, v in errors.items()}, games, other_games):
        m = done.get((a, b))
        if m is None or m.games < g:  # a match cached over at least the games asked for is kept
            t0 = time.time()
            m = _match(a, b, g, players, workers)
            with cache.open("a", encoding="utf-8") as f:
                f.write(json.dumps({**m.to_dict(), "plays": [plays(a, players), plays(b, players)]}) + "\n")
            print(f"{a} vs {b}: {100 * m.score:.1f} % ± {196 * m.se:.1f} over {m.games} games "
                  f"({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        matches.append(m)
    regrets = cached_regrets(players, out, REGRET_GAMES[players] if regret_games is None else regret_games)
    ladder = assemble(players, errors, matches, command, regrets)
    out.write_text(json.dumps(ladder, indent=1) + "\n", encoding="utf-8")
    return ladder


def _paired(errors: dict[str, dict[str, Any]], a: str, b: str) -> dict[str, float]:
    """``a``'s error rate minus ``b``'s, paired over the positions, with its standard error."""
    import numpy as np

    la, lb = errors[a]["losses"], errors[b]["losses"]
    d = np.array([la[k] - lb[k] for k in la])
    return {"difference": float(d.mean()), "se": float(d.std(ddof=1) / np.sqrt(d.size))}


def assemble(
    players: int, errors: dict[str, dict[str, Any]], matches: Sequence[Match], command: str | None,
    regrets: dict[str, dict[str, float]] | None = None,
) -> dict[str, Any]:
    """The ladder file: levels and named bots with error rates and ratings, the matches, and the
    error rate → rating calibration when ``regrets`` are given."""
    from shelfie_env.arena.analysis.calibration import JUDGE, fit_line

    ratings = fit(matches, ANCHOR)
    below = {m.a: m for m in matches if _is_below(m)}

    def entry(spec: str) -> dict[str, Any]:
        e = errors[spec]
        r = ratings[spec]
        return {
            "spec": spec, "rating": round(r["rating"], 1), "se": round(r["se"], 1),
            "ci95": [round(x, 1) for x in r["ci95"]],
            "error_rate": round(e["error_rate"], 5), "error_ci95": [round(x, 5) for x in e["ci95"]],
            "share_over_0.1": round(e["large_share"], 4), "share_over_0.25": round(e["huge_share"], 4),
            "ms_median": round(e["ms_median"], 2),
        }

    levels = []
    for k, lv in enumerate(LEVELS):
        row = {**entry(lv.spec), "level": lv.number, "name": lv.name, "plays": plays(lv.spec, players)}
        m = below.get(lv.spec)
        if m is not None:
            row["vs_below"] = {"score": round(m.score, 4), "ci95": [round(m.score - 1.96 * m.se, 4),
                               round(m.score + 1.96 * m.se, 4)], "games": m.games}
            row["error_below"] = _paired(errors, lv.spec, LEVELS[k - 1].spec)
        levels.append(row)
    bots = [{**entry(b), "plays": b} for b in NAMED[players]]
    calibration = None
    if regrets:
        points = [(r["regret"], ratings[s]["rating"], 1.0 / max(r["se"], REGRET_SE_FLOOR) ** 2)
                  for s, r in regrets.items()]
        calibration = {"judge": JUDGE, "levels": regrets, **fit_line(points)}
    return {
        "schema": SCHEMA, "players": players,
        "anchor": {"bot": ANCHOR[0], "rating": ANCHOR[1]},
        "scale": "Elo: 400 log10 of the odds of the luck-corrected score rate, weighted least squares",
        "deals": "test", "positions": "test", "command": command,
        "levels": levels, "bots": bots, "matches": [m.to_dict() for m in matches],
        "calibration": calibration,
    }


def _is_below(m: Match) -> bool:
    return m.a.startswith("level-") and m.b == f"level-{int(m.a.split('-')[1]) - 1}"


def format_ladder(lad: dict[str, Any]) -> str:
    """The ladder as a Markdown table, then the named bots on the same scale."""
    n = lad["players"]
    anchor = lad["anchor"]
    lines = [
        f"Ladder at {n} players: ratings on one Elo scale ({anchor['bot']} = {anchor['rating']:g}), "
        f"luck-corrected duplicate matches on the {lad['deals']} deals; error rates on the {lad['positions']} positions.",
        "",
        "| level | name | plays | error rate [95 %] | rating [95 %] | score vs the level below | ms a decision |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for e in lad["levels"]:
        vb = e.get("vs_below")
        below = f"{100 * vb['score']:.1f} % [{100 * vb['ci95'][0]:.1f}, {100 * vb['ci95'][1]:.1f}], {vb['games']} games" if vb else "-"
        lines.append(
            f"| {e['level']} | {e['name']} | {e['plays']} | {e['error_rate']:.4f} [{e['error_ci95'][0]:.4f}, "
            f"{e['error_ci95'][1]:.4f}] | {e['rating']:.0f} [{e['ci95'][0]:.0f}, {e['ci95'][1]:.0f}] | {below} | "
            f"{e['ms_median']:.1f} |"
        )
    lines += ["", "| bot | error rate [95 %] | rating [95 %] |", "|---|---:|---:|"]
    for e in lad["bots"]:
        lines.append(
            f"| `{e['spec']}` | {e['error_rate']:.4f} [{e['error_ci95'][0]:.4f}, {e['error_ci95'][1]:.4f}] | "
            f"{e['rating']:.0f} [{e['ci95'][0]:.0f}, {e['ci95'][1]:.0f}] |"
        )
    top = lad["levels"][-1]["spec"]
    lines.append(f"| `td` | (plays as {top}) | {lad['levels'][-1]['rating']:.0f} |")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=2, help="table size: 2, 3 or 4 (default 2)")
    parser.add_argument(
        "--json", type=output_file(), default=None, metavar="FILE", help="also write the ladder as JSON"
    )
    sub = parser.add_subparsers(dest="levels_command", metavar="{measure}")
    m = sub.add_parser("measure", help="measure a table size's ladder (error rates, matches, ratings)")
    m.add_argument("--players", type=int, default=argparse.SUPPRESS, help="table size: 2, 3 or 4 (default 2)")
    m.add_argument("--games", type=int, default=None, help="games against the level below (default 1000 / 300 / 300)")
    m.add_argument("--other-games", type=int, default=None, help="games of every other match (default 200 / 150 / 100)")
    m.add_argument("--workers", type=int, default=1, help="processes for the games (default 1)")
    m.add_argument(
        "--out",
        type=output_file(),
        required=True,
        help="the ladder JSON to write (matches are cached beside it)",
    )
    m.set_defaults(_parser=m)


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args._parser
    try:
        check_players(args.players)
    except ValueError as exc:
        parser.error(f"--players: {exc}")
    if getattr(args, "levels_command", None) == "measure":
        for name in ("games", "other_games", "workers"):
            value = getattr(args, name)
            if value is not None and value <= 0:
                parser.error(f"--{name.replace('_', '-')} must be positive, got {value}")
        if args.games is not None and args.games % args.players:
            parser.error(f"--games must be a multiple of {args.players} (every seating of each deal)")
        command = f"shelfie levels measure --players {args.players}"
        command += f" --games {args.games}" if args.games is not None else ""
        command += f" --other-games {args.other_games}" if args.other_games is not None else ""
        lad = measure(args.players, args.out, args.games, args.other_games, args.workers, command)
    else:
        lad = shipped_ladder(args.players)
    print(format_ladder(lad))
    if args.json:
        Path(args.json).write_text(json.dumps(lad, indent=1) + "\n", encoding="utf-8")
    return 0


__all__ = ["GAMES", "NAMED", "OTHER_GAMES", "assemble", "format_ladder", "level_ratings", "measure",
           "nearest_level", "plan", "shipped_ladder"]
