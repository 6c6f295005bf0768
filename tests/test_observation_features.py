"""The ``features`` observation: its values by hand on set positions, and the batched twin equal to it."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.batched import BatchedGame, random_legal_actions, seed_streams
from shelfie_env.game.engine import Game
from shelfie_env.observation.features import (
    GAIN_SCALE,
    check_obs_mode,
    encode_features,
    feature_size,
    features,
    obs_size,
)
from shelfie_env.observation.vector import encode, observation_size


def _game(dice: list[int], boards: list[list[list[int]]] | None = None, n: int = 2) -> Game:
    empty = [[0] * 5 for _ in range(5)]
    return Game.from_dict(
        {
            "num_players": n,
            "points": [[1, 2, 3, 5, 8]] * 5,
            "boards": boards or [empty] * n,
            "current_player": 0,
            "phase": "circle",
            "dice": sorted(dice),
            "spent": [False] * 6,
            "rolls_left": 0,
            "circles_this_turn": 0,
            "end_triggered": False,
        }
    )


def test_circle_now_is_the_circle_phase_mask() -> None:
    g = _game([2, 2, 2, 4, 5, 5])
    f = features(g, 0)
    mask = g.legal_mask()[64:114].astype(bool)
    assert np.array_equal(f[:50] > 0, mask)
    # three books circle column 2 plainly, and column 3 with a joker
    book_col2, book_col3 = 2 * (5 * 2 + 2), 2 * (5 * 2 + 3)
    assert f[book_col2] == 1.0 and f[book_col2 + 1] == 1.0 and f[book_col3 + 1] == 1.0
    assert f[book_col3] == 0.0


def test_gain_missing_and_near_lines() -> None:
    board = [[0] * 5 for _ in range(5)]
    board[0] = [1, 1, 1, 1, 0]  # plants: four circled, the fifth free
    board[1][0] = 2  # a crossed game cell
    rival = [[0] * 5 for _ in range(5)]
    for r in range(4):
        rival[r][2] = 1  # rival's column 2: four circles, row 4 free
    g = _game([0, 0, 0, 0, 0, 5], [board, rival])
    f = features(g, 0)
    cell = 4  # plant, column 4: five plants
    before = g.table.score(g.circled[0])
    after = g.table.score(g.circled[0] | 1 << cell)
    assert f[50 + 2 * cell] == pytest.approx((after - before) / GAIN_SCALE)
    assert f[100 + 0] == 1.0  # circled
    assert f[100 + 5] == 1.0  # crossed
    assert f[100 + 5 * 1 + 1] == pytest.approx(1 / 5)  # a game item needing 2 dice: 0 games + joker -> 1 more
    assert f[125 + 0] == 1.0  # own row 0 one circle from complete
    assert f[125 + 10 + 5 + 2] == 1.0  # the rival's column 2
    assert f[125:135].sum() == 1.0


def test_sizes_and_modes() -> None:
    g = _game([0, 1, 2, 3, 4, 5], n=3)
    assert encode_features(g, 1).shape == (obs_size(3, "features"),)
    assert obs_size(3, "features") == observation_size(3) + feature_size(3)
    assert np.array_equal(encode_features(g, 1)[: observation_size(3)], encode(g, 1))
    with pytest.raises(ValueError, match="obs must be one of"):
        check_obs_mode("pixels")


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_batched_features_match_scalar(num_players: int) -> None:
    batch = BatchedGame(32, num_players, seed=7 + num_players)
    streams = seed_streams(99, 32)
    checked = 0
    for _ in range(400):
        for seat in range(num_players):
            got = batch.observe(seat, obs="features")
            for i in range(0, 32, 3):
                want = encode_features(batch.to_game(i), seat)
                assert np.array_equal(got[i], want), f"game {i} seat {seat}"
                checked += 1
        actions = random_legal_actions(batch.legal_mask(), streams)
        done = batch.done.copy()
        batch.step(np.where(done, 0, actions), active=~done)
        if done.any():
            batch.reset(done)
    assert checked > 1000
