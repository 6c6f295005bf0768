"""The JAX twin as a ``pgx.Env``: init, step, observe, and the explicit chance interface.

``make(n)`` gives the env of an ``n``-seat table (1..4); each table size compiles to its own
program. ``step(state, action, key)`` is ``step_decision`` followed, where dice must be thrown, by
``step_chance`` with an outcome drawn from ``key``. An illegal action ends the game with -1 for the
seat that played it and +1/(n-1) for each rival, as pgx does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core as core

from shelfie_env.game.engine import MAX_PLAYERS
from shelfie_env.game.scoring import DEFAULT_POINTS, FULL, ScoreTable, validate_points
from shelfie_env.jax_env import outcomes, transitions
from shelfie_env.jax_env.state import (
    OVER,
    State,
    blank_state,
    checked_game,
    game_fields,
    to_state_dict,
)
from shelfie_env.observation.vector import SCORE_SCALE, observation_size

VERSION = "v0"


def score_features(points: np.ndarray) -> np.ndarray:
    """``table[s]``: score ``s`` as the observation shows it (float32 of s / 200), for every score a
    shelf can reach with ``points`` (a table because XLA's float32 division is not correctly rounded)."""
    best = int(ScoreTable(tuple(map(tuple, points.tolist()))).score(FULL))
    return (np.arange(max(best, int(SCORE_SCALE)) + 1) / SCORE_SCALE).astype(np.float32)


def observation(state: State, observer: jax.Array, score_table: jax.Array) -> jax.Array:
    """The default observation vector (``observation.vector.encode``) of ``state`` for seat
    ``observer``; ``score_table`` is :func:`score_features` of the state's points."""
    n = state.circled.shape[0]
    order = (observer + jnp.arange(n)) % n
    circ = transitions.cells(state.circled[order])  # (n, 5, 5)
    cros = transitions.cells(state.crossed[order])
    boards = jnp.stack([circ.reshape(n, 25), cros.reshape(n, 25)], axis=1).reshape(50 * n)
    lines = jnp.concatenate([jnp.all(circ == 1, axis=2), jnp.all(circ == 1, axis=1)], axis=1)
    f32 = jnp.float32
    parts = [
        boards.astype(f32),
        jax.nn.one_hot(state.dice, 6, dtype=f32).reshape(36),
        state.spent.astype(f32),
        state.counts.astype(f32) * f32(1.0 / 6.0),
        jax.nn.one_hot(state.rolls_left, 3, dtype=f32),
        jax.nn.one_hot(state.circles, 4, dtype=f32),
        jax.nn.one_hot(state.phase, 4, dtype=f32),
        state.end_triggered.astype(f32)[None],
        jax.nn.one_hot((state.current_player - observer) % n, n, dtype=f32),
        score_table[state.scores[order]],
        lines.reshape(10 * n).astype(f32),
        jax.nn.one_hot(observer, n, dtype=f32),
    ]
    return jnp.concatenate(parts)


def _integer(value: jax.Array, what: str) -> jax.Array:
    """``value`` as an int32 array; a float or bool is refused (``TypeError``) rather than truncated."""
    arr = jnp.asarray(value)
    if not jnp.issubdtype(arr.dtype, jnp.integer):
        raise TypeError(f"{what} must be an integer, got dtype {arr.dtype}")
    return arr.astype(jnp.int32)


class ShelfieJax(core.Env):
    """My Shelfie: The Dice Game at ``num_players`` seats, every step a pure array function."""

    def __init__(self, num_players: int = 2, points: Sequence[Sequence[int]] | None = None) -> None:
        super().__init__()
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
            raise ValueError(f"num_players must be an integer 1..{MAX_PLAYERS}, got {num_players!r}")
        if not 1 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be 1..{MAX_PLAYERS}, got {num_players}")
        self._num_players = int(num_players)
        self._points = np.array(validate_points(DEFAULT_POINTS if points is None else points), dtype=np.int32)
        self._score_table = jnp.asarray(score_features(self._points))

    # ------------------------------------------------------------------ pgx.Env
    @property
    def id(self) -> str:  # type: ignore[override]
        return "shelfie"

    @property
    def version(self) -> str:
        return VERSION

    @property
    def num_players(self) -> int:
        return self._num_players

    @property
    def num_actions(self) -> int:
        return 120

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (observation_size(self._num_players),)

    def _init(self, key: jax.Array) -> State:
        root = self.chance_root()
        return transitions.throw(root, outcomes.draw_outcome(root.kept, key))

    def _step(self, state: core.State, action: jax.Array, key: jax.Array) -> State:
        assert isinstance(state, State)
        decided = transitions.decide(state, action)
        # a chance node the action met stays one (-1 is no outcome): only this decision's throw is made
        outcome = jnp.where(state.is_chance, -1, outcomes.draw_outcome(decided.kept, key))
        return transitions.throw(decided, outcome)

    def step(self, state: core.State, action: jax.Array, key: jax.Array | None = None) -> State:
        """pgx's step: the decision, then the dice drawn from ``key`` (required) where they are thrown.

        A finished game is returned unchanged with zero rewards, and its legal mask is all True
        (pgx's convention; ``step_decision`` keeps the engine's all-False mask).
        """
        if key is None:
            raise ValueError("step needs a PRNG key for the dice: step(state, action, key)")
        assert isinstance(state, State)
        action = _integer(action, "an action")
        # pgx's Env.step, with the illegal and finished cases already handled by decide: no full-state conds
        stepped = self._step(state, action, key)
        at_chance = state.is_chance & ~state.terminated  # no action is legal there
        over = stepped.terminated | at_chance
        return stepped.replace(  # type: ignore[attr-defined]
            _step_count=stepped._step_count + (~state.terminated).astype(jnp.int32),
            terminated=over,
            rewards=jnp.where(
                at_chance,
                transitions.illegal_rewards(self._num_players, state.current_player),
                stepped.rewards,
            ),
            legal_action_mask=stepped.legal_action_mask | over,
            observation=self.observe(stepped),
        )

    def observe(self, state: core.State, player: jax.Array | None = None) -> jax.Array:  # type: ignore[override]
        """The default observation vector of ``state`` for seat ``player`` (the seat on turn if None)."""
        assert isinstance(state, State)
        seat = state.current_player if player is None else jnp.asarray(player)
        return observation(state, seat, self._score_table)

    def _observe(self, state: core.State, player_id: jax.Array) -> jax.Array:
        assert isinstance(state, State)
        return observation(state, player_id, self._score_table)

    # --------------------------------------------------------------- explicit chance
    def chance_root(self) -> State:
        """The game before seat 0's first roll: a chance node (``is_chance``) of six thrown dice."""
        state = blank_state(self._num_players, self._points)
        return state.replace(observation=self.observe(state))  # type: ignore[attr-defined]

    def step_decision(self, state: State, action: jax.Array) -> State:
        """The engine's step for ``action`` up to its next throw: ``state.is_chance`` when dice must be
        thrown. An illegal action ends the game (rewards -1 / +1/(n-1)); a chance node or a finished
        game comes back unchanged with zero rewards."""
        decided = transitions.decide(state, _integer(action, "an action"))
        counted = decided._step_count + (~state.terminated & ~state.is_chance).astype(jnp.int32)
        return decided.replace(_step_count=counted, observation=self.observe(decided))  # type: ignore[attr-defined]

    def chance_probs(self, state: State) -> jax.Array:
        """Probabilities (462,) of the outcomes (:func:`dice_of` order) of the chance node ``state``:
        zero for outcomes without the kept dice, all zero at a decision node."""
        live = state.is_chance & ~state.terminated
        return jnp.where(live, outcomes.outcome_probs(state.kept), jnp.float32(0.0))

    def step_chance(self, state: State, outcome: jax.Array) -> State:
        """The chance node ``state`` with the dice come up as ``outcome`` (0..461). An outcome of zero
        probability (or a decision node) returns the state unchanged, so ``is_chance`` stays set."""
        thrown = transitions.throw(state, _integer(outcome, "an outcome"))
        return thrown.replace(observation=self.observe(thrown))  # type: ignore[attr-defined]

    def sample_chance(self, state: State, key: jax.Array) -> jax.Array:
        """An outcome of the chance node ``state`` drawn with ``chance_probs(state)``."""
        return outcomes.draw_outcome(state.kept, key)

    # ---------------------------------------------------------------- state dicts
    def to_state_dict(self, state: State) -> dict[str, Any]:
        """The engine's state dict of one decision state (``ValueError`` at a chance node)."""
        return to_state_dict(state)

    def from_state_dict(self, d: Mapping[str, Any]) -> State:
        """The state of the engine's state dict ``d``; refuses (``ValueError``) what ``Game.from_dict``
        refuses and a table size other than this env's. ``tape_seed`` is ignored: the key deals."""
        game = checked_game(d, self._num_players)
        if game.table.score(FULL) >= self._score_table.shape[0]:
            raise ValueError(
                "points: this table allows scores above the env's observation table; make the env with "
                "these points (ShelfieJax(n, points))"
            )
        fields = game_fields(game)
        state = blank_state(self._num_players, fields.pop("points")).replace(  # type: ignore[attr-defined]
            is_chance=jnp.bool_(False),
            terminated=jnp.bool_(int(fields["phase"]) == OVER),
            **{k: jnp.asarray(v) for k, v in fields.items()},
        )
        state = state.replace(legal_action_mask=transitions.legal_mask(state))
        return state.replace(observation=self.observe(state))  # type: ignore[attr-defined]


def make(num_players: int = 2) -> ShelfieJax:
    """The JAX env of a ``num_players``-seat table (1..4), default points."""
    return ShelfieJax(num_players)
