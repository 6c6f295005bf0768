"""Checks the twin against the engine in batch: engine games replayed through the explicit chance.

Each of ``lanes`` lanes plays engine games back to back with random legal actions (seeded); the
twin replays every lane under ``vmap`` and ``lax.scan``, a chunk of ``steps`` decisions at a time,
feeding the engine's dice through ``step_chance``. After every decision it compares the legal mask,
every field of the state dict, the observation vector of every seat, the rewards, ``terminated``
and whether dice were thrown. ``scripts/jax_equivalence.py`` runs it at scale.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from shelfie_env.game.engine import OVER, Game
from shelfie_env.game.tables import MULTISET_INDEX
from shelfie_env.jax_env.state import State
from shelfie_env.jax_env.twin import ShelfieJax
from shelfie_env.observation.vector import encode

FIELDS = (
    "mask",
    "circled",
    "crossed",
    "current_player",
    "phase",
    "dice",
    "spent",
    "counts",
    "rolls_left",
    "circles",
    "end_triggered",
    "round",
    "scores",
    "rewards",
    "terminated",
    "threw",
    "obs",
)


def engine_rank(scores: list[int]) -> list[float]:
    """The rank reward of each seat from final scores."""
    n = len(scores)
    if n == 1:
        return [0.0]
    return [(sum(o < s for o in scores) - sum(o > s for o in scores)) / (n - 1) for s in scores]


def _fields(game: Game, threw: bool, rewards: list[float]) -> dict[str, np.ndarray]:
    n = game.num_players
    return {
        "mask": game.legal_mask().astype(bool),
        "circled": np.array(game.circled, np.int32),
        "crossed": np.array(game.crossed, np.int32),
        "current_player": np.int32(game.current),
        "phase": np.int32(game.phase),
        "dice": np.array(game.dice, np.int32),
        "spent": np.array(game.spent, bool),
        "counts": np.array(game.counts, np.int32),
        "rolls_left": np.int32(game.rolls_left),
        "circles": np.int32(game.circles),
        "end_triggered": np.bool_(game.end_triggered),
        "round": np.int32(game.round),
        "scores": np.array(game.scores(), np.int32),
        "rewards": np.array(rewards, np.float32),
        "terminated": np.bool_(game.phase == OVER),
        "threw": np.bool_(threw),
        "obs": np.stack([encode(game, p) for p in range(n)]),
    }


@dataclass
class Lane:
    """One lane's engine game in progress and the generators of its games and actions."""

    seed: int
    game: Game | None = None
    games: int = 0
    actions: np.random.Generator = field(default_factory=np.random.default_rng)


class EngineLanes:
    """Engine games played lane by lane with random legal actions; :meth:`chunk` records ``steps``."""

    def __init__(self, num_players: int, lanes: int, seed: int) -> None:
        self.num_players = num_players
        self.lanes = [
            Lane(seed=seed * 1_000_003 + i, actions=np.random.default_rng([seed, i])) for i in range(lanes)
        ]
        self.games_done = 0

    def _new_game(self, lane: Lane) -> Game:
        lane.game = Game.new(self.num_players, rng=np.random.default_rng([lane.seed, lane.games]))
        lane.games += 1
        return lane.game

    def chunk(self, steps: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """``(inputs, expected)`` of the next ``steps`` decisions of every lane, arrays ``(lanes, steps, ...)``."""
        inputs: dict[str, list] = {"reset": [], "first": [], "action": [], "outcome": []}
        expected: dict[str, list] = {k: [] for k in FIELDS}
        for lane in self.lanes:
            rows: dict[str, list] = {k: [] for k in (*inputs, *FIELDS)}
            for _ in range(steps):
                reset = lane.game is None or lane.game.over
                game = self._new_game(lane) if reset else lane.game
                if reset and lane.games > 1:
                    self.games_done += 1
                first = MULTISET_INDEX[tuple(game.dice)] if reset else 0
                legal = game.legal_actions()
                action = int(legal[lane.actions.integers(len(legal))])
                turn = (game.current, game.round)
                game.step(action)
                threw = not game.over and (1 <= action < 64 or (game.current, game.round) != turn)
                rewards = engine_rank(game.scores()) if game.over else [0.0] * self.num_players
                for k, v in zip(inputs, (reset, first, action, MULTISET_INDEX[tuple(game.dice)])):
                    rows[k].append(v)
                for k, v in _fields(game, threw, rewards).items():
                    rows[k].append(v)
            for k in inputs:
                inputs[k].append(rows[k])
            for k in FIELDS:
                expected[k].append(np.stack(rows[k]))
        return (
            {k: np.array(v) for k, v in inputs.items()},
            {k: np.stack(v) for k, v in expected.items()},
        )


def _twin_fields(env: ShelfieJax, state: State, threw: jax.Array) -> dict[str, jax.Array]:
    n = state.circled.shape[0]
    return {
        "mask": state.legal_action_mask,
        "circled": state.circled,
        "crossed": state.crossed,
        "current_player": state.current_player,
        "phase": state.phase,
        "dice": state.dice,
        "spent": state.spent,
        "counts": state.counts,
        "rolls_left": state.rolls_left,
        "circles": state.circles,
        "end_triggered": state.end_triggered,
        "round": state.round,
        "scores": state.scores,
        "rewards": state.rewards,
        "terminated": state.terminated,
        "threw": threw,
        "obs": jax.vmap(lambda p: env.observe(state, p))(jnp.arange(n)),
    }


def replay_program(env: ShelfieJax):
    """A jitted ``(states, inputs) -> (states, fields)`` replaying a chunk for every lane."""
    root = env.chance_root()

    def one(state: State, x: tuple[jax.Array, ...]) -> tuple[State, dict[str, jax.Array]]:
        reset, first, action, outcome = x
        fresh = env.step_chance(root, first)
        state = jax.tree.map(lambda a, b: jnp.where(reset, a, b), fresh, state)
        decided = env.step_decision(state, action)
        after = env.step_chance(decided, outcome)
        return after, _twin_fields(env, after, decided.is_chance)

    def lane(state: State, inputs: dict[str, jax.Array]) -> tuple[State, dict[str, jax.Array]]:
        xs = (inputs["reset"], inputs["first"], inputs["action"], inputs["outcome"])
        return jax.lax.scan(one, state, xs)

    return jax.jit(jax.vmap(lane))


@dataclass
class Report:
    """What :func:`check` found: decisions compared, divergent decisions and the first few of them."""

    num_players: int
    decisions: int = 0
    games: int = 0
    divergences: int = 0
    compile_s: float = 0.0
    twin_s: float = 0.0
    engine_s: float = 0.0
    examples: list[str] = field(default_factory=list)


def check(num_players: int, decisions: int, lanes: int = 256, steps: int = 256, seed: int = 0) -> Report:
    """Compare at least ``decisions`` decisions of ``num_players``-seat games (module doc)."""
    env = ShelfieJax(num_players)
    engine = EngineLanes(num_players, lanes, seed)
    program = replay_program(env)
    states = jax.vmap(lambda _: env.chance_root())(jnp.arange(lanes))
    report = Report(num_players)
    offset = 0
    compiled = None
    while report.decisions < decisions:
        t0 = time.perf_counter()
        inputs, expected = engine.chunk(steps)
        report.engine_s += time.perf_counter() - t0
        xs = {k: jnp.asarray(v) for k, v in inputs.items()}
        if compiled is None:
            t0 = time.perf_counter()
            compiled = program.lower(states, xs).compile()
            report.compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        states, got = compiled(states, xs)
        got = jax.tree.map(np.asarray, got)
        report.twin_s += time.perf_counter() - t0
        bad = np.zeros((lanes, steps), dtype=bool)
        for k in FIELDS:
            diff = got[k] != expected[k]
            diff = diff.reshape(lanes, steps, -1).any(axis=2)
            bad |= diff
            for lane, t in zip(*np.nonzero(diff)):
                if len(report.examples) < 10:
                    report.examples.append(f"lane {lane} decision {offset + t}: {k} differs")
        report.divergences += int(bad.sum())
        report.decisions += lanes * steps
        offset += steps
    report.games = engine.games_done
    return report
