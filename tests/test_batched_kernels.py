"""The compiled kernels take the rules' constants from ``shelfie_env.game``."""

from __future__ import annotations

import pytest

K = pytest.importorskip("shelfie_env.batched._kernels")

from shelfie_env.game import actions, engine, scoring  # noqa: E402


def test_the_kernels_constants_are_the_games_plain_ints() -> None:
    shared = {
        "NUM_ACTIONS": actions.NUM_ACTIONS,
        "CIRCLE_BASE": actions.CIRCLE_BASE,
        "END_TURN": actions.END_TURN,
        "CROSS_BASE": actions.CROSS_BASE,
        "REROLL": engine.REROLL,
        "CIRCLE": engine.CIRCLE,
        "CROSS_PHASE": engine.CROSS,
        "OVER": engine.OVER,
        "MAX_CIRCLES": engine.MAX_CIRCLES,
        "ROLLS_PER_TURN": engine.ROLLS_PER_TURN,
        "FULL": scoring.FULL,
    }
    for name, value in shared.items():
        assert getattr(K, name) is value, name
        assert type(value) is int, name  # numba freezes plain int globals into the compiled code
