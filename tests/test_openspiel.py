"""The OpenSpiel game ``python_shelfie``: conformance, equality with the engine, conversions, bots."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections import Counter

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots

import shelfie_env.openspiel as so
from shelfie_env import bots
from shelfie_env.envs.common import final_rewards
from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import Game
from shelfie_env.observation.vector import encode
from shelfie_env.openspiel.bots import MCTSBot, SpielBot
from tests import reference
from tests.conftest import ScriptedDice, board, make_state


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_random_sim_test_with_serialization(players: int) -> None:
    game = pyspiel.load_game("python_shelfie", {"players": players})
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_random_sim_test_score_reward_and_custom_points() -> None:
    game = pyspiel.load_game("python_shelfie(players=2,points=1/1/2/3/4,reward=score)")
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert game.max_utility() == 2 * (1 + 1 + 2 + 3 + 4) * 5
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_game_info(players: int) -> None:
    game = pyspiel.load_game("python_shelfie", {"players": players})
    assert game.num_players() == players
    assert game.num_distinct_actions() == 120
    assert game.max_chance_outcomes() == 462
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    assert game.utility_sum() == 0.0
    assert game.observation_tensor_size() == 63 * players + 60
    assert game.max_game_length() == 91 * players
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert str(game) == f"python_shelfie(players={players},points=1/2/3/5/8,reward=rank)"


def test_information_state_tensor_is_refused_as_the_game_type_says() -> None:
    game = pyspiel.load_game("python_shelfie")
    assert not game.get_type().provides_information_state_tensor
    state = game.new_initial_state()
    state.apply_action(0)
    calls = (
        lambda: state.information_state_tensor(0),
        state.information_state_tensor,
        game.information_state_tensor_shape,
        game.information_state_tensor_size,
    )
    for call in calls:
        with pytest.raises(pyspiel.SpielError, match="no information-state tensor.*observation_tensor"):
            call()
    assert len(state.observation_tensor(0)) == game.observation_tensor_size()
    assert state.information_state_string(0) == state.history_str()


def test_chance_probabilities_are_exact_multinomials() -> None:
    for k in range(1, 7):
        outcomes = so.OUTCOMES[k]
        assert [i for i, _ in outcomes] == list(range(len(outcomes)))
        assert sum(p for _, p in outcomes) == pytest.approx(1.0, abs=1e-12)
        if k <= 4:  # every ordered throw, counted
            seen = Counter(tuple(sorted(t)) for t in itertools.product(range(6), repeat=k))
            for i, p in outcomes:
                assert p == pytest.approx(seen[so.FACES[k][i]] / 6**k, abs=1e-15)
    assert len(so.OUTCOMES[6]) == 462
    assert so.outcome_id([5, 0, 3]) == so.FACES[3].index((0, 3, 5))
    with pytest.raises(ValueError, match="faces 0..5"):
        so.outcome_id([6])


def _play_side_by_side(players: int, seed: int) -> None:
    """A random game in OpenSpiel, in our engine and in the plain reference, on the same dice."""
    rng = np.random.default_rng(seed)
    spiel = so.load(players)
    state = spiel.new_initial_state()
    dice = ScriptedDice()

    def land_chance() -> None:
        while state.is_chance_node():
            outcomes = state.chance_outcomes()
            assert sum(p for _, p in outcomes) == pytest.approx(1.0, abs=1e-12)
            ids = [o for o, _ in outcomes]
            assert ids == state.legal_actions()
            o = int(rng.choice(ids, p=[p for _, p in outcomes]))
            faces = list(so.FACES[state.core.throw][o])
            rng.shuffle(faces)  # any order of the thrown dice gives the same sorted dice
            dice.push(*faces)
            state.apply_action(o)

    land_chance()
    engine = Game.new(players, rng=dice)
    ref = engine.to_dict()
    while not state.is_terminal():
        d = so.state_dict(state)
        assert d == engine.to_dict()
        assert {k: v for k, v in d.items() if k != "scores"} == {k: v for k, v in ref.items() if k != "scores"}
        legal = state.legal_actions()
        assert legal == list(engine.legal_actions()) == sorted(reference.legal(ref))
        assert state.current_player() == engine.current
        for p in range(players):
            assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32), encode(engine, p))
        a = int(rng.choice(legal))
        assert state.action_to_string(state.current_player(), a) == action_name(a)
        state.apply_action(a)
        before = len(dice.faces)
        land_chance()
        rolled = list(dice.faces[before:])
        engine.step(a)
        ref = reference.step(ref, a, lambda k, r=rolled: [r.pop(0) for _ in range(k)])
    assert engine.over and ref["phase"] == "over"
    assert so.state_dict(state)["scores"] == engine.scores()
    assert engine.scores() == [reference.score(b, ref["points"]) for b in ref["boards"]]
    assert state.returns() == final_rewards(engine.scores(), "rank")


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_random_games_equal_engine_and_reference(players: int) -> None:
    for seed in range(3):
        _play_side_by_side(players, 100 * players + seed)


def test_chance_nodes_first_roll_and_rerolls() -> None:
    game = so.load(2)
    state = game.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 462
    six_jokers = so.outcome_id([5] * 6)
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, six_jokers) == "roll " + ",".join(["joker"] * 6)
    state.apply_action(so.outcome_id([0, 0, 1, 3, 4, 5]))
    assert so.state_dict(state)["dice"] == [0, 0, 1, 3, 4, 5]
    state.apply_action(34)  # reroll one plant and the joker: 2 dice in the air
    assert state.is_chance_node() and len(state.chance_outcomes()) == 21
    with pytest.raises(ValueError, match="chance node"):
        so.state_dict(state)
    state.apply_action(so.outcome_id([4, 4]))
    d = so.state_dict(state)
    assert d["dice"] == [0, 1, 3, 4, 4, 4] and d["rolls_left"] == 1 and d["phase"] == "reroll"
    with pytest.raises(ValueError, match="illegal action 8 .reroll dice 4.: not a canonical"):
        state.apply_action(8)  # the lowest of three cats


def test_clone_is_independent_and_serialization_round_trips() -> None:
    game = so.load(3)
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    for _ in range(40):
        if state.is_chance_node():
            ids, ps = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(ids, p=ps)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
        text = pyspiel.serialize_game_and_state(game, state)
        game2, state2 = pyspiel.deserialize_game_and_state(text)
        assert str(game2) == str(game)
        assert str(state2) == str(state) and state2.history() == state.history()
        assert state2.is_chance_node() == state.is_chance_node()
        assert state2.legal_actions() == state.legal_actions()
    copy = state.clone()
    before = str(state)
    while not copy.is_terminal():
        if copy.is_chance_node():
            copy.apply_action(copy.legal_actions()[0])
        else:
            copy.apply_action(copy.legal_actions()[-1])
    assert str(state) == before and not state.is_terminal()


def test_state_dict_round_trip_and_errors() -> None:
    game = so.load(2)
    d = make_state(boards=[board("OOO.."), board("X....")], num_players=2, phase="reroll", rolls_left=2,
                   dice=[0, 0, 1, 3, 4, 5])
    state = so.from_state_dict(game, d)
    assert state.current_player() == 0 and len(state.legal_actions()) == 48
    out = so.state_dict(state)
    assert {k: out[k] for k in d} == d
    assert state.history() == []
    with pytest.raises(ValueError, match="num_players is 2, the game has players=3"):
        so.from_state_dict(so.load(3), d)
    with pytest.raises(ValueError, match="points"):
        so.from_state_dict(so.load(2, points=[[1, 1, 1, 1, 1]] * 5), d)
    with pytest.raises(ValueError, match="rolls_left"):
        so.from_state_dict(game, {**d, "rolls_left": 7})
    with pytest.raises(TypeError, match="python_shelfie state"):
        so.state_dict(pyspiel.load_game("tic_tac_toe").new_initial_state())


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="players must be an integer 1..4"):
        pyspiel.load_game("python_shelfie", {"players": 5})
    with pytest.raises(ValueError, match="points must be 5 or 25"):
        pyspiel.load_game("python_shelfie", {"points": "1/2/3"})
    with pytest.raises(ValueError, match="reward must be one of"):
        pyspiel.load_game("python_shelfie", {"reward": "margin"})


def test_our_bots_in_evaluate_bots() -> None:
    game = so.load(3)
    players = [SpielBot("greedy"), SpielBot(bots.make("random", seed=1)), SpielBot("planner")]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), players, np.random.RandomState(0))
    assert len(returns) == 3 and sum(returns) == pytest.approx(0.0)
    state = game.new_initial_state()
    state.apply_action(so.outcome_id([0, 0, 1, 3, 4, 5]))
    assert players[0].step(state) == bots.make("greedy").act(so.state_dict(state))


def _last_turn() -> dict:
    """Seat 1 ends the game: circling the third plant wins, anything else ties at 0."""
    return make_state(
        boards=[board(".....", ".....", ".....", "XXXXX", "XXXXX"), board("OO...")],
        num_players=2, current=1, phase="circle", dice=[0, 0, 0, 1, 2, 5], end_triggered=True,
    )


def test_mcts_bot_plays_legal_moves_and_finds_the_win() -> None:
    bot = bots.make("openspiel-mcts", simulations=300, seed=0)
    game = Game.from_dict(_last_turn(), rng=0)
    while not game.over:
        game.step(bot.act_game(game))
    assert game.scores() == [0, 6]
    for players in (1, 3, 4):
        g = Game.new(players, rng=players)
        a = bots.make("openspiel-mcts", simulations=10, rollout="greedy", seed=1).act(g.to_dict())
        assert a in g.legal_actions()


def test_mcts_bot_is_reproducible_and_checks_options() -> None:
    g = Game.new(2, rng=11)
    picks = {MCTSBot(simulations=30, seed=3).act_game(g) for _ in range(2)}
    assert len(picks) == 1
    with pytest.raises(ValueError, match="simulations"):
        MCTSBot(simulations=0)
    with pytest.raises(ValueError, match="rollout must be one of"):
        MCTSBot(rollout="planner")


def test_missing_open_spiel_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pyspiel'] = None\n"
        "from shelfie_env import bots\n"
        "assert bots.table_sizes('openspiel-mcts') == (1, 2, 3, 4)\n"
        "assert 'shelfie_env.openspiel' not in sys.modules\n"
        "try:\n    bots.make('openspiel-mcts')\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "shelfie-env[openspiel]" in out
