"""Play optimal solo games and hold their mean against E*, the table's optimum.

    python scripts/solo_optimal_games.py --games 100000 --workers 2
    python scripts/solo_optimal_games.py --games 0 --bot-games 2000   # the solo-optimal bot itself

``--games`` are played by the compiled twin of ``solo-optimal`` (:mod:`shelfie_env.solo.simulate`),
in chunks of ``--chunk`` on dice seeds ``--seed + k``; ``--bot-games`` by the bot itself through the
arena, on common dice from deal seed 50,000,000 (apart from the ``selection`` and ``test`` deals).
Prints each sample's mean, standard error, E* and how many standard errors apart they are.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from shelfie_env.solo import optimum

BOT_DEALS = 50_000_000


def _chunk(args: tuple[int, int]) -> np.ndarray:
    from shelfie_env.solo.simulate import optimal_scores

    games, seed = args
    return optimal_scores(games, seed)


def _report(label: str, scores: np.ndarray, seconds: float) -> None:
    n = len(scores)
    mean = float(scores.mean())
    se = float(scores.std(ddof=1) / math.sqrt(n))
    e = optimum()
    print(
        f"{label}: {n:,} games, mean {mean:.4f} (sd {scores.std(ddof=1):.3f}, se {se:.4f}); E* {e:.4f}; "
        f"difference {mean - e:+.4f} = {(mean - e) / se:+.2f} se; {seconds:.0f} s",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000, help="games of the compiled twin")
    parser.add_argument("--chunk", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0, help="first chunk's dice seed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bot-games", type=int, default=0, help="games of the solo-optimal bot (arena)")
    args = parser.parse_args(argv)
    if args.games > 0:
        t0 = time.time()
        jobs = [
            (min(args.chunk, args.games - i), args.seed + k)
            for k, i in enumerate(range(0, args.games, args.chunk))
        ]
        with ProcessPoolExecutor(args.workers) as pool:
            scores = np.concatenate(list(pool.map(_chunk, jobs)))
        _report("compiled twin", scores, time.time() - t0)
    if args.bot_games > 0:
        from shelfie_env.arena.solo_score import solo_score

        t0 = time.time()
        s = solo_score("solo-optimal", games=args.bot_games, deals=BOT_DEALS, workers=args.workers)
        _report("solo-optimal bot", np.array(s.scores, dtype=float), time.time() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
