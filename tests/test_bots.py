"""Baseline bots: legality everywhere, greedy's obvious moves, greedy beats random."""

from __future__ import annotations

import time

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.bots import act_on_game, available, make
from shelfie_env.bots.greedy.scalar import EASE, chase_distribution
from shelfie_env.game.actions import CROSS_BASE, STOP, action_kind, circle_action, decode_circle
from shelfie_env.game.engine import Game

from .conftest import spec_state as state

EMPTY = [[0] * 5 for _ in range(5)]


def random_positions(count: int, seed: int):
    """Positions reached by random play (1-4 players, random depths)."""
    rng = np.random.default_rng(seed)
    mover = make("random", seed=seed)
    out = []
    while len(out) < count:
        game = Game.new(int(rng.integers(1, 5)), rng=int(rng.integers(1 << 30)))
        depth = int(rng.integers(0, 160))
        for _ in range(depth):
            if game.over:
                break
            game.step(mover.act_game(game))
        if not game.over:
            out.append(game)
    return out


def test_both_bots_are_registered() -> None:
    assert {"random", "greedy"} <= set(available())


@pytest.mark.parametrize("name", ["greedy", "random"])
def test_bots_always_return_legal_actions_and_do_not_touch_the_game(name: str) -> None:
    bot = make(name, seed=3) if name == "random" else make(name)
    for game in random_positions(400, seed=7):
        before = game.to_dict()
        a = bot.act_game(game)
        assert a in game.legal_actions(), (game, a)
        assert game.to_dict() == before
        b = bot.act(before)
        assert b in game.legal_actions()


def test_greedy_is_deterministic_and_dict_path_matches_fast_path() -> None:
    g1, g2 = make("greedy"), make("greedy")
    for game in random_positions(150, seed=11):
        assert g1.act_game(game) == g2.act(game.to_dict())


def test_greedy_plays_whole_games_legally_for_every_table_size() -> None:
    bot = make("greedy")
    for n in (1, 2, 3, 4):
        game = Game.new(n, rng=100 + n)
        steps = 0
        while not game.over:
            game.step(act_on_game(bot, game))  # step raises on an illegal action
            steps += 1
        assert steps > 10 and game.over


def test_greedy_circles_cat_five_with_five_cats_and_a_joker() -> None:
    bot = make("greedy")
    for n in (1, 2):
        s = state(num_players=n, boards=[EMPTY] * n)
        row, col, _ = decode_circle(bot.act(s))
        assert (row, col) == (4, 4)
        # ...and keeps those dice instead of rerolling them.
        assert bot.act(state(num_players=n, boards=[EMPTY] * n, phase="reroll", rolls_left=2)) == STOP


def test_greedy_uses_the_joker_to_also_circle_cat_one() -> None:
    bot = make("greedy")
    game = Game.from_dict(state())
    first = bot.act_game(game)
    assert first == circle_action(4, 4, True)  # 4 cats + joker, so the 5th cat is left for cat #1
    game.step(first)
    assert bot.act_game(game) == circle_action(4, 0, False)


def test_greedy_keeps_the_dice_of_the_symbol_it_chases() -> None:
    bot = make("greedy")
    game = Game.from_dict(state(phase="reroll", rolls_left=2, dice=[0, 1, 2, 4, 4, 4]))
    a = bot.act_game(game)
    assert action_kind(a) == "reroll"
    kept = [game.dice[i] for i in range(6) if not a >> i & 1]
    assert kept == [4, 4, 4]


def test_greedy_crosses_the_least_valuable_row() -> None:
    # plants: 3 circled (scores); games: all free; books: 2 circled; trophies: 4 circled;
    # cats: 4 crossed, only the hard #5 left and the row can never score.
    board = [
        [1, 1, 1, 0, 0],
        [0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 1, 0],
        [2, 2, 2, 2, 0],
    ]
    s = state(boards=[board, EMPTY], phase="cross", dice=[0, 0, 2, 2, 3, 3])
    game = Game.from_dict(s)
    assert game.legal_actions() == tuple(CROSS_BASE + r for r in range(5))
    assert make("greedy").act(s) == CROSS_BASE + 4


def test_chase_odds_are_distributions() -> None:
    for k in range(7):
        for j in (0, 1):
            if k + j > 6:
                continue
            for rolls in (0, 1, 2):
                dist = chase_distribution(k, j, rolls)
                assert sum(p for _, _, p in dist) == pytest.approx(1.0)
                assert all(k2 >= k and j2 >= j for k2, j2, _ in dist)
    # One die rerolled once: it matches the chased face with probability 1/6.
    assert dict(((k, j), p) for k, j, p in chase_distribution(5, 0, 1))[(6, 0)] == pytest.approx(1 / 6)
    assert list(EASE) == sorted(EASE, reverse=True) and 0 < EASE[-1] < EASE[0] <= 1


def test_greedy_beats_random() -> None:
    greedy, rnd = make("greedy"), make("random", seed=0)
    wins = 0
    games = 60
    for i in range(games):
        seat = i % 2
        bots = [greedy, rnd] if seat == 0 else [rnd, greedy]
        game = Game.new(2, rng=1000 + i)
        while not game.over:
            game.step(act_on_game(bots[game.current], game))
        scores = game.scores()
        wins += scores[seat] > scores[1 - seat]
    assert wins >= 0.9 * games


def test_greedy_is_fast() -> None:
    bot = make("greedy")
    game = Game.new(2, rng=5)
    bot.act_game(game)  # builds its tables once
    times = []
    for seed in (6, 7):
        game = Game.new(2, rng=seed)
        while not game.over:
            t = time.perf_counter()
            a = bot.act_game(game)
            times.append(time.perf_counter() - t)
            game.step(a)
    assert sum(times) / len(times) < 0.003  # ~0.1 ms here; generous for a busy CI machine


def test_a_spec_registered_under_a_name_of_its_own_plays_its_card_table_size():
    from shelfie_env.bots.learned.bot import shipped_model
    from shelfie_env.bots.spec import register_spec

    register_spec("mine", f"ppo:path={shipped_model(2)}")
    register_spec("careful", "planner")
    try:
        assert {"mine", "careful"} <= set(bots.available())
        assert bots.table_sizes("mine") == (2,) and bots.table_sizes("careful") == (1, 2, 3, 4)
        game = Game.new(2, rng=3)
        assert bots.make("mine", num_players=2).act(game.to_dict()) in game.legal_actions()
        with pytest.raises(ValueError, match="plays 2-player games, not 3"):
            bots.make("mine", num_players=3)
    finally:
        bots._REGISTRY.pop("mine", None)
        bots._REGISTRY.pop("careful", None)
    with pytest.raises(ValueError, match="exists already"):
        register_spec("planner", "greedy")
    with pytest.raises(ValueError, match="unknown bot"):
        register_spec("x", "nosuchbot")
    with pytest.raises(FileNotFoundError, match="no model file"):
        register_spec("x", "ppo:path=/no/such.npz")
    with pytest.raises(ValueError, match="use letters"):
        register_spec("a:b", "greedy")
    assert "x" not in bots.available()
