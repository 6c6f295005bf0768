"""The ladder's levels: one fixed policy each, small errors, error rates in level order, clear refusals."""

from __future__ import annotations

import random

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.arena.analysis.positions import load_positions
from shelfie_env.bots.levels import LEVELS, Level, LevelBot, find_level, noise, noisy_choice
from shelfie_env.bots.planner.search import action_values
from shelfie_env.game.engine import Game


def _states(players: int, games: int = 3, seed: int = 0) -> list[dict]:
    """Positions of every phase from a few games of mixed bots."""
    rng = random.Random(seed)
    out = []
    for g in range(games):
        game = Game.new(players, rng=seed * 100 + g)
        seats = [bots.make(rng.choice(["greedy", "random"])) for _ in range(players)]
        while not game.over:
            if len(game.legal_actions()) > 1:
                out.append(game.to_dict())
            game.step(bots.act_on_game(seats[game.current], game))
    return out[::3]


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("level", ["level-1", "level-3", "level-5"])
def test_a_level_answers_a_position_the_same_way_fresh_reused_and_in_any_order(players: int, level: str) -> None:
    states = _states(players)[:40]
    fresh = [bots.make(level).act(s) for s in states]
    reused = bots.make(level)
    assert [reused.act(s) for s in states] == fresh
    order = list(range(len(states)))
    random.Random(1).shuffle(order)
    again = {i: reused.act(states[i]) for i in order}
    assert [again[i] for i in range(len(states))] == fresh
    for s, a in zip(states, fresh):
        assert Game.from_dict(s).legal_mask()[a]


def test_the_noise_is_a_fixed_function_of_the_position_and_the_level() -> None:
    state = Game.new(2, rng=7).to_dict()
    z1 = noise(state, LEVELS[0])
    assert np.array_equal(z1, noise(dict(reversed(list(state.items()))), LEVELS[0]))
    assert not np.array_equal(z1, noise(state, LEVELS[1]))
    # the same numbers on every machine and numpy version (SHAKE-256 and the normal quantile)
    assert z1[:3].tolist() == pytest.approx([-0.641097, 0.179824, 1.660974], abs=1e-6)
    assert 0.7 < z1.std() < 1.3 and abs(z1.mean()) < 0.3


def test_a_level_never_plays_what_it_values_more_than_its_cap_below_its_best() -> None:
    values = {0: 0.5, 1: 0.45, 2: 0.1, 3: -0.3}
    lv = find_level("beginner")
    picks = set()
    for k in range(200):
        z = np.random.default_rng(k).standard_normal(120)
        picks.add(noisy_choice(values, z, lv))
    assert picks <= {0, 1} and picks == {0, 1}
    assert noisy_choice(values, np.zeros(120), find_level("master")) == 0


def test_a_level_with_a_target_plays_the_action_nearest_that_gap_below_its_best() -> None:
    values = {0: 0.5, 1: 0.48, 2: 0.42, 3: 0.3, 4: -0.3}
    lv = Level(2, "casual", 0.07, sigma=0.0)
    assert noisy_choice(values, np.zeros(120), lv) == 2
    assert noisy_choice(values, np.zeros(120), Level(2, "casual", 0.015, sigma=0.0)) == 1
    assert noisy_choice(values, np.zeros(120), Level(2, "casual", 0.3, sigma=0.0)) == 2  # never past the cap
    assert noisy_choice({7: 0.1}, np.zeros(120), lv) == 7
    assert find_level("casual").describe(2) == "td, aims 0.07 below its best (sd 0.02), within 0.15"


def test_levels_are_named_by_number_or_name_and_bad_names_list_the_levels() -> None:
    assert find_level("level-2").name == "casual" and find_level("expert").number == 5 and find_level(6).name == "master"
    for bad in ("level-0", "level-7", "level-banana"):
        with pytest.raises(ValueError, match=r"level-1 \(beginner\).*level-6 \(master\)"):
            bots.make(bad)
    with pytest.raises(ValueError, match="tables of 2, 3, 4 players"):
        bots.make("level-2", num_players=1)
    with pytest.raises(ValueError, match="level-4"):
        bots.check_table("level-4", 1)


def test_error_rates_fall_from_level_to_level_on_a_position_sample() -> None:
    """Levels 1, 4 and 6 in order on 300 two-player test positions, paired by position."""
    recs = load_positions(None, players=2, part="test")[:300]
    loss = {}
    for spec in ("level-1", "level-4", "level-6"):
        bot = bots.make(spec)
        out = []
        for r in recs:
            a = bot.act(r["state"])
            v = np.array(r["label"]["value"])
            out.append(v.max() - v[r["label"]["actions"].index(a)])
        loss[spec] = np.array(out)
    for weak, strong in (("level-1", "level-4"), ("level-4", "level-6")):
        d = loss[weak] - loss[strong]
        assert d.mean() > 2 * d.std(ddof=1) / np.sqrt(d.size), (weak, strong, d.mean())


def test_a_level_plays_the_td_network_of_its_table_size() -> None:
    game = Game.new(3, rng=3)
    bot = bots.make("level-6")
    td = bots.make("td", num_players=3)
    assert bot.act(game.to_dict()) == td.act(game.to_dict())
    vals = action_values(game, ctx=bot.base(3).context(game))
    assert set(vals) == set(game.legal_actions())


def test_a_level_plays_the_target_of_its_table_size() -> None:
    """A level whose target differs at one table size aims at it there and at its default elsewhere."""
    lv = Level(3, "intermediate", 0.05, tables=((4, 0.0, 0.0, 0.0),))
    assert lv.at(4).target == 0 and lv.at(2) is lv and lv.at(4).spec == lv.spec
    assert lv.describe(4) == "td" and lv.describe(2) == "td, aims 0.05 below its best (sd 0.02), within 0.15"
    assert find_level("beginner").describe(3) == "td, noise sd 1, within 0.25 of its best"
    four = LevelBot(lv, 4)
    td = bots.make("td", num_players=4)
    for state in _states(4, games=2):
        assert four.act(state) == td.act(state)
    two = LevelBot(lv, 2)
    td2 = bots.make("td", num_players=2)
    assert any(two.act(s) != td2.act(s) for s in _states(2, games=2))
