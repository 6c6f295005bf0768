"""Quick seat-rotated arena between two bots (default: greedy vs random).

    python scripts/arena_quick.py --games 1000 [--a greedy --b random] [--solo 1000]

Prints A's win/tie/loss rates over 2-player games (A and B swap seats every
game, dice seeded per game) and the mean scores; ``--solo N`` also prints A's
mean solo score over N seeded games and A's mean decision time.
"""

from __future__ import annotations

import argparse
import statistics
import time

from shelfie_env.bots import act_on_game, make
from shelfie_env.game.engine import Game


def play(bots: list, seed: int) -> list[int]:
    """Play one game with ``bots`` seated in order; return the final scores."""
    game = Game.new(len(bots), rng=seed)
    while not game.over:
        game.step(act_on_game(bots[game.current], game))
    return game.scores()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--a", default="greedy", help="bot under test")
    parser.add_argument("--b", default="random", help="opponent bot")
    parser.add_argument("--games", type=int, default=1000, help="2-player games (seats alternate)")
    parser.add_argument("--solo", type=int, default=0, help="also play N solo games with bot A")
    parser.add_argument("--seed", type=int, default=0, help="first game seed")
    args = parser.parse_args(argv)

    a, b = make(args.a), make(args.b, seed=args.seed) if args.b == "random" else make(args.b)
    wins = ties = losses = 0
    sa: list[int] = []
    sb: list[int] = []
    for i in range(args.games):
        a_seat = i % 2
        seats = [a, b] if a_seat == 0 else [b, a]
        scores = play(seats, args.seed + i)
        x, y = scores[a_seat], scores[1 - a_seat]
        sa.append(x)
        sb.append(y)
        wins += x > y
        ties += x == y
        losses += x < y
    n = max(args.games, 1)
    print(f"{args.a} vs {args.b}: {args.games} games, seats alternating")
    print(f"  win {wins / n:.1%}  tie {ties / n:.1%}  loss {losses / n:.1%}")
    if sa:
        print(f"  mean score {args.a} {statistics.mean(sa):.1f}  {args.b} {statistics.mean(sb):.1f}")
    if args.solo:
        solo = []
        decisions = 0
        t0 = time.perf_counter()
        for i in range(args.solo):
            game = Game.new(1, rng=10_000 + args.seed + i)
            while not game.over:
                game.step(act_on_game(a, game))
                decisions += 1
            solo.append(game.score(0))
        dt = time.perf_counter() - t0
        print(
            f"  solo {args.a}: mean {statistics.mean(solo):.1f} (sd {statistics.pstdev(solo):.1f}) "
            f"over {args.solo} games;"
            f" {dt / decisions * 1e3:.3f} ms per decision (incl. engine step)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
