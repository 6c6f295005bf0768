"""Batched engine: the rules of :mod:`shelfie_env.game.engine` over N games in arrays.

Needs ``numba`` (the ``fast`` extra); the core package never imports this
subpackage, so ``import shelfie_env`` works without it.
"""

from __future__ import annotations

from shelfie_env.batched.engine import BatchedGame, random_legal_actions, seed_streams

__all__ = ["BatchedGame", "random_legal_actions", "seed_streams"]
