"""The game review: luck per roll as the luck tracker measures it, regret by the exact search, the mistakes."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.arena.analysis.review import (
    BLUNDER,
    MISTAKE,
    luck_mark,
    move_words,
    review_game,
    value_function,
)
from shelfie_env.arena.luck import LuckTracker, corrected_results
from shelfie_env.bots.learned.value import ValueBot
from shelfie_env.envs.common import final_rewards
from shelfie_env.game.actions import CIRCLE_BASE, END_TURN
from shelfie_env.game.engine import Game
from tests.conftest import BOOK, CAT, GAME, JOKER, PLANT, TROPHY, ScriptedDice, board, make_state


def play(players: list[Any], seed: int, track: Any = None) -> dict[str, Any]:
    """Play a game with ``players`` (bots with ``act_game`` or ``act``); the record a review needs."""
    game = Game.new(len(players), rng=seed)
    record: dict[str, Any] = {"initial": game.to_dict(), "actions": [], "states": []}
    tracker = LuckTracker(track, game) if track is not None else None
    while not game.over:
        bot = players[game.current]
        action = bot.act_game(game) if hasattr(bot, "act_game") else bot.act(game.to_dict())
        if tracker is not None:
            tracker.before(game, action)
        game.step(action)
        if tracker is not None:
            tracker.after(game)
        record["actions"].append(action)
        record["states"].append(game.to_dict())
    record["tracker"] = tracker
    record["scores"] = game.scores()
    return record


@pytest.fixture(scope="module")
def td_vs_greedy() -> dict[str, Any]:
    return play([bots.make("td", num_players=2), bots.make("greedy")], seed=3, track=value_function("td", 2))


def test_luck_is_the_trackers_and_the_adjusted_results_are_corrected_results(td_vs_greedy: dict[str, Any]) -> None:
    rec = td_vs_greedy
    review = review_game(rec["initial"], rec["actions"], rec["states"], names=["Ann", "Bo"])
    events = rec["tracker"].events
    assert [r["luck"] for r in review["rolls"]] == pytest.approx([e.luck for e in events], abs=1e-12)
    assert [(r["seat"], r["round"] - 1, r["roll"], r["thrown"]) for r in review["rolls"]] == [
        (e.seat, e.turn, e.roll, e.thrown) for e in events
    ]
    raw = final_rewards(rec["scores"], "rank")
    players = review["players"]
    assert [p["name"] for p in players] == ["Ann", "Bo"]
    assert [p["result"] for p in players] == raw
    assert [p["luck"] for p in players] == pytest.approx(rec["tracker"].own_luck(), abs=1e-12)
    assert [p["adjusted"] for p in players] == pytest.approx(corrected_results(raw, events), abs=1e-12)
    for s in range(2):  # a player's turns add up to their luck
        turns = [t["luck"] for t in review["turns"] if t["seat"] == s]
        assert sum(turns) == pytest.approx(players[s]["luck"], abs=1e-9)
    for t in review["turns"]:
        assert t["mark"] == luck_mark(t["luck"])


def test_rolls_name_the_faces_each_roll_threw(td_vs_greedy: dict[str, Any]) -> None:
    review = review_game(td_vs_greedy["initial"], td_vs_greedy["actions"], td_vs_greedy["states"])
    rerolls = [r for r in review["rolls"] if r["roll"] > 0]
    assert rerolls, "the game should have rerolls"
    for r in review["rolls"]:
        assert len(r["faces"]) == r["thrown"] == (6 if r["roll"] == 0 else r["thrown"])
        rest = list(r["dice"])
        for face in r["faces"]:
            rest.remove(face)  # the faces thrown are among the dice after the roll
        assert r["luck"] == pytest.approx(r["after"] - r["before"])
    first = review["rolls"][0]
    assert first["move"] is None and first["dice"] == [
        ["plant", "game", "book", "trophy", "cat", "joker"][d] for d in td_vs_greedy["initial"]["dice"]
    ]


def test_regrets_are_never_negative_and_the_mistakes_are_the_largest(td_vs_greedy: dict[str, Any]) -> None:
    rec = td_vs_greedy
    for spec in ("td", "planner"):
        review = review_game(rec["initial"], rec["actions"], rec["states"], value=spec)
        decisions = review["decisions"]
        assert [d["move"] for d in decisions] == list(range(1, len(rec["actions"]) + 1))
        assert [d["action"] for d in decisions] == rec["actions"]
        assert all(d["regret"] >= 0 for d in decisions)
        for d in decisions:
            assert d["regret"] == pytest.approx(d["best_value"] - d["value"], abs=1e-12)
            if d["regret"] == 0:
                assert d["best"] == d["action"] and d["better"] == d["played"]
        top = sorted((d["regret"] for d in decisions), reverse=True)[:3]
        assert [m["regret"] for m in review["mistakes"]] == top
        assert all(m["best"] != m["action"] for m in review["mistakes"])
        for p in review["players"]:
            mine = [d for d in decisions if d["seat"] == p["seat"]]
            assert p["decisions"] == len(mine)
            assert p["regret"] == pytest.approx(sum(d["regret"] for d in mine))
            assert p["mistakes"] == sum(d["regret"] >= MISTAKE for d in mine)
            assert p["blunders"] == sum(d["regret"] >= BLUNDER for d in mine)
    # greedy, judged by td, makes mistakes; td never errs by its own values
    td_review = review_game(rec["initial"], rec["actions"], rec["states"], value="td")
    assert td_review["players"][1]["regret"] > 0


def test_the_bots_own_moves_have_no_regret_under_their_own_search() -> None:
    """A td network playing by exactly the review's values (3 players: no exact last turns) and
    the planner under the planner's values: every move they chose is the best, regret 0."""
    judge = value_function("td", 3)
    td = ValueBot(judge.net)
    rec = play([td, bots.make("planner"), bots.make("greedy")], seed=5)
    review = review_game(rec["initial"], rec["actions"], rec["states"], value="td")
    mine = [d for d in review["decisions"] if d["seat"] == 0]
    assert mine and all(d["regret"] == 0.0 for d in mine)
    assert any(d["regret"] > 0 for d in review["decisions"] if d["seat"] == 2)
    by_planner = review_game(rec["initial"], rec["actions"], rec["states"], value="planner")
    assert all(d["regret"] == 0.0 for d in by_planner["decisions"] if d["seat"] == 1)


def last_turn_record() -> dict[str, Any]:
    """Seat 2 on the game's last turn, 0-0, with three plants and a cat: circling cat #1 is fine
    (plant #3 can still follow), ending the turn after it throws away the win (plant row: 6 points)."""
    state = make_state(
        boards=[
            board("XXXXX", "XXXXX", ".....", ".....", "....."),
            board("OO...", ".....", ".....", ".....", "....."),
        ],
        current=1,
        phase="circle",
        dice=[PLANT, PLANT, PLANT, CAT, BOOK, GAME],
        rolls_left=0,
    )
    game = Game.from_dict(state, rng=ScriptedDice())
    cat_1 = CIRCLE_BASE + 2 * (5 * CAT + 0)
    actions, states = [], []
    for a in (cat_1, END_TURN):
        game.step(a)
        actions.append(a)
        states.append(game.to_dict())
    assert game.over and game.scores() == [0, 0]
    return {"initial": state, "actions": actions, "states": states}


@pytest.mark.parametrize("spec", ["td", "planner"])
def test_a_thrown_away_win_costs_exactly_one(spec: str) -> None:
    rec = last_turn_record()
    review = review_game(rec["initial"], rec["actions"], rec["states"], value=spec, names=["Ann", "Bo"])
    first, last = review["decisions"]
    assert first["regret"] == 0.0 and first["played"] == "circle cat #1"
    assert last["played"] == "end turn" and last["better"] == "circle plant #3"
    assert last["regret"] == pytest.approx(1.0)  # a tie (0) instead of a win (+1)
    assert review["mistakes"] == [last]
    assert review["rolls"] == [] and review["turns"] == []  # it starts mid-turn: no roll seen
    assert [p["result"] for p in review["players"]] == [0.0, 0.0]
    assert [p["adjusted"] for p in review["players"]] == [0.0, 0.0]


def test_move_words_name_the_dice_not_their_positions() -> None:
    game = Game.from_dict(make_state(phase="reroll", rolls_left=2, dice=[PLANT, PLANT, BOOK, TROPHY, CAT, JOKER]))
    assert move_words(game, 0b011100) == "reroll book trophy cat (keep plant plant joker)"
    assert move_words(game, 0b111111) == "reroll plant plant book trophy cat joker"
    assert move_words(game, 0) == "stop rolling"
    assert move_words(game, END_TURN) == "end turn"


def test_numpy_action_ids_give_the_same_review(td_vs_greedy: dict[str, Any]) -> None:
    rec = td_vs_greedy
    plain = review_game(rec["initial"], rec["actions"], rec["states"])
    from_numpy = review_game(rec["initial"], np.array(rec["actions"]), rec["states"])
    assert json.dumps(from_numpy) == json.dumps(plain)


def test_luck_marks() -> None:
    assert [luck_mark(x) for x in (0.0, 0.19, 0.2, -0.25, 0.4, -0.9)] == [
        "", "", "lucky", "unlucky", "very lucky", "very unlucky",
    ]


def test_bad_games_are_refused_with_a_reason(td_vs_greedy: dict[str, Any]) -> None:
    rec = td_vs_greedy
    with pytest.raises(ValueError, match="not over"):
        review_game(rec["initial"], rec["actions"][:10], rec["states"][:10])
    with pytest.raises(ValueError, match="one position after each move"):
        review_game(rec["initial"], rec["actions"], rec["states"][:-1])
    games = [Game.from_dict(rec["initial"])] + [Game.from_dict(s) for s in rec["states"]]
    j = next(  # a reroll that kept a die other than a joker
        i for i, a in enumerate(rec["actions"])
        if 0 < a < 64 and any(d != JOKER for k, d in enumerate(games[i].dice) if not a >> k & 1)
    )
    states = list(rec["states"])
    states[j] = dict(states[j], dice=[JOKER] * 6)  # six jokers cannot hold the kept dice
    with pytest.raises(ValueError, match=f"move {j + 1} .*do not hold the dice it kept"):
        review_game(rec["initial"], rec["actions"], states)
    as_floats = [float(a) for a in rec["actions"]]
    with pytest.raises(ValueError, match=r"move 1: \d+\.0 is not an action id"):
        review_game(rec["initial"], as_floats, rec["states"])
    wrong = list(rec["actions"])
    wrong[0] = END_TURN  # not legal in the reroll phase
    with pytest.raises(ValueError, match="move 1 .*not legal"):
        review_game(rec["initial"], wrong, rec["states"])
    solo = play([bots.make("greedy")], seed=1)  # a solo game is solved: its review is exact (test_solo_review.py)
    assert review_game(solo["initial"], solo["actions"], solo["states"])["value"] == "exact"


def test_a_review_of_a_game_that_starts_after_a_circle() -> None:
    """The td judge values ending the turn at a first position taken after a circle."""
    game = Game.new(2, rng=5)
    bot = bots.make("greedy")
    while not (game.phase_name == "circle" and game.circles == 1):
        game.step(bots.act_on_game(bot, game))
    start, actions, states = game.clone(), [], []
    while not game.over:
        a = bots.act_on_game(bot, game)
        game.step(a)
        actions.append(a)
        states.append(game.to_dict())
    review = review_game(start, actions, states, value="td")
    assert review["players"][0]["decisions"] + review["players"][1]["decisions"] == len(actions)
