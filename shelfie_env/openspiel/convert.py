"""Positions between OpenSpiel and our engine: the state dict (docs/rules.md) and live games."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

from shelfie_env.game.engine import DiceSource, Game
from shelfie_env.openspiel.game import _DICE, SHORT_NAME, ShelfieGame, ShelfieState, _Core, land, points_param


def load(num_players: int = 2, points: Any = None, reward: str = "rank") -> ShelfieGame:
    """``pyspiel.load_game("python_shelfie", ...)`` from Python values (``points``: a 5x5 table)."""
    params: dict[str, Any] = {"players": num_players, "reward": reward}
    if points is not None:
        params["points"] = points_param(points)
    return pyspiel.load_game(SHORT_NAME, params)


def _check(state: object) -> ShelfieState:
    if not isinstance(state, ShelfieState):
        raise TypeError(f"expected a {SHORT_NAME} state, got {type(state).__name__}")
    return state


def state_dict(state: ShelfieState) -> dict[str, Any]:
    """Our state dict of a decision or terminal node (``ValueError`` at a chance node)."""
    core = _check(state).core
    if core.throw:
        raise ValueError(
            f"a chance node ({core.throw} dice in the air) has no state dict; apply a chance outcome first"
        )
    return core.game.to_dict()


def from_state_dict(game: ShelfieGame, d: Mapping[str, Any]) -> ShelfieState:
    """The state of ``game`` at the position ``d`` (a state dict); its history starts there.

    ``ValueError`` names a malformed field, or a player count or points table
    that differs from ``game``'s parameters.
    """
    if not isinstance(game, ShelfieGame):
        raise TypeError(f"expected a {SHORT_NAME} game, got {type(game).__name__}")
    engine = Game.from_dict(d)
    return from_engine(game, engine)


def from_engine(game: ShelfieGame, engine: Game) -> ShelfieState:
    """The state of ``game`` at the position of a live engine game (copied; ``engine`` is not changed)."""
    spec = game.spec
    if engine.num_players != spec.players:
        raise ValueError(f"num_players is {engine.num_players}, the game has players={spec.players}")
    if engine.table.points != spec.table.points:
        raise ValueError(f"points {engine.table.points} differ from the game's points {spec.table.points}")
    state = game.new_initial_state()
    state.core = _Core(spec, engine.clone(rng=_DICE), 0, 0)
    return state


def engine_game(state: ShelfieState, rng: DiceSource | None = None) -> Game:
    """An engine game at ``state``'s position (a copy), dice from ``rng``.

    At a chance node the pending throw is made with ``rng`` (a numpy Generator
    by default), so the game is at the next decision or the end.
    """
    core = _check(state).core
    if rng is None:
        rng = np.random.default_rng()
    game = core.game.clone(rng=rng)
    if core.reroll:
        game.step(core.reroll)  # the engine rerolls from rng
    elif core.throw:
        land(game, 0, tuple(int(f) for f in rng.integers(0, 6, size=core.throw)))
    return game
