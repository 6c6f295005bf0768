"""Which phase carries a gap between two bots? Play rerolls with one bot and the rest with another.

    python scripts/phase_swap.py --reroll planner --rest ppo --games 1000 --seed 30000
    python scripts/phase_swap.py --reroll ppo --rest planner --games 1000 --seed 30000

The swapped player (reroll-phase decisions, i.e. stop and the reroll ids, from
``--reroll``; circle, end-turn and cross-out decisions from ``--rest``) plays
``--games`` seat-rotated 2-player games against ``--opponent`` (default
``greedy``), game ``i`` on dice seed ``seed + i``; the script prints its win /
tie / loss counts. Both bots see every decision of the swapped seat, so a bot
that keeps per-turn state (the planner) stays in step. Session 5 used it to
show that the learned bot lost its gap to the planner in the rerolls
(docs/training.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from shelfie_env.arena import build_bot
from shelfie_env.bots import act_on_game
from shelfie_env.engine import REROLL, Game


class PhaseSwap:
    """A bot playing reroll-phase decisions with ``reroll`` and every other decision with ``rest``."""

    name = "swap"

    def __init__(self, reroll: Any, rest: Any) -> None:
        self.reroll, self.rest = reroll, rest

    def act_game(self, game: Game) -> int:
        a = act_on_game(self.reroll, game)
        b = act_on_game(self.rest, game)
        return a if game.phase == REROLL else b

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--reroll",
        default="planner",
        help="bot spec for the reroll phase, as for `shelfie arena` (default planner)",
    )
    parser.add_argument("--rest", default="ppo", help="bot for the circle and cross phases (default ppo)")
    parser.add_argument("--opponent", default="greedy", help="the other seat (default greedy)")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=30000, help="dice seed of game 0")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be >= 1")
    swap, opponent = PhaseSwap(build_bot(args.reroll), build_bot(args.rest)), build_bot(args.opponent)
    wins = ties = losses = 0
    for i in range(args.games):
        seat = i % 2
        bots = [swap, opponent] if seat == 0 else [opponent, swap]
        game = Game.new(2, rng=args.seed + i)
        while not game.over:
            game.step(act_on_game(bots[game.current], game))
        scores = game.scores()
        mine, theirs = scores[seat], scores[1 - seat]
        wins += mine > theirs
        ties += mine == theirs
        losses += mine < theirs
    print(
        f"rerolls {args.reroll} + rest {args.rest} vs {args.opponent}: "
        f"{args.games} games (seed {args.seed}): "
        f"win {wins / args.games:.3f} ({wins}/{ties}/{losses} W/T/L)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
