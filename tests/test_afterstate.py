"""After-state features and values equal what the engine does with the same placement."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shelfie_env.bots import make
from shelfie_env.bots.learned.afterstate import (
    AfterstateNet,
    afterstates,
    feature_size,
    final_reward,
    placements,
)
from shelfie_env.bots.learned.expect_head import NUM_SET_VALUES, NUM_SETS
from shelfie_env.bots.learned.value import ValueBot
from shelfie_env.bots.planner.placements import SET_MASKS
from shelfie_env.game.actions import END_TURN, circle_action, cross_action
from shelfie_env.game.engine import CROSS, REROLL, Game

from .conftest import assert_plays_legally

JOKER = 5


def _turn_starts(players: int, seed: int) -> list[Game]:
    """Turn-start positions of a game between random bots."""
    game, bot, out = Game.new(players, rng=seed), make("random", seed=seed), []
    while not game.over:
        if game.phase == REROLL and game.rolls_left == 2:
            out.append(game.clone())
        game.step(bot.act_game(game))
    return out


def _dice_for(cells: list[int]) -> list[tuple[int, int, int]] | None:
    """Dice groups ``(row, col, joker)`` that pay for ``cells`` within six dice."""
    for jokers in itertools.product((0, 1), repeat=len(cells)):
        groups = [(c // 5, c % 5, j) for c, j in zip(cells, jokers) if not (j and c % 5 == 0)]
        if len(groups) == len(cells) and sum(col + 1 for _, col, _ in groups) <= 6:
            return groups
    return None


def _play_placement(start: Game, set_mask: int | None, row: int | None) -> Game:
    """The engine's game after the mover ends its turn with ``set_mask`` circled or ``row`` crossed."""
    if row is not None:
        game = start.clone(rng=np.random.default_rng(1))
        game.phase, game._legal = CROSS, None  # as if the final dice could circle nothing
        game.step(cross_action(row))
        return game
    state = start.to_dict()
    state.update(rolls_left=0, circles_this_turn=0, spent=[False] * 6)
    cells = [c for c in range(25) if set_mask >> c & 1]
    groups = _dice_for(cells)
    assert groups is not None
    dice = [face for r, col, j in groups for face in [r] * (col + 1 - j) + [JOKER] * j]
    dice += [JOKER] * (6 - len(dice))
    state.update(phase="circle", dice=sorted(dice))
    game = Game.from_dict(state, rng=1)
    for r, col, j in groups:
        game.step(circle_action(r, col, j))
    if not game.over and game.current == start.current and game.phase != REROLL:
        game.step(END_TURN)
    return game


@pytest.mark.parametrize("players", [2, 3, 4])
def test_afterstates_match_the_engine(players):
    rng = np.random.default_rng(players)
    checked = 0
    for seed in range(3):
        for start in _turn_starts(players, seed)[::2]:
            p, n = start.current, players
            order = [(p + i) % n for i in range(n)]
            sel, rows = placements(start)
            pick = rng.choice(sel, size=min(12, len(sel)), replace=False) if len(sel) else sel
            feats, over, scores = afterstates(start, SET_MASKS[pick], rows)
            assert feats.shape == (len(pick) + len(rows), feature_size(n))
            for i, (s, r) in enumerate(
                [(int(SET_MASKS[k]), None) for k in pick] + [(None, int(r)) for r in rows]
            ):
                after = _play_placement(start, s, r)
                f = feats[i]
                for j, q in enumerate(order):
                    circ = sum(int(b) << c for c, b in enumerate(f[50 * j : 50 * j + 25]))
                    cross = sum(int(b) << c for c, b in enumerate(f[50 * j + 25 : 50 * j + 50]))
                    assert (circ, cross) == (after.circled[q], after.crossed[q]), (s, r, j)
                    assert scores[i, j] == after.score(q)
                assert bool(f[62 * n]) == after.end_triggered
                assert bool(over[i]) == after.over, (s, r)
                assert f[62 * n + 1 + p] == 1.0 and f[62 * n + 1 :].sum() == 1.0
                checked += 1
    assert checked > 100


def test_game_ending_placements_get_the_exact_final_reward():
    assert final_reward(np.array([[50, 40]]), 0.0).tolist() == [1.0]
    assert final_reward(np.array([[40, 40, 30]]), 0.1).tolist() == pytest.approx([0.5])
    assert final_reward(np.array([[30, 50]]), 0.1).tolist() == pytest.approx([-1.0 - 0.1 * 20 / 50])
    net = AfterstateNet([(np.zeros((feature_size(2), 1)), np.full(1, 7.0))], 2, margin_coef=0.1)
    seen_over = False
    for start in _turn_starts(2, 11):
        values = net.values_of(start)
        sel, rows = placements(start)
        feats, over, scores = afterstates(start, SET_MASKS[sel], rows)
        expect = np.where(over, final_reward(scores, 0.1), 7.0)
        got = np.concatenate([values[sel], values[NUM_SETS + rows]])
        np.testing.assert_allclose(got, expect, rtol=1e-6)
        others = np.ones(NUM_SET_VALUES, bool)
        others[sel] = others[NUM_SETS + rows] = False
        assert np.isnan(values[others]).all()
        seen_over |= bool(over.any())
    assert seen_over


def test_afterstate_net_round_trips_and_plays():
    rng = np.random.default_rng(0)
    layers = [
        (rng.normal(size=(feature_size(2), 8)), rng.normal(size=8)),
        (rng.normal(size=(8, 1)), np.zeros(1)),
    ]
    net = AfterstateNet(layers, 2, 0.1)
    again = AfterstateNet.from_state(net.state(), 2)
    x = rng.random((5, feature_size(2)))
    np.testing.assert_array_equal(net(x), again(x))
    assert again.margin_coef == pytest.approx(0.1)
    assert_plays_legally(ValueBot(net), seed=2, via_state=False)
    with pytest.raises(ValueError, match="inputs"):
        AfterstateNet(layers, 3, 0.1)


def test_one_forward_for_many_games_equals_one_per_game():
    rng = np.random.default_rng(5)
    dims = [feature_size(3), 12, 1]
    net = AfterstateNet([(rng.normal(size=(a, b)), rng.normal(size=b)) for a, b in zip(dims, dims[1:])], 3, 0.1)
    games = _turn_starts(3, 1)[::3] + _turn_starts(3, 2)[-4:]
    many = net.values_many(games)
    for game, values in zip(games, many):
        np.testing.assert_allclose(values, net.values_of(game), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="same number of players"):
        net.values_many([games[0], Game.new(2, rng=0)])
