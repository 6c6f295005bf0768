"""Luck and luck-corrected results: exact on hand-built positions, unbiased whatever the value function."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from shelfie_env.arena import run_arena
from shelfie_env.arena.luck import LuckTracker, corrected_results, turn_tables
from shelfie_env.arena.values import TDValue, make_value
from shelfie_env.bots.planner.dice import FINAL
from shelfie_env.bots.planner.dice import counts_of as dice_counts
from shelfie_env.game.actions import STOP
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import Game
from tests.conftest import ScriptedDice, make_state

JOKERS = FINAL[:, 5].astype(np.float64)


class JokerCount:
    """A deliberately poor value function: the number of jokers among the final dice (any shelf)."""

    name = "jokers"

    def placement_values(self, game: Game) -> np.ndarray:
        return JOKERS


def test_last_reroll_luck_is_the_value_after_minus_the_average_over_the_die() -> None:
    dice = ScriptedDice()
    game = Game.from_dict(make_state(phase="reroll", rolls_left=1, dice=[0, 5, 5, 5, 5, 5]), rng=dice)
    tracker = LuckTracker(JokerCount(), game)
    tracker.events.clear()  # from_dict made no roll; the tracker's first event is its own bookkeeping
    for face, luck in ((5, 5 / 6), (2, -1 / 6)):
        g = game.clone(rng=ScriptedDice([face]))
        t = LuckTracker(JokerCount(), g)
        t.events.clear()
        t.before(g, 0b000001)  # reroll the plant
        g.step(0b000001)
        t.after(g)
        (event,) = t.events
        assert (event.roll, event.thrown, event.seat) == (2, 1, 0)
        assert event.before == pytest.approx(5 + 1 / 6) and event.luck == pytest.approx(luck)


def test_first_roll_luck_with_a_known_value_function() -> None:
    """With V0 = jokers, the best play keeps jokers, and a first roll with j jokers has luck 25/36 (j - 1)."""
    for faces in ([0, 1, 2, 3, 4, 5], [5, 5, 5, 1, 1, 2], [0, 0, 1, 2, 3, 4]):
        game = Game.new(2, rng=ScriptedDice(faces))
        (event,) = LuckTracker(JokerCount(), game).events
        assert (event.roll, event.thrown) == (0, 6)
        assert event.before == pytest.approx(1 + 55 / 36)
        assert event.luck == pytest.approx(25 / 36 * (faces.count(5) - 1))


def test_luck_with_the_td_network_matches_a_brute_force_average() -> None:
    """Rerolling two dice on the last roll: luck = V0(after) - the mean of V0 over all 36 ordered outcomes."""
    value = TDValue(2)
    state = make_state(phase="reroll", rolls_left=1, dice=[0, 0, 2, 3, 3, 5])
    start = Game.from_dict(state)
    v0 = value.placement_values(start)
    index = {tuple(int(c) for c in m): i for i, m in enumerate(FINAL)}
    kept = [0, 0, 2, 3]

    def v_of(faces: list[int]) -> float:
        return float(v0[index[dice_counts(kept + faces)]])

    mean = sum(v_of([a, b]) for a, b in itertools.product(range(6), repeat=2)) / 36
    for faces in ([1, 4], [3, 3], [5, 5]):
        g = start.clone(rng=ScriptedDice(faces))
        t = LuckTracker(value, g)
        t.events.clear()
        t.before(g, 0b110000)
        g.step(0b110000)
        t.after(g)
        (event,) = t.events
        assert event.before == pytest.approx(mean, abs=1e-9)
        assert event.after == pytest.approx(v_of(faces), abs=1e-9)


def test_turn_tables_take_the_best_keep() -> None:
    tables = turn_tables(JOKERS)
    j = JOKERS
    assert np.allclose(tables.v[1], j + (6 - j) / 6)
    assert tables.fresh == pytest.approx(1 + 55 / 36)


def test_corrected_results_subtract_own_luck_and_add_the_rivals_share() -> None:
    from shelfie_env.arena.luck import ChanceEvent

    events = [ChanceEvent(0, 0, 0, 6, 0.0, 0.3), ChanceEvent(1, 0, 0, 6, 0.0, -0.2), ChanceEvent(2, 0, 1, 2, 0.1, 0.2)]
    out = corrected_results([1.0, -0.5, -0.5], events)
    assert out == pytest.approx([1.0 - 0.3 + (-0.2 + 0.1) / 2, -0.5 + 0.2 + (0.3 + 0.1) / 2, -0.5 - 0.1 + 0.1 / 2])
    assert sum(out) == pytest.approx(0.0)  # the rank reward stays zero-sum


def _play_fixed_seats(value, games: int) -> tuple[np.ndarray, np.ndarray]:
    """Random against random with fixed seats (seat 0 has the first-move edge), luck from ``value``."""
    from shelfie_env.bots import make
    from shelfie_env.envs.common import final_rewards

    bots = [make("random", seed=1), make("random", seed=2)]
    raw, cor = [], []
    for i in range(games):
        game = Game.new(2, rng=DiceTape(500_000 + i))
        tracker = LuckTracker(value, game)
        while not game.over:
            a = bots[game.current].act_game(game)
            tracker.before(game, a)
            game.step(a)
            tracker.after(game)
        r = final_rewards(game.scores(), "rank")
        raw.append(r[0])
        cor.append(corrected_results(r, tracker.events)[0])
    return np.array(raw), np.array(cor)


def test_a_poor_value_function_leaves_the_estimate_unbiased_over_4000_games() -> None:
    raw, cor = _play_fixed_seats(JokerCount(), 4000)
    half = 1.96 * math.sqrt(raw.var(ddof=1) / len(raw) + cor.var(ddof=1) / len(cor))
    assert abs(raw.mean() - cor.mean()) < half
    assert cor.var() > raw.var()  # a bad value function only widens the interval
    d = cor - raw  # the correction itself has mean zero
    assert abs(d.mean()) < 3 * d.std(ddof=1) / math.sqrt(len(d))


@pytest.mark.slow
def test_the_td_value_function_narrows_planner_against_greedy() -> None:
    res = run_arena(["planner", "greedy"], 2, 40, workers=1, ratings=False, luck="td", duplicate=True)
    (pair,) = res["results"]["pairings"]
    assert pair["variance_ratio"] > 1.5
    assert abs(pair["raw"]["mean"] - pair["corrected"]["mean"]) < 0.25


def test_arena_json_lets_anyone_recompute_raw_and_corrected(tmp_path) -> None:
    from shelfie_env.arena.cli import main

    out = tmp_path / "r"
    assert main(["greedy", "random", "--games", "6", "--luck", "planner", "--workers", "1", "--out", str(out)]) == 0
    res = json.loads(out.with_suffix(".json").read_text())
    games = res["games"]
    assert len(games) == 6 and {"seed", "seats", "raw", "corrected"} <= set(games[0])
    assert games[0]["seed"] == 30_000_000 and games[0]["seats"] == ["greedy", "random"]
    raw = [g["raw"][g["seats"].index("greedy")] for g in games]
    cor = [g["corrected"][g["seats"].index("greedy")] for g in games]
    (pair,) = res["results"]["pairings"]
    assert pair["raw"]["mean"] == pytest.approx(np.mean(raw))
    assert pair["corrected"]["mean"] == pytest.approx(np.mean(cor))
    half = 1.959964 * np.std(cor, ddof=1) / math.sqrt(len(cor))
    assert pair["corrected"]["ci95"] == pytest.approx([np.mean(cor) - half, np.mean(cor) + half])
    assert res["config"]["luck"] == "planner" and "corrected mean" in out.with_suffix(".md").read_text()


def test_duplicate_plays_every_deal_under_every_seating() -> None:
    res = run_arena(["greedy", "random", "planner"], 3, 6, workers=1, ratings=False, duplicate=True)
    games = res["games"]
    assert len(games) == 6
    by_deal: dict[int, list] = {}
    for g in games:
        by_deal.setdefault(g["deal"], []).append(tuple(g["seats"]))
    assert sorted(by_deal) == [0, 1]
    for seatings in by_deal.values():
        assert len(set(seatings)) == 3 and {s[0] for s in seatings} == {"greedy", "random", "planner"}
    res = run_arena(["greedy", "random", "planner"], 3, 6, workers=1, ratings=False, duplicate=True, permutations=True)
    assert len({tuple(g["seats"]) for g in res["games"]}) == 6


def test_duplicate_games_share_the_first_roll_of_each_turn() -> None:
    """The first roll of each seat's turn agrees between games of different bots on the same deal."""
    from shelfie_env.arena.protocol import play_game
    from shelfie_env.bots import make

    firsts = []
    for pair in (("greedy", "random"), ("planner", "greedy")):
        seen: dict[tuple[int, int], tuple[int, ...]] = {}
        bots = [make(p, seed=0) if p == "random" else make(p) for p in pair]
        game = Game.new(2, rng=DiceTape(77))
        while not game.over:
            if game.phase == 0 and game.rolls_left == 2:
                seen.setdefault((game.current, game.round), tuple(game.dice))
            game.step(bots[game.current].act_game(game) if hasattr(bots[game.current], "act_game") else STOP)
        firsts.append(seen)
        play_game(bots, 77)  # the arena's own loop plays the same deal without error
    common = set(firsts[0]) & set(firsts[1])
    assert len(common) >= 10 and all(firsts[0][k] == firsts[1][k] for k in common)


def test_bad_arena_options_are_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="multiple of 2"):
        run_arena(["greedy", "random"], 2, 5, duplicate=True, workers=1)
    with pytest.raises(ValueError, match="deals must be"):
        run_arena(["greedy", "random"], 2, 2, deals="later", workers=1)
    with pytest.raises(ValueError, match="luck value function"):
        run_arena(["greedy", "random"], 2, 2, luck="oracle", workers=1)
    with pytest.raises(ValueError, match="2-4 players"):
        make_value("td", 1)
    with pytest.raises(ValueError, match="tape"):
        run_arena(["greedy", "random"], 2, 2, duplicate=True, dice="stream", workers=1)


def test_the_first_seats_edge_is_taken_out_without_moving_any_bots_mean() -> None:
    from shelfie_env.arena.luck import ChanceEvent, first_seat_edge

    events = [ChanceEvent(0, 0, 0, 6, 0.3, 0.5), ChanceEvent(1, 0, 0, 6, -0.2, -0.1)]
    edge = first_seat_edge(events)
    assert edge == 0.3
    a_first = corrected_results([1.0, -1.0], events, edge)
    assert a_first == pytest.approx([1.0 - 0.2 - 0.3 + 0.1, -1.0 - 0.1 + 0.3 + 0.2])
    # Over both seatings of a deal the edge terms cancel: each bot's mean is the same as without them.
    b_first = corrected_results([-1.0, 1.0], events, edge)
    with_edge = (a_first[0] + b_first[1]) / 2
    without = (corrected_results([1.0, -1.0], events)[0] + corrected_results([-1.0, 1.0], events)[1]) / 2
    assert with_edge == pytest.approx(without)
    assert first_seat_edge([ChanceEvent(1, 3, 0, 6, 0.3, 0.5)]) == 0.0  # not a game's first roll


def test_results_name_a_model_by_its_file_and_card_never_by_its_path(tmp_path) -> None:
    import shutil

    from shelfie_env.bots.learned.value import shipped_td_model

    src = shipped_td_model(2)
    model = tmp_path / "deep" / "folder" / "mine.npz"
    model.parent.mkdir(parents=True)
    shutil.copy(src, model)
    shutil.copy(src.with_suffix(".json"), model.with_suffix(".json"))
    res = run_arena([f"td:path={model}", "greedy"], 2, 2, workers=1, ratings=False)
    text = json.dumps(res)
    assert str(tmp_path) not in text and "td:mine" in res["config"]["bots"]
    assert res["config"]["models"]["td:mine"]["algo"] == "TD(lambda)"
    assert "run_dir" not in res["config"]["models"]["td:mine"]["config"]


def test_a_mixed_value_functions_luck_is_the_mean_of_its_components() -> None:
    from shelfie_env.arena.luck import MixedValue

    class Sixes:
        name = "sixes"

        def placement_values(self, game: Game) -> np.ndarray:
            return FINAL[:, 4].astype(np.float64)  # cats

    faces = [5, 5, 4, 4, 4, 1]
    one = LuckTracker(JokerCount(), Game.new(2, rng=ScriptedDice(faces))).events[0]
    two = LuckTracker(Sixes(), Game.new(2, rng=ScriptedDice(faces))).events[0]
    mixed = LuckTracker(MixedValue([(1, JokerCount()), (3, Sixes())]), Game.new(2, rng=ScriptedDice(faces))).events[0]
    assert mixed.luck == pytest.approx(0.25 * one.luck + 0.75 * two.luck)
    assert make_value("td+planner", 2).name == "td+planner"
    with pytest.raises(ValueError, match="unknown luck value function"):
        make_value("td+td", 2)


def test_an_unknown_field_bot_is_named_as_the_field() -> None:
    with pytest.raises(ValueError, match="--field: unknown bot 'foo'"):
        run_arena(["greedy"], 3, 2, field="foo", workers=1)
