"""The reply search of ``td:depth=2``: positions, values and options."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.bots import make
from shelfie_env.bots.learned.reply import rival_turn
from shelfie_env.bots.learned.value import LearnedContext, ValueBot, load_value_bot, shipped_td_model
from shelfie_env.bots.planner.search import action_values, best_action
from shelfie_env.bots.spec import build_bot
from shelfie_env.game.engine import REROLL, Game
from shelfie_env.train.td import placement_index

from .conftest import assert_plays_legally


def _mid_game(seed: int, turns: int) -> Game:
    """A 2-player game after ``turns`` turns of the shipped ``td``, at the next turn's start."""
    bot = make("td", num_players=2)
    g = Game(2, rng=seed)
    for _ in range(turns):
        p = g.current
        while not g.over and g.current == p:
            g.step(bot.act_game(g))
    assert not g.over
    return g


@pytest.mark.parametrize("seed", range(6))
def test_the_rivals_turn_starts_where_the_engine_puts_it(seed):
    g = _mid_game(seed, 2 + seed)
    p = g.current
    start = g.clone()
    bot = make("td", num_players=2)
    while g.current == p and not g.over:
        g.step(bot.act_game(g))
    if g.over:
        pytest.skip("the game ended with this turn")
    extra = g.circled[p] & ~start.circled[p]
    row = None if extra else (int(g.crossed[p] & ~start.crossed[p]).bit_length() - 1) // 5
    built = rival_turn(g, p, tuple(start.circled), tuple(start.crossed), extra, row)
    assert built is not None
    assert built.current == g.current
    assert built.circled == g.circled and built.crossed == g.crossed
    assert built.end_triggered == g.end_triggered


def test_the_reply_value_is_minus_the_rivals_average_over_its_turns():
    """Q2 of a placement against the mean of the rival's one-ply value of its own turns, played out."""
    g = _mid_game(3, 4)
    bot = load_value_bot(shipped_td_model(2), 2, depth=2, width=4)
    p = g.current
    start = g.clone()
    search = bot.search
    assert search is not None
    free = [c for c in range(25) if not (start.circled[p] | start.crossed[p]) >> c & 1]
    extra = 1 << free[0]
    turn = (p, tuple(start.circled), tuple(start.crossed))
    rival = rival_turn(start, *turn, extra, None)
    assert rival is not None
    (q2,) = search.values(start, turn, [(extra, None)])
    one_ply = make("td", num_players=2)
    rng = np.random.default_rng(0)
    outcomes = []
    vals = one_ply.net.values_of(rival)  # the rival's shelves, hence its placement values, are fixed
    for _ in range(1500):
        r = rival.clone(rng=np.random.default_rng(int(rng.integers(1 << 62))))
        r._start_turn()
        q = r.current
        before = r.clone()
        ctx = LearnedContext(r, vals)
        while not r.over and r.current == q:
            r.step(best_action(action_values(r, ctx=ctx)))
        outcomes.append(float(vals[placement_index(before, r, q)]))
    mean, se = float(np.mean(outcomes)), float(np.std(outcomes) / np.sqrt(len(outcomes)))
    assert abs(-q2 - mean) < 4 * se + 1e-3


def test_depth_two_plays_legal_games_and_the_same_rerolls():
    deep, flat = make("td", num_players=2, depth=2, width=4), make("td", num_players=2)
    for seed in range(3):
        g = Game(2, rng=seed)
        while not g.over:
            a = deep.act_game(g)
            if g.phase == REROLL:
                assert a == flat.act_game(g)
            g.step(a)
    assert_plays_legally(build_bot("td:depth=2,width=2"), seed=7)


def test_bad_search_options_are_refused_with_their_name():
    with pytest.raises(ValueError, match="depth"):
        make("td", depth=3)
    with pytest.raises(ValueError, match="width"):
        make("td", depth=2, width=0)
    with pytest.raises(ValueError, match="2 players|2-player|at 2 players"):
        make("td", num_players=3, depth=2)
    assert isinstance(make("td", num_players=2, depth=2), ValueBot)
