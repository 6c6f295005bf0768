"""Where the planner loses to a bot: forced cross-outs, who ends the game, and calibration.

    python scripts/planner_losses.py --games 600 --seed 5000

Plays seat-rotated 2-player games (game ``i``: dice seed ``seed + i // 2``,
planner in seat ``i % 2``) and prints

* the planner's result by the number of rows it was forced to cross out;
* who triggered the end of the game and how (a forced cross or a circle, on
  whose shelf), with the planner's result;
* calibration: the planner's own value at the start of each of its turns
  (about 10 x (win chance - loss chance)) against the game's result.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

import numpy as np

from shelfie_env.bots import act_on_game, make
from shelfie_env.game.engine import CROSS, REROLL, Game, full_rows


def play(planner, opponent, seed: int, seat: int) -> tuple[int, int, str, list[float]]:  # type: ignore[no-untyped-def]
    """One game: (result -1/0/1, planner's forced crosses, end trigger, planner's turn-start values)."""
    bots = [opponent, opponent]
    bots[seat] = planner
    game = Game.new(2, rng=seed)
    forced, trigger, values = 0, "none", []
    while not game.over:
        mover, phase, before = game.current, game.phase, game.end_triggered
        if mover == seat and phase == REROLL and game.rolls_left == 2:
            values.append(max(planner.action_values_game(game).values()))
        action = act_on_game(bots[mover], game)
        forced += mover == seat and phase == CROSS
        game.step(action)
        if not before and game.end_triggered:
            whose = [q for q in range(2) if full_rows(game.circled[q] | game.crossed[q]) >= 2]
            who = "planner" if mover == seat else "rival"
            how = "cross" if phase == CROSS else "circle"
            shelf = "own" if mover in whose else "other"
            trigger = f"{who} {how} ({shelf} shelf)"
    scores = game.scores()
    return int(np.sign(scores[seat] - scores[1 - seat])), forced, trigger, values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=600, help="games (seats alternate)")
    parser.add_argument("--seed", type=int, default=5000, help="first dice seed")
    parser.add_argument("--opponent", default="greedy", help="opponent bot name")
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be at least 2")

    planner, opponent = make("planner"), make(args.opponent)
    by_forced: dict[int, Counter[int]] = defaultdict(Counter)
    by_trigger: dict[str, Counter[int]] = defaultdict(Counter)
    calib: list[tuple[float, int]] = []
    for i in range(args.games):
        result, forced, trigger, values = play(planner, opponent, args.seed + i // 2, i % 2)
        by_forced[forced][result] += 1
        by_trigger[trigger][result] += 1
        calib.extend((v, result) for v in values)

    def row(label: str, c: Counter[int]) -> str:
        n = sum(c.values())
        return f"  {label:<32} {n:>5} games  win {c[1] / n:6.1%}  tie {c[0] / n:5.1%}  loss {c[-1] / n:6.1%}"

    print(f"planner vs {args.opponent}, {args.games} games from seed {args.seed}")
    print("by forced cross-outs of the planner:")
    for k in sorted(by_forced):
        print(row(f"{k} forced", by_forced[k]))
    print("by what triggered the end:")
    for k in sorted(by_trigger):
        print(row(k, by_trigger[k]))
    print("calibration (value / 10 ~ win chance - loss chance; actual = mean result):")
    v = np.clip(np.array([x for x, _ in calib]) / 10.0, -1.0, 1.0)  # the last turn uses 50 x sign
    r = np.array([y for _, y in calib], dtype=float)
    for lo, hi in [(-1, -0.6), (-0.6, -0.3), (-0.3, -0.1), (-0.1, 0.1), (0.1, 0.3), (0.3, 0.6), (0.6, 1.01)]:
        m = (v >= lo) & (v < hi)
        if m.any():
            print(
                f"  predicted [{lo:+.1f}, {hi:+.1f}): {m.sum():>5} turns  mean {v[m].mean():+.3f}"
                f"  actual {r[m].mean():+.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
