"""``scripts/phase_swap.py``: some decisions from one bot, everything else from another."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from shelfie_env.bots import make
from shelfie_env.game.engine import REROLL, Game


def _module():
    path = Path(__file__).resolve().parents[1] / "scripts" / "phase_swap.py"
    spec = importlib.util.spec_from_file_location("phase_swap", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_phase_is_played_by_its_bot(capsys):
    mod = _module()
    swap = mod.PhaseSwap(make("planner"), make("greedy"))
    planner, greedy = make("planner"), make("greedy")
    game, phases = Game.new(2, rng=8), set()
    while not game.over:
        action = swap.act(game.to_dict())
        want = planner.act_game(game) if game.phase == REROLL else greedy.act_game(game)
        assert action == want
        phases.add(game.phase)
        game.step(action)
    assert REROLL in phases and len(phases) >= 2
    assert mod.main(["--reroll", "greedy", "--rest", "greedy", "--games", "2", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "win" in out and "from the 1st / 2nd seat" in out


def test_whole_turns_near_the_end_are_played_by_the_swapped_in_bot():
    mod = _module()
    swap = mod.PhaseSwap(make("planner"), make("greedy"), when="near-end")
    planner, greedy = make("planner"), make("greedy")
    game, seen = Game.new(2, rng=3), {True: 0, False: 0}
    turn_flag = None
    while not game.over:
        if game.phase == REROLL and game.rolls_left == 2:
            turn_flag = mod.near_end(game)  # judged once, at the turn's first decision
        want = planner.act_game(game) if turn_flag else greedy.act_game(game)
        action = swap.act_game(game)
        assert action == want
        seen[turn_flag] += 1
        game.step(action)
    assert seen[True] > 0 and seen[False] > 0  # both kinds of turn occurred


def test_near_end_reads_closed_rows_and_the_trigger():
    mod = _module()
    game = Game.new(2, rng=0)
    assert not mod.near_end(game)
    state = game.to_dict()
    state["boards"][1][2] = [1, 2, 2, 1, 2]  # player 1's books row: no free cell
    assert mod.near_end(Game.from_dict(state))
    assert mod.turn_selected(Game.from_dict(state), "near-end-first-seat")  # seat 0 on turn
    assert not mod.turn_selected(Game.from_dict(state), "near-end-last-seat")
    with pytest.raises(ValueError, match="--when"):
        mod.PhaseSwap(None, None, when="sometimes")
