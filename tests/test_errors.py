"""Error rates: the loss against the rollout-best action, by phase and table size; `shelfie errors`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shelfie_env.arena.analysis.error_rates import error_rates
from shelfie_env.arena.analysis.positions import draw_positions, save_positions
from shelfie_env.cli import main
from shelfie_env.game.engine import Game


def _records() -> list[dict[str, Any]]:
    """Real positions with made-up labels: the lowest legal id is worth 0.5, every other action 0.2."""
    out = []
    for players in (2, 3):
        for rec in draw_positions(players, "test", 3):
            acts = list(Game.from_dict(rec["state"]).legal_actions())
            value = [0.5] + [0.2] * (len(acts) - 1)
            label = {"actions": acts, "value": value, "se": [0.01] * len(acts), "gap_se": [0.0] * len(acts)}
            out.append({**rec, "label": label})
    return out


class Lowest:
    name = "lowest"

    def act(self, state: dict[str, Any]) -> int:
        return min(Game.from_dict(state).legal_actions())


class Highest:
    name = "highest"

    def act(self, state: dict[str, Any]) -> int:
        return max(Game.from_dict(state).legal_actions())


def test_losses_are_value_gaps() -> None:
    recs = _records()
    best = error_rates(Lowest(), 2, positions=recs)
    assert best["positions"] == 3 and best["error_rate"] == 0.0 and best["best_share"] == 1.0
    worst = error_rates(Highest(), None, positions=recs)
    assert worst["positions"] == 6
    assert worst["error_rate"] == pytest.approx(0.3) and worst["large_share"] == 1.0
    assert set(worst["by_players"]) == {"2", "3"}
    assert sum(s["positions"] for s in worst["by_phase"].values()) == 6
    assert worst["ci95"][0] <= worst["error_rate"] <= worst["ci95"][1]
    assert sorted(worst["losses"]) == sorted(r["id"] for r in recs)
    assert all(x == pytest.approx(0.3) for x in worst["losses"].values())


def test_bot_specs_and_bad_input() -> None:
    recs = _records()
    r = error_rates("greedy", 3, positions=recs)
    assert r["bot"] == "greedy" and r["positions"] == 3 and 0.0 <= r["error_rate"] <= 0.3
    with pytest.raises(ValueError, match="unknown bot"):
        error_rates("nobody", 2, positions=recs)
    with pytest.raises(ValueError, match="no labelled"):
        error_rates("greedy", 4, positions=recs)
    with pytest.raises(ValueError, match="part"):
        error_rates("greedy", 2, part="train", positions=recs)


def test_command_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.jsonl.gz"
    save_positions(_records(), path)
    out = tmp_path / "r.json"
    assert main(["errors", "greedy", "--positions", str(path), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {"positions", "error_rate", "ci95", "by_phase", "large_share"} <= set(data)
    assert "greedy: error rate" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["errors", "greedy", "--positions", str(tmp_path / "none.jsonl")])
    assert "shelfie errors: error: no positions file" in capsys.readouterr().err


def test_random_draws_a_seed_per_position_and_reproduces() -> None:
    """``random`` gets a seed from each position's id: its rate repeats run to run and sits within its
    interval of the exact expectation (each position's mean gap), which one shared draw would not."""
    import numpy as np

    from shelfie_env.arena.analysis.positions import load_positions

    records = load_positions(None, players=2, part="test")
    first, again = error_rates("random", 2, positions=records), error_rates("random", 2, positions=records)
    assert first["losses"] == again["losses"]
    exact = np.mean([np.max(r["label"]["value"]) - np.mean(r["label"]["value"]) for r in records])
    assert first["ci95"][0] <= exact <= first["ci95"][1]
    named = error_rates("random:seed=7", 2, positions=records)
    assert named["losses"] != first["losses"]


def test_solo_error_rates_are_exact_points() -> None:
    perfect = error_rates("solo-optimal", players=1)
    assert perfect["exact"] and perfect["units"] == "expected final points"
    assert perfect["error_rate"] < 1e-9 and perfect["best_share"] == 1.0 and perfect["positions"] >= 1000
    assert (perfect["large_threshold"], perfect["huge_threshold"]) == (0.5, 2.0)
    greedy = error_rates("greedy", players=1)
    assert 0 < greedy["error_rate"] and greedy["ci95"][0] > 0
    assert greedy["huge_share"] <= greedy["large_share"] < 1


def test_solo_and_rival_positions_do_not_mix() -> None:
    recs = _records()
    solo = [{**r, "players": 1} for r in recs[:1]]
    with pytest.raises(ValueError, match="give one table size"):
        error_rates(Lowest(), players=None, positions=solo + recs)


def test_errors_command_at_one_player_says_points_and_exact(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["errors", "greedy", "--players", "1"]) == 0
    out = capsys.readouterr().out
    assert "points [" in out and "(solo, exact labels)" in out
