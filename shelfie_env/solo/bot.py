"""``solo-optimal``: plays every solo decision optimally (the turn's exact expectimax against the table).

Its move is a pure function of the state: the legal action of highest expected final score, ties
(within 1e-9 points) to the lowest action id. It plays one seat with the default points.
"""

from __future__ import annotations

from typing import Any

from shelfie_env.game.engine import Game
from shelfie_env.solo.table import SoloTable, shipped_table
from shelfie_env.solo.turn import SoloTurn, best_action


class SoloOptimalBot:
    """The perfect solo player."""

    name = "solo-optimal"

    def __init__(self, table: SoloTable | None = None) -> None:
        self.table = table or shipped_table()

    def __deepcopy__(self, memo: dict[int, Any]) -> SoloOptimalBot:
        return SoloOptimalBot(self.table)  # it keeps no state; the table is read-only and shared

    def action_values_game(self, game: Game) -> dict[int, float]:
        """Expected final score of every legal action (optimal play afterwards)."""
        if game.num_players != 1:
            raise ValueError(f"solo-optimal plays the solo game (one seat), not {game.num_players} players")
        return SoloTurn(self.table, game).action_values()

    def act_game(self, game: Game) -> int:
        values = self.action_values_game(game)
        if not values:
            raise ValueError("no legal action: the game is over")
        return best_action(values)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def make_solo_optimal(num_players: int | None = None, **options: Any) -> SoloOptimalBot:
    """Build ``solo-optimal`` (it takes no options and plays only one seat)."""
    if options:
        raise ValueError(f"solo-optimal takes no options, got {', '.join(sorted(options))}")
    if num_players is not None and num_players != 1:
        raise ValueError(f"solo-optimal plays the solo game (one seat), not {num_players} players")
    return SoloOptimalBot()


make_solo_optimal.table_sizes = lambda: (1,)  # type: ignore[attr-defined]

__all__ = ["SoloOptimalBot", "make_solo_optimal"]
