"""``openspiel-mcts``: OpenSpiel's MCTS as a bot (the ``openspiel`` extra), imported when first built."""

from __future__ import annotations

from typing import Any


def make_mcts(**kwargs: Any) -> Any:
    """``shelfie_env.openspiel.bots.MCTSBot(**kwargs)``; ImportError naming the extra without open_spiel."""
    from shelfie_env.openspiel.bots import MCTSBot

    return MCTSBot(**kwargs)


def table_sizes() -> tuple[int, ...]:
    """MCTS (max^n) plays every table size."""
    return (1, 2, 3, 4)


make_mcts.table_sizes = table_sizes  # type: ignore[attr-defined]
