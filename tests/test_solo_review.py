"""The exact review of a solo game: every figure checked against SoloTurn's values, its text in
``shelfie replay --review`` and at the end of ``shelfie play``."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from shelfie_env import bots
from shelfie_env.arena.analysis.review import review_game
from shelfie_env.arena.analysis.solo_review import SOLO_BLUNDER, SOLO_MISTAKE
from shelfie_env.cli import build_parser, main
from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import Game
from shelfie_env.play import terminal
from shelfie_env.play.error_rating import error_ratings
from shelfie_env.play.terminal import command_for
from shelfie_env.solo import board_value, optimum
from shelfie_env.solo.table import shipped_table
from shelfie_env.solo.turn import SoloTurn


def play(bot: Any, seed: int, start: Game | None = None) -> dict[str, Any]:
    """A solo game of ``bot`` (from ``start``, else a new game): what a review needs."""
    game = start.clone() if start is not None else Game.new(1, rng=seed)
    record: dict[str, Any] = {"initial": game.to_dict(), "actions": [], "states": [], "games": [game.clone()]}
    while not game.over:
        a = bots.act_on_game(bot, game)
        game.step(a)
        record["actions"].append(a)
        record["states"].append(game.to_dict())
        record["games"].append(game.clone())
    return record


@pytest.fixture(scope="module")
def greedy_game() -> dict[str, Any]:
    return play(bots.make("greedy"), seed=4)


def test_the_review_of_a_solo_game_is_exact(greedy_game: dict[str, Any]) -> None:
    rec = greedy_game
    review = review_game(rec["initial"], rec["actions"], rec["states"], names=["Ana"])
    table = shipped_table()
    losses = []
    for j, (game, action) in enumerate(zip(rec["games"], rec["actions"])):
        values = SoloTurn(table, game).action_values()
        losses.append(max(values.values()) - values[action])
        d = review["decisions"][j]
        assert d["value"] == pytest.approx(values[action], abs=1e-12)
        assert d["best_value"] == pytest.approx(max(values.values()), abs=1e-12)
        assert d["regret"] == pytest.approx(losses[-1], abs=1e-9)
    p = review["players"][0]
    final = rec["games"][-1]
    assert review["value"] == "exact" and review["num_players"] == 1 and p["name"] == "Ana"
    assert review["optimum"] == optimum() == review["start_value"] == pytest.approx(board_value([[0] * 5] * 5))
    assert p["score"] == final.score(0) and not p["resigned"]
    assert p["decisions"] == len(rec["actions"])
    assert p["regret"] == pytest.approx(sum(losses), abs=1e-9)
    assert p["loss_per_decision"] == pytest.approx(sum(losses) / len(losses), abs=1e-12)
    assert p["loss_per_decision"] > 0.05  # greedy is far from perfect
    assert p["mistakes"] == sum(x >= SOLO_MISTAKE for x in losses)
    assert p["blunders"] == sum(x >= SOLO_BLUNDER for x in losses)
    # the biggest mistakes, with their exact cost, biggest first
    top = sorted(range(len(losses)), key=lambda j: (-losses[j], j))[:3]
    assert [m["move"] for m in review["mistakes"]] == [j + 1 for j in top]
    assert [m["regret"] for m in review["mistakes"]] == pytest.approx([losses[j] for j in top], abs=1e-9)
    # the values chain exactly: score = E* + luck - loss
    assert p["score"] == pytest.approx(review["optimum"] + p["luck"] - p["regret"], abs=1e-9)
    assert p["adjusted"] == pytest.approx(p["score"] - p["luck"])
    assert sum(t["luck"] for t in review["turns"]) == pytest.approx(p["luck"])
    assert [t["round"] for t in review["turns"]] == list(range(1, final.round + 2))
    first = review["rolls"][0]
    assert first["roll"] == 0 and first["thrown"] == 6 and first["before"] == pytest.approx(optimum())
    # the value function named does not matter: the solo game is solved
    assert review_game(rec["initial"], rec["actions"], rec["states"], value="planner", names=["Ana"]) == review
    assert json.loads(json.dumps(review)) == review


def test_solo_optimal_loses_nothing_and_a_game_taken_mid_turn_starts_from_its_value() -> None:
    perfect = play(bots.make("solo-optimal"), seed=2)
    review = review_game(perfect["initial"], perfect["actions"], perfect["states"])
    assert review["players"][0]["regret"] == 0 and review["mistakes"] == []
    game = Game.new(1, rng=6)
    greedy = bots.make("greedy")
    while not (game.phase_name == "circle" and game.circles == 1):
        game.step(bots.act_on_game(greedy, game))
    rec = play(greedy, 0, start=game)
    review = review_game(rec["initial"], rec["actions"], rec["states"])
    p = review["players"][0]
    start_value = max(SoloTurn(shipped_table(), game).action_values().values())
    assert review["start_value"] == pytest.approx(start_value)
    assert p["score"] == pytest.approx(start_value + p["luck"] - p["regret"], abs=1e-9)


def test_a_resigned_solo_game_and_a_game_on_other_points(greedy_game: dict[str, Any]) -> None:
    rec = greedy_game
    review = review_game(rec["initial"], rec["actions"][:20], rec["states"][:20], resigned=0)
    p = review["players"][0]
    assert p["resigned"] and p["decisions"] == 20 and p["score"] == rec["games"][20].score(0)
    with pytest.raises(ValueError, match="not over"):
        review_game(rec["initial"], rec["actions"][:20], rec["states"][:20])
    other = Game.new(1, rng=1, points=[[1, 2, 3, 5, 9]] * 5)
    moves = play(bots.make("greedy"), 0, start=other)
    with pytest.raises(ValueError, match="points"):
        review_game(moves["initial"], moves["actions"], moves["states"])
    assert not error_ratings(review)["available"]
    assert "perfect play" in error_ratings(review)["message"]


def test_replay_review_of_a_solo_game(
    greedy_game: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = greedy_game
    data = {
        "version": 1,
        "seats": [{"seat": 0, "type": "human", "name": "Ana", "bot": None}],
        "initial_state": rec["initial"],
        "actions": [{"seat": 0, "action": a, "name": action_name(a)} for a in rec["actions"]],
        "states": rec["states"],
    }
    path = tmp_path / "solo.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path), "--review", "--no-color"]) == 0
    out = capsys.readouterr().out
    review = review_game(rec["initial"], rec["actions"], rec["states"], names=["Ana"])
    p = review["players"][0]
    assert f"Ana scored {p['score']}. E* = {optimum():.2f}" in out
    assert f"Loss per decision: {p['loss_per_decision']:.3f} expected points over {p['decisions']} decisions" in out
    for k, m in enumerate(review["mistakes"], 1):
        assert f"{k}. move {m['move']}, round {m['round']}:" in out
        assert f"cost {m['regret']:.3f} expected final points" in out
    assert "Rating from the error rate" not in out


def test_the_end_of_a_solo_game_in_the_terminal(tmp_path: Path) -> None:
    game = Game.new(1, rng=4)
    greedy = bots.make("greedy")
    commands = []
    while not game.over:
        a = bots.act_on_game(greedy, game)
        commands.append(command_for(a))
        game.step(a)
    out = io.StringIO()
    save = tmp_path / "g.json"
    args = build_parser().parse_args(["play", "--players", "1", "--seed", "4", "--no-color", "--save", str(save)])
    assert terminal.run_play(args, io.StringIO("\n".join(commands) + "\n"), out) == 0
    text = out.getvalue()
    saved = json.loads(save.read_text())
    review = review_game(saved["initial_state"], [m["action"] for m in saved["actions"]], saved["states"])
    p = review["players"][0]
    assert p["score"] == game.score(0)
    assert f"Game over — you scored {p['score']} points.\nE* = {optimum():.2f}" in text
    assert f"Your expected loss per decision: {p['loss_per_decision']:.3f} expected points" in text
    assert re.search(rf"Your score: {p['score']} = {optimum():.2f} \(E\*\) [+-] ", text)
    assert "Your biggest mistakes" in text
    for m in review["mistakes"]:
        assert f"cost {m['regret']:.3f} expected final points" in text
    assert "--review" in text.splitlines()[-1]  # a finished solo game can be reviewed


ROOT = Path(__file__).resolve().parents[1]


def test_the_solo_example_in_the_docs_is_what_the_command_prints(capsys: pytest.CaptureFixture[str]) -> None:
    example = ROOT / "docs" / "examples" / "solo_greedy.json"
    assert main(["replay", str(example), "--review", "--no-color"]) == 0
    review = "Exact review" + capsys.readouterr().out.split("\nExact review", 1)[1]
    doc = (ROOT / "docs" / "play.md").read_text(encoding="utf-8")
    shown = doc.split("solo_greedy.json --review` reads, after the replay:\n\n```\n", 1)[1].split("\n```", 1)[0]
    assert review.rstrip("\n") == shown
