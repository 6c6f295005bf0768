"""``shelfie replay FILE --review``: the review printed after the replay, and its refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from shelfie_env import bots
from shelfie_env.arena.analysis.review import review_game
from shelfie_env.bots.learned.value import shipped_td_model
from shelfie_env.cli import main
from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import Game


def web_replay(path: Path, seed: int = 3, players: int = 2, stop_after: int | None = None) -> dict[str, Any]:
    """A replay shaped like the web table's download: td (as "Ana") against greedy."""
    game = Game.new(players, rng=seed)
    seated = [bots.make("td", num_players=players)] + [bots.make("greedy")] * (players - 1) if players > 1 else [
        bots.make("greedy")
    ]
    initial, actions, states = game.to_dict(), [], []
    while not game.over and (stop_after is None or len(actions) < stop_after):
        seat = game.current
        a = seated[seat].act(game.to_dict())
        game.step(a)
        actions.append({"seat": seat, "action": a, "name": action_name(a)})
        states.append(game.to_dict())
    seats = [{"seat": 0, "type": "human", "name": "Ana", "bot": None}] + [
        {"seat": s, "type": "bot", "name": "greedy bot", "bot": "greedy"} for s in range(1, players)
    ]
    data = {"version": 1, "game_id": "g1", "seats": seats, "initial_state": initial, "actions": actions,
            "states": states, "final_state": states[-1]}
    path.write_text(json.dumps(data))
    return data


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("review") / "game.json"
    return path, web_replay(path)


def test_the_review_follows_the_replay(finished: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    path, data = finished
    assert main(["replay", str(path), "--review", "--no-color"]) == 0
    text = capsys.readouterr().out
    replay_part, _, review_part = text.partition("Review by td's exact search over the dice.")
    assert "Game over" in replay_part and review_part
    expected = review_game(data["initial_state"], [a["action"] for a in data["actions"]], data["states"],
                           names=["Ana", "greedy bot"])
    assert "0.10 is about 5\npercentage points of win chance" in review_part
    lines = review_part.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("round  Ana"))
    assert "greedy bot" in lines[header]
    rounds = sorted({t["round"] for t in expected["turns"]})
    for rnd in rounds:  # one line per round, each player's turn luck with its mark
        row = lines[header + rnd]
        cells = [f"{t['luck']:+.2f}" for t in expected["turns"] if t["round"] == rnd]
        assert row.split()[0] == str(rnd) and all(c in row for c in cells)
    marked = [t for t in expected["turns"] if t["mark"]]
    assert marked, "this game has a lucky or unlucky turn"
    for t in marked:
        row = lines[header + t["round"]]
        mark = {"lucky": "+", "very lucky": "++", "unlucky": "-", "very unlucky": "--"}[t["mark"]]
        assert f"{t['luck']:+.2f} {mark}" in row
    total = lines[header + len(rounds) + 1].split()
    assert total == ["total"] + [f"{p['luck']:+.2f}" for p in expected["players"]]
    for p in expected["players"]:
        row = next(line for line in lines if line.startswith(p["name"] + " "))
        assert row.split()[-8:] == [
            str(p["score"]), f"{p['result']:+.2f}", f"{p['luck']:+.2f}", f"{p['adjusted']:+.2f}",
            str(p["decisions"]), f"{p['regret']:.2f}", str(p["mistakes"]), str(p["blunders"]),
        ]
    assert "The 3 biggest mistakes:" in review_part
    for k, m in enumerate(expected["mistakes"], 1):
        at = lines.index(f"{k}. move {m['move']}, round {m['round']}, greedy bot")
        assert lines[at + 2] == f"   played {m['played']}"
        assert lines[at + 3] == f"   better {m['better']}"
        assert re.fullmatch(rf"   regret {m['regret']:.3f} \(about \d+ points of win chance\)", lines[at + 4])


def test_the_review_by_the_planner_or_a_model_file(
    finished: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = finished
    assert main(["replay", str(path), "--review", "--review-value", "planner", "--no-color"]) == 0
    assert "Review by planner's exact search" in capsys.readouterr().out
    model = shipped_td_model(2)
    assert main(["replay", str(path), "--review", "--review-value", f"td:path={model}", "--no-color"]) == 0
    assert "Review by td:path=td_2p.npz's exact search" in capsys.readouterr().out


def test_states_that_start_with_the_first_position(
    finished: tuple[Path, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, data = finished
    other = dict(data, states=[data["initial_state"], *data["states"]])
    del other["initial_state"]
    path = tmp_path / "with_start.json"
    path.write_text(json.dumps(other))
    assert main(["replay", str(path), "--review", "--no-color"]) == 0
    assert "The 3 biggest mistakes:" in capsys.readouterr().out


def test_games_that_cannot_be_reviewed(
    finished: tuple[Path, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unfinished = tmp_path / "unfinished.json"
    web_replay(unfinished, stop_after=12)
    assert main(["replay", str(unfinished), "--review", "--no-color"]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("the game is not over: a review needs a finished game")
    assert err.startswith(f"shelfie replay: error: cannot review {unfinished}")

    solo = tmp_path / "solo.json"
    web_replay(solo, players=1, stop_after=8)
    data = json.loads(solo.read_text())
    game = Game.from_dict(data["states"][-1], rng=0)
    while not game.over:  # finish it with greedy
        a = bots.make("greedy").act(game.to_dict())
        game.step(a)
        data["actions"].append({"seat": 0, "action": a, "name": action_name(a)})
        data["states"].append(game.to_dict())
    data["final_state"] = data["states"][-1]
    solo.write_text(json.dumps(data))
    assert main(["replay", str(solo), "--review", "--no-color"]) == 0  # solved: reviewed exactly
    assert "Exact review: the solo game is solved" in capsys.readouterr().out

    path, data = finished
    no_states = tmp_path / "no_states.json"
    no_states.write_text(json.dumps({k: v for k, v in data.items() if k != "states"}))
    assert main(["replay", str(no_states), "--review", "--no-color"]) == 2
    assert "a review needs the starting position and the position after each move" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "message"),
    [("nope", "unknown value function 'nope'"), ("td:path=/nonexistent/model.npz", "no model file"),
     ("planner:x", "unknown value function")],
)
def test_bad_review_values_are_refused(
    finished: tuple[Path, dict[str, Any]], value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = finished
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(path), "--review", "--review-value", value])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


ROOT = Path(__file__).resolve().parents[1]


def test_the_example_in_the_docs_is_what_the_command_prints(capsys: pytest.CaptureFixture[str]) -> None:
    example = ROOT / "docs" / "examples" / "td_vs_greedy.json"
    assert main(["replay", str(example), "--review", "--no-color"]) == 0
    review = "Review by" + capsys.readouterr().out.split("\nReview by", 1)[1]
    doc = (ROOT / "docs" / "play.md").read_text(encoding="utf-8")
    shown = doc.split("after the replay, reads:\n\n```\n", 1)[1].split("\n```", 1)[0]
    assert review.rstrip("\n") == shown
