"""Common dice: the dice tape deals by (seat, turn, roll, k), whatever anyone played before."""

from __future__ import annotations

import json
from collections import Counter
from math import factorial

import gymnasium as gym
import numpy as np
import pytest

import shelfie_env  # noqa: F401  (registers the Gymnasium ids)
from shelfie_env import shelfie_v0
from shelfie_env.bots import act_on_game, make
from shelfie_env.bots.planner.dice import counts_of, outcome_distribution
from shelfie_env.game.actions import STOP
from shelfie_env.game.dice import DiceTape, dice_source
from shelfie_env.game.engine import REROLL, Game


def _play(tape_seed: int, bots: list, record: list | None = None) -> Game:
    """Play a game on tape ``tape_seed``; ``record`` gets (seat, turn, rolls_left, dice) at every reroll-phase state."""
    game = Game.new(len(bots), rng=DiceTape(tape_seed))
    while not game.over:
        if record is not None and game.phase == REROLL:
            record.append((game.current, game.round, game.rolls_left, tuple(game.dice)))
        game.step(act_on_game(bots[game.current], game))
    return game


def test_a_tape_is_a_pure_function_of_its_position() -> None:
    a, b = DiceTape(7), DiceTape(7)
    for seat in range(4):
        for turn in (0, 5, 31, 32, 70):
            for roll in range(3):
                assert a.throw(seat, turn, roll, 6) == b.throw(seat, turn, roll, 6)
                assert a.throw(seat, turn, roll, 3) == a.throw(seat, turn, roll, 6)[:3]
    assert DiceTape(7).throw(0, 0, 0, 6) != DiceTape(8).throw(0, 0, 0, 6) or DiceTape(7).throw(
        1, 0, 0, 6
    ) != DiceTape(8).throw(1, 0, 0, 6)


def test_same_seed_same_actions_same_game() -> None:
    bots = [make("greedy"), make("random", seed=3)]
    g1, g2 = _play(11, bots), _play(11, [make("greedy"), make("random", seed=3)])
    assert g1.to_dict() == g2.to_dict()


def test_a_seats_first_rolls_do_not_depend_on_the_other_players() -> None:
    """Seat 0's first roll of every turn is the same whoever sits in seat 1 and however it plays."""
    runs = []
    for rival in (make("random", seed=1), make("random", seed=2), make("greedy")):
        record: list = []
        _play(2024, [make("greedy"), rival], record)
        runs.append({(s, t): dice for s, t, left, dice in record if left == 2 and s == 0})
    common = set(runs[0]) & set(runs[1]) & set(runs[2])
    assert len(common) >= 5
    for key in common:
        assert runs[0][key] == runs[1][key] == runs[2][key] == tuple(sorted(DiceTape(2024).throw(0, key[1], 0, 6)))


def test_a_reroll_takes_the_tapes_first_faces_of_that_roll_whatever_came_before() -> None:
    tape = DiceTape(99)
    for turn in range(3):
        game = Game.new(2, rng=tape)
        game.round = turn  # the same seat and turn, reached by any history
        game._start_turn()
        assert game.dice == sorted(tape.throw(0, turn, 0, 6))
        kept = [d for i, d in enumerate(game.dice) if i not in (4, 5)]
        game.step(0b110000)  # reroll the two highest dice
        assert game.dice == sorted(kept + tape.throw(0, turn, 1, 2))
        kept = game.dice[:5]
        game.step(0b100000)
        assert game.dice == sorted(kept + tape.throw(0, turn, 2, 1))


def test_tape_faces_are_fair_independent_dice() -> None:
    """Faces are uniform (chi-square), and the first roll's multisets follow the exact multinomial."""
    faces = np.concatenate([DiceTape(s).faces(seat, t).ravel() for s in range(400) for seat in range(4) for t in range(26)])
    counts = np.bincount(faces, minlength=6)
    expected = len(faces) / 6
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 20.5  # p = 0.001 at 5 degrees of freedom
    firsts = Counter(
        counts_of(DiceTape(s).throw(seat, t, 0, 6)) for s in range(300) for seat in range(4) for t in range(26)
    )
    n = sum(firsts.values())
    dist = outcome_distribution(6)
    # Group the 462 multisets by their shape (sorted counts) so every cell has a healthy expectation.
    shape_p: Counter = Counter()
    shape_n: Counter = Counter()
    for m, p in dist.items():
        shape_p[tuple(sorted(m))] += p
    for m, k in firsts.items():
        shape_n[tuple(sorted(m))] += k
    chi2 = sum((shape_n[s] - n * p) ** 2 / (n * p) for s, p in shape_p.items())
    assert len(shape_p) == 11 and chi2 < 29.6  # p = 0.001 at 10 degrees of freedom
    assert abs(sum(dist.values()) - 1) < 1e-12 and dist[(6, 0, 0, 0, 0, 0)] == 1 / 6**6
    assert dist[(1, 1, 1, 1, 1, 1)] == factorial(6) / 6**6


def test_game_round_counts_every_seats_turns() -> None:
    game = _play(5, [make("greedy"), make("greedy"), make("greedy")])
    # A game lasts well under the tape's first block of turns; every seat got `round + 1` turns at most.
    assert 5 <= game.round <= 26


def test_state_dict_round_trip_in_tape_mode_continues_the_same_dice() -> None:
    env = shelfie_v0.env(num_players=2, dice="tape")
    env.reset(seed=123)
    rng = np.random.default_rng(0)
    for _ in range(25):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    state = json.loads(json.dumps(env.unwrapped.state_dict()))
    assert state["tape_seed"] == 123 and state["round"] >= 1
    other = shelfie_v0.env(num_players=2, dice="tape")
    other.reset(seed=999, options={"state": state})
    for _ in range(60):
        if not env.agents:
            break
        assert other.unwrapped.state_dict() == env.unwrapped.state_dict()
        if env.terminations[env.agent_selection]:
            env.step(None)
            other.step(None)
            continue
        a = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
        env.step(a)
        other.step(a)


def test_env_tape_deal_equals_the_engines_deal() -> None:
    env = shelfie_v0.env(num_players=3, dice="tape")
    env.reset(seed=42)
    assert env.unwrapped.game.dice == Game.new(3, rng=DiceTape(42)).dice
    gym_env = gym.make("shelfie/Versus-v0", opponents="greedy", seat=0, dice="tape")
    gym_env.reset(seed=42)
    assert gym_env.unwrapped.game.dice == Game.new(2, rng=DiceTape(42)).dice
    solo = gym.make("shelfie/Solo-v0", dice="tape")
    solo.reset(seed=42)
    assert solo.unwrapped.game.dice == Game.new(1, rng=DiceTape(42)).dice


def test_default_dice_are_unchanged_and_bad_modes_are_refused() -> None:
    env = shelfie_v0.env(num_players=2)
    env.reset(seed=0)
    assert env.unwrapped.game.dice == Game.new(2, rng=np.random.default_rng(0)).dice
    with pytest.raises(ValueError, match="dice must be one of 'stream', 'tape'"):
        shelfie_v0.env(dice="loaded")
    with pytest.raises(ValueError, match="dice must be one of"):
        gym.make("shelfie/Versus-v0", dice="loaded")
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        DiceTape(-1)
    with pytest.raises(TypeError, match="deals by"):
        dice_source("tape", 3).integers(0, 6, 1)


def test_stop_keeps_the_dice_in_tape_mode() -> None:
    game = Game.new(2, rng=DiceTape(1))
    dice = list(game.dice)
    game.step(STOP)
    assert game.dice == dice
