"""Learned bots: model cards (:mod:`.card`), the numpy actor (:mod:`.policy`), the expectimax
head's tables (:mod:`.expect_head`) and the ``ppo`` bot (:mod:`.bot`). No torch needed to play."""

from __future__ import annotations

from shelfie_env.bots.learned.bot import PPOBot, load_policy, make_ppo, shipped_model
from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card
from shelfie_env.bots.learned.policy import NumpyPolicy

__all__ = [
    "CheckpointMismatchError",
    "NumpyPolicy",
    "PPOBot",
    "load_card",
    "load_policy",
    "make_ppo",
    "shipped_model",
]
