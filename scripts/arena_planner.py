"""Planner strength and speed: seat-rotated 2-player arena, solo means, decision times.

    python scripts/arena_planner.py --games 2000 --solo 2000 --out results/planner_arena.json

* 2-player: game ``i`` uses dice seed ``seed + i // 2`` and seats the planner
  at ``i % 2``, so every seed is played from both seats.
* solo: ``--solo N`` seeded 1-player games for the planner and for the
  opponent bot (same seeds), mean and standard error.
* timing: CPU time (``time.process_time``) of every planner decision in the
  2-player games; median and 99th percentile in milliseconds.

``--weights '{"rival_weight": 0.8}'`` overrides planner weights (for tuning).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from shelfie_env.bots import act_on_game, make
from shelfie_env.game.engine import Game


def wilson(k: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (centre - half, centre + half)


def play(bots: list[Any], seed: int, timed: int | None, times: list[float]) -> list[int]:
    """One game, bots seated in order; CPU times of seat ``timed``'s decisions go to ``times``."""
    game = Game.new(len(bots), rng=seed)
    while not game.over:
        seat = game.current
        if seat == timed:
            t = time.process_time()
            a = act_on_game(bots[seat], game)
            times.append(time.process_time() - t)
        else:
            a = act_on_game(bots[seat], game)
        game.step(a)
    return game.scores()


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=200, help="2-player games (seats alternate)")
    parser.add_argument("--solo", type=int, default=0, help="solo games per bot")
    parser.add_argument("--opponent", default="greedy", help="opponent bot name")
    parser.add_argument("--seed", type=int, default=0, help="first dice seed")
    parser.add_argument("--weights", default="{}", help="JSON planner weight overrides")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)

    overrides = json.loads(args.weights)
    planner = make("planner", **overrides)
    opp_kw = {"seed": args.seed} if args.opponent == "random" else {}
    opponent = make(args.opponent, **opp_kw)

    wins = ties = losses = 0
    margins: list[int] = []
    times: list[float] = []
    t0 = time.perf_counter()
    for i in range(args.games):
        seat = i % 2
        bots = [planner, opponent] if seat == 0 else [opponent, planner]
        scores = play(bots, args.seed + i // 2, seat, times)
        me, them = scores[seat], scores[1 - seat]
        margins.append(me - them)
        wins += me > them
        ties += me == them
        losses += me < them
    result: dict[str, Any] = {
        "opponent": args.opponent,
        "weights": overrides,
        "games": args.games,
        "wins": wins,
        "ties": ties,
        "losses": losses,
    }
    if args.games:
        lo, hi = wilson(wins, args.games)
        result.update(
            win_rate=wins / args.games,
            win_rate_ci95=[lo, hi],
            score_rate=(wins + ties / 2) / args.games,
            mean_margin=statistics.mean(margins),
            decisions=len(times),
            time_median_ms=1000 * statistics.median(times),
            time_p99_ms=1000 * percentile(times, 0.99),
            time_max_ms=1000 * max(times),
        )
    for name, bot in (("planner", planner), (args.opponent, opponent)):
        if args.solo:
            solo = [play([bot], args.seed + i, None, [])[0] for i in range(args.solo)]
            result[f"solo_{name}"] = {
                "games": args.solo,
                "mean": statistics.mean(solo),
                "sem": statistics.stdev(solo) / math.sqrt(len(solo)) if len(solo) > 1 else 0.0,
            }
    result["wall_s"] = time.perf_counter() - t0
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
