"""Rollout values: equal to scalar rollouts of the ``td`` bot, common dice, an unbiased control variate."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.bots import act_on_game, make
from shelfie_env.bots.learned.value import load_value_bot, shipped_td_model
from shelfie_env.bots.planner.dice import KEEP_INDEX, TRANSITION
from shelfie_env.bots.rollout.rollouts import BasePolicy, rank_reward, rollout_values, simulate
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import CIRCLE, REROLL, Game


def _positions(seed: int, num_players: int = 2) -> list[Game]:
    """Every decision position of one ``td`` self-play game on tape ``seed``."""
    bot = make("td")
    g = Game.new(num_players, rng=DiceTape(seed))
    out = []
    while not g.over:
        out.append(g.clone())
        g.step(act_on_game(bot, g))
    return out


def _late(seed: int, phase: int, num_players: int = 2) -> Game:
    """A position of ``phase`` near the end of a game (few turns left: cheap rollouts)."""
    cands = [p for p in _positions(seed, num_players) if p.phase == phase]
    return cands[-3]


def _scalar_rollout(game: Game, action: int, seed: int) -> float:
    bot = make("td")
    g = game.clone(rng=DiceTape(seed))
    g.step(action)
    while not g.over:
        g.step(act_on_game(bot, g))
    return rank_reward(g.scores(), game.current)


@pytest.fixture(scope="module")
def policy() -> BasePolicy:
    return BasePolicy(2)


def test_raw_results_equal_scalar_td_rollouts(policy: BasePolicy) -> None:
    """The batched base policy plays exactly the scalar ``td`` bot's moves on the same tapes."""
    game = _late(5, REROLL)
    actions = list(game.legal_actions())[:4]
    seeds = list(range(100, 112))
    raw, _ = simulate(game, actions, seeds, policy)
    scalar = np.array([[_scalar_rollout(game, a, s) for s in seeds] for a in actions])
    assert np.array_equal(raw, scalar)


def test_many_rollouts_agree_with_brute_force_within_se(policy: BasePolicy) -> None:
    """An action's corrected value agrees with the plain mean of independent scalar rollouts."""
    game = _late(7, CIRCLE)
    action = game.legal_actions()[0]
    rv = rollout_values(game, 160, policy=policy, seed=1_000, actions=[action])
    brute = np.array([_scalar_rollout(game, action, s) for s in range(50_000, 50_160)])
    se = np.hypot(rv.se[0], brute.std(ddof=1) / np.sqrt(len(brute)))
    assert abs(rv.value[0] - brute.mean()) < 3 * se


def test_identical_actions_get_identical_values(policy: BasePolicy) -> None:
    game = _late(11, REROLL)
    a = game.legal_actions()[1]
    raw, cor = simulate(game, [a, a], list(range(20)), policy)
    assert np.array_equal(raw[0], raw[1]) and np.array_equal(cor[0], cor[1])
    rv = rollout_values(game, 8, policy=policy, actions=[a, a])
    assert rv.value[0] == rv.value[1] and rv.gap_se[1] == 0.0


def test_control_variate_keeps_the_mean_and_cuts_the_variance(policy: BasePolicy) -> None:
    """Luck terms have mean zero: corrected and raw means agree; the corrected spread is smaller."""
    ps = [p for p in _positions(13) if p.phase == REROLL]
    game = ps[len(ps) // 2]
    raw, cor = simulate(game, [0], list(range(200)), policy)
    diff = raw[0] - cor[0]
    assert abs(diff.mean()) < 3 * diff.std(ddof=1) / np.sqrt(diff.size)
    assert cor[0].var() < raw[0].var()


def test_luck_tables_are_exact_expectations(policy: BasePolicy) -> None:
    """Each roll's 'before' value is the exact average of its 'after' values: the luck has mean zero."""
    (turn,) = policy.turns([_late(3, REROLL)])
    assert np.allclose(turn.e[0], TRANSITION @ turn.v[0])
    assert np.allclose(turn.e[1], TRANSITION @ turn.v[1])
    assert np.isclose(turn.fresh, TRANSITION[KEEP_INDEX[(0,) * 6]] @ turn.v[2])


def test_best_and_loss(policy: BasePolicy) -> None:
    game = _late(17, CIRCLE)
    rv = rollout_values(game, 6, policy=policy, extra=6)
    assert rv.loss(rv.best) == 0.0
    assert all(rv.loss(a) >= 0 for a in rv.actions)
    assert set(rv.to_dict()) >= {"actions", "value", "se", "gap_se", "rollouts"}
    assert rv.rollouts.max() == 12 or len(rv.actions) == 1


def test_three_players() -> None:
    game = _late(2, REROLL, num_players=3)
    raw, cor = simulate(game, list(game.legal_actions())[:2], [0, 1, 2], BasePolicy(3))
    assert raw.shape == (2, 3) and np.all(np.isin(raw, [-1.0, -0.5, 0.0, 0.5, 1.0]))


def test_td_batched_forward_equals_scalar() -> None:
    """``ValueBot.act_many`` (one forward for many games) plays the scalar bot's moves, mid-turn too."""
    bot = load_value_bot(shipped_td_model(2), 2)
    games = [p for seed in (1, 2) for p in _positions(seed)]
    many = bot.act_many(games)
    single = [load_value_bot(shipped_td_model(2), 2).act_game(g) for g in games]
    assert many == single


def test_bad_input(policy: BasePolicy) -> None:
    game = _late(5, REROLL)
    with pytest.raises(ValueError, match="not legal"):
        simulate(game, [119], [0], policy)
    with pytest.raises(ValueError, match="rollouts"):
        rollout_values(game, 1, policy=policy)
    with pytest.raises(ValueError, match="players"):
        BasePolicy(1)


def test_labelling_runs_numpys_blas_on_one_thread() -> None:
    from threadpoolctl import threadpool_info

    from shelfie_env.bots.rollout.rollouts import one_blas_thread

    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    with one_blas_thread():
        assert blas_threads() and set(blas_threads()) == {1}
    assert blas_threads() == before
