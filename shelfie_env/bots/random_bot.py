"""``random``: a uniformly random legal action."""

from __future__ import annotations

from typing import Any

import numpy as np

from shelfie_env.game.engine import Game


class RandomBot:
    """Picks uniformly among the legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act_game(self, game: Game) -> int:
        legal = game.legal_actions()
        if not legal:
            raise ValueError("no legal action: the game is over")
        return legal[int(self.rng.integers(len(legal)))]

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))
