"""How a level's errors are spread, against a mix of ``td`` and random moves with the same error rate.

For every level, on the labelled ``test`` positions of a table size: its error rate and the shares
of its decisions that lose more than 0.1 and more than 0.25; then the ``td``/random mix whose
expected error rate is the same (``td``'s move with probability 1 − ε, a uniformly random legal
move with probability ε) and the same two shares. The mix's figures are exact expectations over
its random choice, from every legal action's label.

    .venv/bin/python scripts/level_errors_vs_mix.py --players 2
"""

from __future__ import annotations

import argparse

import numpy as np

from shelfie_env import bots
from shelfie_env.arena.analysis.positions import load_positions
from shelfie_env.bots.levels import LEVELS
from shelfie_env.bots.rollout.rollouts import one_blas_thread

THRESHOLDS = (0.1, 0.25)


def losses_of(spec: str, records: list[dict]) -> np.ndarray:
    """The label loss of ``spec``'s move in every position (a fresh bot each)."""
    out = []
    for r in records:
        action = bots.make(spec).act(r["state"])
        v = np.array(r["label"]["value"])
        out.append(v.max() - v[r["label"]["actions"].index(action)])
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    args = parser.parse_args()
    records = load_positions(None, players=args.players, part="test")
    gaps = [np.array(r["label"]["value"]).max() - np.array(r["label"]["value"]) for r in records]
    random_loss = np.array([g.mean() for g in gaps])
    random_over = {t: np.array([(g > t).mean() for g in gaps]) for t in THRESHOLDS}
    with one_blas_thread():
        td = losses_of("level-6", records)
        print(f"{len(records)} test positions at {args.players} players; td {td.mean():.4f}, random {random_loss.mean():.4f}")
        print("| level | error rate | > 0.1 | > 0.25 | mix ε | mix > 0.1 | mix > 0.25 |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for lv in LEVELS:
            mine = td if lv.at(args.players).sigma == 0 else losses_of(lv.spec, records)
            eps = (mine.mean() - td.mean()) / (random_loss.mean() - td.mean())
            eps = min(max(eps, 0.0), 1.0)
            shares = [(mine > t).mean() for t in THRESHOLDS]
            mix = [((1 - eps) * (td > t) + eps * random_over[t]).mean() for t in THRESHOLDS]
            print(f"| {lv.spec} | {mine.mean():.4f} | {100 * shares[0]:.1f} % | {100 * shares[1]:.1f} % | "
                  f"{eps:.2f} | {100 * mix[0]:.1f} % | {100 * mix[1]:.1f} % |")


if __name__ == "__main__":
    main()
