"""Which decisions carry a gap between two bots? Play some with one bot and the rest with another.

    python scripts/phase_swap.py --swap-in planner --rest ppo --games 1000 --seed 30000
    python scripts/phase_swap.py --swap-in planner --rest ppo --when near-end --games 2000 --seed 0

The swapped player plays the decisions selected by ``--when`` with
``--swap-in`` (alias ``--reroll``) and every other decision with ``--rest``,
in ``--games`` seat-rotated 2-player games against ``--opponent`` (default
``greedy``), game ``i`` on dice seed ``seed + i`` with the swapped player in
seat ``i % 2`` (as ``shelfie arena``). It prints win / tie / loss counts, in
all and from each seat. ``--when``:

* ``reroll`` (default): the reroll-phase decisions (stop and the reroll ids);
* whole turns, judged at the turn's first decision: ``near-end`` (some shelf
  already has a row with no free cell, or the end is triggered: one more such
  row, e.g. from a cross-out, triggers it), ``near-end-last-seat`` (those
  turns played from the last seat, where a trigger finishes the game at
  once, plus the game's last turn), ``near-end-first-seat`` (the other
  near-end turns), ``not-near-end`` and ``end-triggered``.

Both bots see every decision of the swapped seat, so a bot that keeps
per-turn state (the planner) stays in step. Session 5 used it to show that the
learned bot lost its gap to the planner in the rerolls, session 8 that it
loses most of it from the second seat in the turns near the end
(docs/training.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from shelfie_env.bots.spec import build_bot
from shelfie_env.bots import act_on_game
from shelfie_env.game.engine import REROLL, Game, full_rows

WHEN = ("reroll", "near-end", "near-end-last-seat", "near-end-first-seat", "not-near-end", "end-triggered")


def near_end(game: Game) -> bool:
    """The end is triggered, or some shelf already has a row with no free cell."""
    return bool(game.end_triggered) or any(
        full_rows(c | x) >= 1 for c, x in zip(game.circled, game.crossed)
    )


def turn_selected(game: Game, when: str) -> bool:
    """Whether the turn starting now (``game.current`` on turn) is one ``when`` selects."""
    near = near_end(game)
    # from the last seat (or in the game's last turn) a placement that triggers the end finishes it
    finishing = game.current == game.num_players - 1 or bool(game.end_triggered)
    if when == "near-end":
        return near
    if when == "near-end-last-seat":
        return near and finishing
    if when == "near-end-first-seat":
        return near and not finishing
    if when == "not-near-end":
        return not near
    if when == "end-triggered":
        return bool(game.end_triggered)
    raise ValueError(f"--when must be one of {', '.join(WHEN)}, got {when!r}")


class PhaseSwap:
    """A bot playing the decisions ``when`` selects with ``swap_in`` and every other one with ``rest``."""

    name = "swap"

    def __init__(self, swap_in: Any, rest: Any, when: str = "reroll") -> None:
        if when not in WHEN:
            raise ValueError(f"--when must be one of {', '.join(WHEN)}, got {when!r}")
        self.swap_in, self.rest, self.when = swap_in, rest, when
        self._turn: bool | None = None

    def selects(self, game: Game) -> bool:
        """Whether ``swap_in`` plays this decision."""
        if self.when == "reroll":
            return game.phase == REROLL
        if self._turn is None or (game.phase == REROLL and game.rolls_left == 2):
            self._turn = turn_selected(game, self.when)  # a turn's first decision
        return self._turn

    def act_game(self, game: Game) -> int:
        a = act_on_game(self.swap_in, game)
        b = act_on_game(self.rest, game)
        return a if self.selects(game) else b

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--swap-in",
        "--reroll",
        dest="swap_in",
        default="planner",
        help="bot spec for the decisions --when selects, as for `shelfie arena` (default planner)",
    )
    parser.add_argument("--rest", default="ppo", help="bot for every other decision (default ppo)")
    parser.add_argument("--when", default="reroll", choices=WHEN, help="which decisions --swap-in plays")
    parser.add_argument("--opponent", default="greedy", help="the other seat (default greedy)")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=30000, help="dice seed of game 0")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be >= 1")
    swap = PhaseSwap(build_bot(args.swap_in), build_bot(args.rest), args.when)
    opponent = build_bot(args.opponent)
    counts = [[0, 0, 0], [0, 0, 0]]  # W/T/L from seat 0 and seat 1
    for i in range(args.games):
        seat = i % 2
        bots = [swap, opponent] if seat == 0 else [opponent, swap]
        game = Game.new(2, rng=args.seed + i)
        while not game.over:
            game.step(act_on_game(bots[game.current], game))
        scores = game.scores()
        mine, theirs = scores[seat], scores[1 - seat]
        counts[seat][0 if mine > theirs else 1 if mine == theirs else 2] += 1
    wins, ties, losses = (counts[0][k] + counts[1][k] for k in range(3))
    by_seat = " / ".join(f"{c[0] / max(1, sum(c)):.3f}" for c in counts)
    print(
        f"{args.when} by {args.swap_in} + rest {args.rest} vs {args.opponent}: "
        f"{args.games} games (seed {args.seed}): "
        f"win {wins / args.games:.3f} ({wins}/{ties}/{losses} W/T/L); "
        f"from the 1st / 2nd seat {by_seat}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
