"""``greedy``: the one-turn heuristic (:mod:`.scalar`) and its compiled twin for the batched engine (:mod:`.batched`, numba)."""

from __future__ import annotations

from shelfie_env.bots.greedy.scalar import GreedyBot

__all__ = ["GreedyBot"]
