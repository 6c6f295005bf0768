"""``scripts/phase_swap.py``: rerolls from one bot, everything else from another."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from shelfie_env.bots import make
from shelfie_env.engine import REROLL, Game


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
    assert "win" in capsys.readouterr().out
