"""The JAX twin (shelfie_env.jax_env) against the engine: masks, state dicts, observations, rewards."""

from __future__ import annotations

import ast
import subprocess
import sys
from fractions import Fraction
from functools import cache
from math import factorial
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("pgx")

import jax.numpy as jnp  # noqa: E402

from shelfie_env.envs.common import final_rewards  # noqa: E402
from shelfie_env.game.engine import Game  # noqa: E402
from shelfie_env.game.tables import MULTISET_INDEX, MULTISETS  # noqa: E402
from shelfie_env.jax_env import NUM_OUTCOMES, dice_index, dice_of, make  # noqa: E402
from shelfie_env.jax_env.equivalence import check  # noqa: E402
from shelfie_env.observation.vector import encode  # noqa: E402


class Jitted:
    """One table size's env and its compiled entry points."""

    def __init__(self, n: int) -> None:
        self.env = env = make(n)
        self.decide = jax.jit(env.step_decision)
        self.throw = jax.jit(env.step_chance)
        self.probs = jax.jit(env.chance_probs)

        def advance(state, action, outcome):
            """A decision, then the outcome where dice are thrown (a decision at a chance node is none)."""
            decided = env.step_decision(state, action)
            after = env.step_chance(decided, outcome)
            prob = env.chance_probs(decided)[outcome]
            return after, decided.is_chance, prob, jax.vmap(lambda p: env.observe(after, p))(jnp.arange(n))

        self.advance = jax.jit(advance)


@cache
def jitted(n: int) -> Jitted:
    return Jitted(n)


def _engine_dict(game: Game) -> dict:
    d = game.to_dict()
    d.pop("tape_seed", None)
    return d


def _compare(env, state, obs, game: Game, rewards: list[float]) -> None:
    assert env.to_state_dict(state) == _engine_dict(game)
    np.testing.assert_array_equal(np.asarray(state.legal_action_mask), game.legal_mask().astype(bool))
    for p in range(game.num_players):
        np.testing.assert_array_equal(np.asarray(obs[p]), encode(game, p))
    np.testing.assert_array_equal(np.asarray(state.rewards), np.array(rewards, dtype=np.float32))
    assert bool(state.terminated) == game.over


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_engine_games_replayed_through_explicit_chance_match_after_every_decision(n: int) -> None:
    tw = jitted(n)
    actions = np.random.default_rng(100 + n)
    for g in range(2):
        game = Game.new(n, rng=np.random.default_rng([n, g]))
        state, _, _, obs = tw.advance(tw.env.chance_root(), 0, MULTISET_INDEX[tuple(game.dice)])
        _compare(tw.env, state, obs, game, [0.0] * n)
        while not game.over:
            legal = game.legal_actions()
            action = int(legal[actions.integers(len(legal))])
            turn = (game.current, game.round)
            game.step(action)
            outcome = MULTISET_INDEX[tuple(game.dice)]
            state, threw, prob, obs = tw.advance(state, action, outcome)
            assert bool(threw) == (not game.over and (1 <= action < 64 or (game.current, game.round) != turn))
            assert not threw or float(prob) > 0
            rewards = final_rewards(game.scores(), "rank") if game.over else [0.0] * n
            _compare(tw.env, state, obs, game, rewards)


def test_batched_replay_finds_no_divergence() -> None:
    report = check(3, 2048, lanes=16, steps=128, seed=7)
    assert report.decisions >= 2048 and report.games > 0
    assert report.divergences == 0, report.examples


def test_dice_index_is_the_lexicographic_rank_of_the_sorted_dice() -> None:
    all_dice = np.array(MULTISETS, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(dice_index(all_dice)), np.arange(NUM_OUTCOMES))
    np.testing.assert_array_equal(np.asarray(dice_of(jnp.arange(NUM_OUTCOMES))), all_dice)
    assert int(dice_index(jnp.array([5, 0, 3, 0, 1, 4]))) == MULTISET_INDEX[(0, 0, 1, 3, 4, 5)]
    assert dice_of(0).tolist() == [0] * 6 and dice_of(461).tolist() == [5] * 6
    assert np.asarray(dice_index(jnp.array([[0, 0, 0, 0, 0, 7], [0, 0, 0, 0, 0, -1]]))).tolist() == [-1, -1]


def _exact_probs(kept: tuple[int, ...]) -> list[Fraction]:
    k = 6 - sum(kept)
    out = []
    for dice in MULTISETS:
        thrown = [dice.count(f) - kept[f] for f in range(6)]
        if min(thrown) < 0:
            out.append(Fraction(0))
            continue
        ways = factorial(k)
        for m in thrown:
            ways //= factorial(m)
        out.append(Fraction(ways, 6**k))
    return out


@pytest.mark.parametrize(
    "kept", [(0, 0, 0, 0, 0, 0), (2, 0, 1, 0, 0, 1), (0, 0, 0, 0, 0, 5), (1, 1, 1, 1, 1, 1)]
)
def test_chance_probs_are_the_multinomial_of_the_thrown_dice(kept: tuple[int, ...]) -> None:
    tw = jitted(2)
    node = tw.env.chance_root().replace(kept=jnp.array(kept, dtype=jnp.int32))
    probs = np.asarray(tw.probs(node), dtype=np.float64)
    exact = np.array([float(p) for p in _exact_probs(kept)])
    np.testing.assert_allclose(probs, exact, rtol=1e-6, atol=0)
    assert abs(probs.sum() - 1) < 1e-5
    draws = jax.vmap(lambda k: tw.env.sample_chance(node, k))(jax.random.split(jax.random.PRNGKey(3), 40_000))
    freq = np.bincount(np.asarray(draws), minlength=NUM_OUTCOMES) / 40_000
    assert freq[exact == 0].sum() == 0
    assert np.abs(freq - exact).max() < 5 * np.sqrt(exact.max() / 40_000)


def test_chance_probs_vanish_at_a_decision_node() -> None:
    tw = jitted(2)
    state = tw.throw(tw.env.chance_root(), 100)
    assert not bool(state.is_chance) and float(tw.probs(state).sum()) == 0.0


def test_an_outcome_without_the_kept_dice_leaves_the_chance_node_unchanged() -> None:
    tw = jitted(2)
    state = tw.throw(tw.env.chance_root(), MULTISET_INDEX[(0, 0, 1, 3, 4, 5)])
    node = tw.decide(state, 34)  # reroll one plant and the joker: keeps 0, 1, 3, 4
    assert bool(node.is_chance) and np.asarray(node.kept).tolist() == [1, 1, 0, 1, 1, 0]
    for outcome in (MULTISET_INDEX[(1, 1, 1, 3, 4, 5)], -1, NUM_OUTCOMES):
        same = tw.throw(node, outcome)
        assert bool(same.is_chance)
        assert jax.tree.all(jax.tree.map(lambda a, b: bool(jnp.all(a == b)), same, node))
    after = tw.throw(node, MULTISET_INDEX[(0, 0, 1, 2, 3, 4)])
    assert not bool(after.is_chance) and np.asarray(after.dice).tolist() == [0, 0, 1, 2, 3, 4]


def test_an_illegal_action_ends_the_game_against_the_player_who_played_it() -> None:
    tw = jitted(3)
    state = tw.throw(tw.env.chance_root(), MULTISET_INDEX[(0, 0, 1, 3, 4, 5)])
    for bad in (33, 114, 200, -1):  # not canonical, not a reroll-phase id, outside the ids
        ended = tw.decide(state, bad)
        assert bool(ended.terminated)
        np.testing.assert_allclose(np.asarray(ended.rewards), [-1.0, 0.5, 0.5])
        assert not np.asarray(ended.legal_action_mask).any()
        with pytest.raises(ValueError, match="illegal action"):
            tw.env.to_state_dict(ended)
        again = tw.decide(ended, 0)
        assert not np.asarray(again.rewards).any() and bool(again.terminated)
    stepped = jax.jit(tw.env.step)(state, jnp.int32(33), jax.random.PRNGKey(0))
    assert bool(stepped.terminated) and np.asarray(stepped.legal_action_mask).all()  # pgx's convention
    np.testing.assert_allclose(np.asarray(stepped.rewards), [-1.0, 0.5, 0.5])


@pytest.mark.parametrize("bad", [0.0, True, jnp.float32(3.0)])
def test_a_float_or_bool_action_or_outcome_is_refused_by_name(bad) -> None:
    env = make(2)
    state = env.init(jax.random.PRNGKey(0))
    with pytest.raises(TypeError, match="an action must be an integer"):
        env.step_decision(state, bad)
    with pytest.raises(TypeError, match="an action must be an integer"):
        env.step(state, bad, jax.random.PRNGKey(1))
    with pytest.raises(TypeError, match="an outcome must be an integer"):
        env.step_chance(env.chance_root(), bad)


def test_a_decision_at_a_chance_node_changes_nothing_and_a_step_there_is_illegal() -> None:
    tw = jitted(2)
    root = tw.env.chance_root()
    same = tw.decide(root, 0)
    assert bool(same.is_chance) and not bool(same.terminated)
    ended = jax.jit(tw.env.step)(root, jnp.int32(0), jax.random.PRNGKey(0))
    assert bool(ended.terminated) and bool(ended.is_chance)  # no dice thrown
    np.testing.assert_array_equal(np.asarray(ended.rewards), [-1.0, 1.0])
    with pytest.raises(ValueError, match="chance node"):
        tw.env.to_state_dict(root)


def test_from_state_dict_round_trips_engine_positions_and_refuses_what_the_engine_refuses() -> None:
    tw = jitted(2)
    game = Game.new(2, rng=np.random.default_rng(5))
    actions = np.random.default_rng(6)
    while not game.over:
        state = tw.env.from_state_dict(game.to_dict())
        assert tw.env.to_state_dict(state) == _engine_dict(game)
        np.testing.assert_array_equal(np.asarray(state.legal_action_mask), game.legal_mask().astype(bool))
        legal = game.legal_actions()
        game.step(int(legal[actions.integers(len(legal))]))
    assert bool(tw.env.from_state_dict(game.to_dict()).terminated)
    bad = game.to_dict() | {"phase": "reroll", "rolls_left": 0}
    with pytest.raises(ValueError) as engine_error:
        Game.from_dict(bad)
    with pytest.raises(ValueError) as twin_error:
        tw.env.from_state_dict(bad)
    assert str(twin_error.value) == str(engine_error.value)
    with pytest.raises(ValueError, match="num_players: this env plays 2 seats, the state has 3"):
        tw.env.from_state_dict(Game.new(3, rng=1).to_dict())
    big = Game.new(2, points=[[9, 9, 9, 9, 9]] * 5, rng=1).to_dict()
    with pytest.raises(ValueError, match="points: this table allows scores above"):
        tw.env.from_state_dict(big)


def test_custom_points_play_like_the_engine() -> None:
    points = [[1, 1, 2, 3, 4]] * 5
    env = type(make(2))(2, points)
    decide, throw, observe = jax.jit(env.step_decision), jax.jit(env.step_chance), jax.jit(env.observe)
    game = Game.new(2, points=points, rng=np.random.default_rng(11))
    actions = np.random.default_rng(12)
    state = env.step_chance(env.chance_root(), MULTISET_INDEX[tuple(game.dice)])
    while not game.over:
        legal = game.legal_actions()
        action = int(legal[actions.integers(len(legal))])
        game.step(action)
        state = throw(decide(state, action), MULTISET_INDEX[tuple(game.dice)])
        assert env.to_state_dict(state) == _engine_dict(game)
        np.testing.assert_array_equal(np.asarray(observe(state, 1)), encode(game, 1))


def test_random_play_with_keys_ends_every_game_in_a_position_the_engine_accepts() -> None:
    env, games = make(3), 16

    def act(state, key):
        return jax.random.categorical(key, jnp.where(state.legal_action_mask, 0.0, -jnp.inf))

    @jax.jit
    def play(key):
        state = jax.vmap(env.init)(jax.random.split(key, games))

        def body(i, carry):
            state, final, ended = carry
            k1, k2 = jax.random.split(jax.random.fold_in(key, i))
            action = jax.vmap(act)(state, jax.random.split(k1, games))
            state = jax.vmap(env.step)(state, action, jax.random.split(k2, games))
            first = state.terminated & ~ended
            final = jax.tree.map(
                lambda a, b: jnp.where(first.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), state, final
            )
            return state, final, ended | state.terminated

        return jax.lax.fori_loop(0, 400, body, (state, state, jnp.zeros(games, dtype=bool)))

    _, finals, ended = play(jax.random.PRNGKey(0))
    assert np.asarray(ended).all()
    for i in range(games):
        final = jax.tree.map(lambda x, i=i: x[i], finals)
        game = Game.from_dict(env.to_state_dict(final))
        assert game.over
        expected = np.array(final_rewards(game.scores(), "rank"), dtype=np.float32)
        np.testing.assert_array_equal(np.asarray(final.rewards), expected)


def test_without_jax_the_package_imports_and_the_twin_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['jax'] = None\n"
        "import shelfie_env\n"
        "try:\n"
        "    import shelfie_env.jax_env\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "needs the jax extra" in out.stdout and "shelfie-env[jax]" in out.stdout


def test_the_twin_imports_only_game_and_observation() -> None:
    room = Path(__file__).resolve().parents[1] / "shelfie_env" / "jax_env"
    allowed = ("shelfie_env.game", "shelfie_env.observation", "shelfie_env.jax_env")
    for path in room.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shelfie_env"):
                assert node.module.startswith(allowed), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("shelfie_env"):
                        assert alias.name.startswith(allowed), f"{path.name} imports {alias.name}"
