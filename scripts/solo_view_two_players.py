"""How much does ignoring the rivals cost? ``solo-optimal``'s moves played at two players, its shelf alone.

    python scripts/solo_view_two_players.py --games 400

The bot values its own shelf as the solo table does and never looks at the rival: each decision is
the solo-optimal one for its shelf as a solo board, among the moves legal in the real game. A solo
board never has a lockout: a cell a rival's completed line crossed out, in a row that still has a
free cell, counts as free there (a row with no free cell is closed, as in the solo game). Played
against ``greedy`` and ``td`` under the arena's protocol (``test`` deals, duplicate, luck-corrected).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from shelfie_env.arena.evaluate import evaluate
from shelfie_env.game.actions import CROSS_BASE
from shelfie_env.game.engine import CROSS, Game
from shelfie_env.solo.table import shipped_table
from shelfie_env.solo.turn import SoloTurn, best_action, end_values


class ShelfAlone:
    """Plays the solo-optimal move for its own shelf, as if it were alone at the table."""

    name = "solo-view"

    def __init__(self) -> None:
        self.table = shipped_table()

    def _solo_game(self, game: Game) -> Game:
        p = game.current
        circled, crossed = game.circled[p], game.crossed[p]
        kept = 0
        for r in range(5):
            row = 31 << (5 * r)
            if (circled | crossed) & row == row:  # no free cell: a closed row, as in the solo game
                kept |= crossed & row
        solo = Game(1, game.table, rng=0)
        solo.circled, solo.crossed = [circled], [kept]
        solo.phase, solo.dice, solo.spent, solo.counts = (
            game.phase,
            list(game.dice),
            list(game.spent),
            list(game.counts),
        )
        solo.rolls_left, solo.circles, solo._legal = game.rolls_left, game.circles, None
        return solo

    def act_game(self, game: Game) -> int:
        legal = set(game.legal_actions())
        solo = self._solo_game(game)
        turn = SoloTurn(self.table, solo)
        if game.phase == CROSS:
            p = game.current
            free = ~(game.circled[p] | game.crossed[p])
            values = {}
            for a in legal:
                row_free = free & (31 << (5 * (a - CROSS_BASE)))
                values[a] = float(
                    end_values(self.table, game.table, [solo.circled[0]], solo.crossed[0] | row_free)[0]
                )
        else:
            values = {a: v for a, v in turn.action_values().items() if a in legal}
        return best_action(values)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    args = parser.parse_args(argv)
    result = evaluate(
        ShelfAlone(), opponents=("greedy", "td"), players=2, games=args.games, deals="test", name="solo-view"
    )
    print(result.to_markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
