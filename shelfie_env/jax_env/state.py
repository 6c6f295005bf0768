"""The twin's state: a pgx ``State`` of fixed shapes, and its round trip to the engine's state dict.

Shelves are 25-bit masks as in the engine (bit ``5 * row + col``), one int32 per seat. At a chance
node (``is_chance``) the dice are about to be thrown: ``kept`` counts the dice kept per face (all
zero before a turn's first roll), ``rolls_left`` already counts the reroll as made, and ``dice``,
``spent`` and ``counts`` still show the dice before the throw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax.numpy as jnp
import numpy as np
import pgx.core as core
from pgx._src.struct import dataclass

from shelfie_env.game.actions import NUM_ACTIONS, NUM_DICE
from shelfie_env.game.engine import PHASES, Game

Array = Any

REROLL, CIRCLE, CROSS, OVER = 0, 1, 2, 3


@dataclass
class State(core.State):
    """One game (or a batch of games, under ``vmap``); every field a fixed-shape array."""

    current_player: Array
    observation: Array
    rewards: Array
    terminated: Array
    truncated: Array
    legal_action_mask: Array
    _step_count: Array
    points: Array  # int32 (5, 5): points of each cell
    circled: Array  # int32 (n,): circled cells of each seat
    crossed: Array  # int32 (n,): crossed cells of each seat
    phase: Array  # int32: 0 reroll, 1 circle, 2 cross, 3 over
    dice: Array  # int32 (6,): the dice, sorted
    spent: Array  # bool (6,): die i has paid for a circle this turn
    counts: Array  # int32 (6,): unspent dice per face
    rolls_left: Array  # int32: rerolls left this turn
    circles: Array  # int32: circles made this turn
    end_triggered: Array  # bool
    round: Array  # int32: completed rounds
    scores: Array  # int32 (n,): each seat's score now
    is_chance: Array  # bool: dice must be thrown before anyone decides
    kept: Array  # int32 (6,): dice kept per face at a chance node

    @property
    def env_id(self) -> str:  # type: ignore[override]
        return "shelfie"


def blank_state(num_players: int, points: Array) -> State:
    """A state of ``num_players`` seats with empty shelves, at seat 0's first roll (a chance node)."""
    n = num_players
    z = jnp.int32(0)
    return State(
        current_player=z,
        observation=jnp.zeros(63 * n + 60, dtype=jnp.float32),
        rewards=jnp.zeros(n, dtype=jnp.float32),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
        legal_action_mask=jnp.zeros(NUM_ACTIONS, dtype=jnp.bool_),
        _step_count=z,
        points=jnp.asarray(points, dtype=jnp.int32),
        circled=jnp.zeros(n, dtype=jnp.int32),
        crossed=jnp.zeros(n, dtype=jnp.int32),
        phase=jnp.int32(REROLL),
        dice=jnp.zeros(NUM_DICE, dtype=jnp.int32),
        spent=jnp.zeros(NUM_DICE, dtype=jnp.bool_),
        counts=jnp.zeros(NUM_DICE, dtype=jnp.int32),
        rolls_left=jnp.int32(2),
        circles=z,
        end_triggered=jnp.bool_(False),
        round=z,
        scores=jnp.zeros(n, dtype=jnp.int32),
        is_chance=jnp.bool_(True),
        kept=jnp.zeros(NUM_DICE, dtype=jnp.int32),
    )


def _board(circled: int, crossed: int) -> list[list[int]]:
    return [
        [(circled >> (5 * r + c) & 1) + 2 * (crossed >> (5 * r + c) & 1) for c in range(5)] for r in range(5)
    ]


def to_state_dict(state: State) -> dict[str, Any]:
    """The engine's state dict (docs/rules.md) of one unbatched decision state.

    Raises ``ValueError`` for a batch, a chance node (no such position exists in the engine: apply
    ``step_chance`` first) or a game ended by an illegal action.
    """
    circled = np.asarray(state.circled)
    if circled.ndim != 1:
        raise ValueError(f"to_state_dict takes one game, got a batch of shape {circled.shape[:-1]}")
    if bool(state.is_chance):
        raise ValueError("the state is a chance node (dice to throw); apply step_chance first")
    phase = int(state.phase)
    if bool(state.terminated) and phase != OVER:
        raise ValueError("the game ended on an illegal action; it has no engine position")
    crossed = np.asarray(state.crossed)
    n = circled.shape[0]
    return {
        "num_players": n,
        "points": np.asarray(state.points).tolist(),
        "boards": [_board(int(circled[p]), int(crossed[p])) for p in range(n)],
        "current_player": int(state.current_player),
        "phase": PHASES[phase],
        "dice": np.asarray(state.dice).tolist(),
        "spent": [bool(v) for v in np.asarray(state.spent)],
        "rolls_left": int(state.rolls_left),
        "circles_this_turn": int(state.circles),
        "end_triggered": bool(state.end_triggered),
        "scores": np.asarray(state.scores).tolist(),
        "round": int(state.round),
    }


def game_fields(game: Game) -> dict[str, Any]:
    """The twin's rule fields of an engine game, as numpy arrays (what ``from_state_dict`` loads)."""
    return {
        "points": np.array(game.points, dtype=np.int32),
        "circled": np.array(game.circled, dtype=np.int32),
        "crossed": np.array(game.crossed, dtype=np.int32),
        "current_player": np.int32(game.current),
        "phase": np.int32(game.phase),
        "dice": np.array(game.dice, dtype=np.int32),
        "spent": np.array(game.spent, dtype=np.bool_),
        "counts": np.array(game.counts, dtype=np.int32),
        "rolls_left": np.int32(game.rolls_left),
        "circles": np.int32(game.circles),
        "end_triggered": np.bool_(game.end_triggered),
        "round": np.int32(game.round),
        "scores": np.array(game.scores(), dtype=np.int32),
    }


def checked_game(d: Mapping[str, Any], num_players: int) -> Game:
    """The engine game of state dict ``d``, refused as the engine refuses it (``ValueError``) and
    when its table size is not ``num_players``."""
    game = Game.from_dict(d)
    if game.num_players != num_players:
        raise ValueError(f"num_players: this env plays {num_players} seats, the state has {game.num_players}")
    return game
