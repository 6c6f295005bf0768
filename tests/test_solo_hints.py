"""Solo hints are exact (SoloTurn's values), in the terminal and the web table; the web's solo review."""

from __future__ import annotations

import io
import json
import random
import re
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # starlette announces a future switch of its test client to httpx2
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient

from shelfie_env import bots
from shelfie_env.arena.analysis.review import review_game
from shelfie_env.cli import build_parser
from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import CIRCLE, CROSS, REROLL, Game
from shelfie_env.play import terminal
from shelfie_env.play.solo_hints import solo_hints
from shelfie_env.play.web.app import create_app
from shelfie_env.solo.table import shipped_table
from shelfie_env.solo.turn import SoloTurn, best_action
from tests.test_web_api import create, play_out


def positions(seed: int = 0) -> dict[int, Game]:
    """One position of each phase of a solo game of greedy (a cross-out where one comes)."""
    game = Game.new(1, rng=seed)
    greedy = bots.make("greedy")
    found: dict[int, Game] = {}
    while not game.over:
        found.setdefault(game.phase, game.clone())
        game.step(bots.act_on_game(greedy, game))
    return found


def test_solo_hints_are_the_exact_values() -> None:
    table = shipped_table()
    found = positions()
    assert {REROLL, CIRCLE, CROSS} <= set(found)
    for game in found.values():
        values = SoloTurn(table, game).action_values()
        hints = solo_hints(game.to_dict(), k=len(values))
        assert sorted(h["action"] for h in hints) == sorted(values)
        assert hints[0]["action"] == best_action(values)  # solo-optimal's move comes first
        top = max(values.values())
        for h in hints:
            assert h["value"] == values[h["action"]] and h["exact"] is True
            assert h["loss"] == pytest.approx(top - values[h["action"]], abs=1e-9)
            shown = re.search(r"\(exact: (\d+\.(\d+)) expected final points, ", h["reason"])
            assert shown and float(shown[1]) == pytest.approx(h["value"], abs=0.51 * 10 ** -len(shown[2]))
        assert all(a["value"] >= b["value"] - 1e-9 for a, b in zip(hints, hints[1:]))  # best first
        assert len(solo_hints(game, k=2)) == min(2, len(values))


def test_solo_hints_refuse_what_they_cannot_answer() -> None:
    game = Game.new(1, rng=1)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        solo_hints(game, k=0)
    with pytest.raises(ValueError, match="solo game, not 2 players"):
        solo_hints(Game.new(2, rng=1))
    greedy = bots.make("greedy")
    while not game.over:
        game.step(bots.act_on_game(greedy, game))
    with pytest.raises(ValueError, match="game is over"):
        solo_hints(game)


def test_the_hint_command_of_a_solo_game_gives_exact_values() -> None:
    out = io.StringIO()
    args = build_parser().parse_args(["play", "--players", "1", "--seed", "3", "--no-color"])
    assert terminal.run_play(args, io.StringIO("hint\nquit\n"), out) == 0
    text = out.getvalue()
    values = SoloTurn(shipped_table(), Game.new(1, rng=3)).action_values()
    best = best_action(values)
    assert f"1. {action_name(best)} (type: {terminal.command_for(best)})" in text
    assert f"(exact: {values[best]:.2f} expected final points, the best)" in text
    assert "exact: the final score you can expect after that move if you play perfectly" in text
    assert "win chance" not in text and "EV " not in text


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return TestClient(create_app(tmp_path / "games.sqlite3", preload=False))


def test_the_web_tables_solo_hint_is_exact(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ana"}]})
    gid, token = view["game_id"], view["tokens"]["0"]
    r = client.post(f"/api/games/{gid}/hint", json={"seat": 0, "token": token, "k": 4})
    assert r.status_code == 200, r.text
    answer = r.json()
    state = client.get(f"/api/games/{gid}").json()["state"]
    values = SoloTurn(shipped_table(), Game.from_dict(state)).action_values()
    assert answer["exact"] is True and len(answer["hints"]) == 4
    assert answer["hints"][0]["action"] == best_action(values)
    for h in answer["hints"]:
        assert set(h) == {"action", "name", "value", "loss", "reason"}
        assert h["value"] == pytest.approx(values[h["action"]], abs=1e-12)
        assert h["loss"] == pytest.approx(max(values.values()) - values[h["action"]], abs=1e-9)
    row = client.app.state.store.get_game(gid)
    assert row is not None and row.seats[0].get("hinted") is True  # a hint still unrates the game


def test_the_web_review_of_a_solo_game_is_exact(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ana"}]})
    final = play_out(client, view, view["tokens"], random.Random(3))
    assert final["over"]
    gid = view["game_id"]
    r = client.get(f"/api/games/{gid}/review")
    assert r.status_code == 200, r.text
    review = r.json()
    replay = client.get(f"/api/games/{gid}/replay").json()
    expected = review_game(replay["initial_state"], [a["action"] for a in replay["actions"]], replay["states"],
                           names=["Ana"])
    assert review == json.loads(json.dumps({**expected, "game_id": gid}))
    p = review["players"][0]
    assert review["value"] == "exact" and p["score"] == final["result"]["scores"][0]
    assert p["loss_per_decision"] > 0 and review["mistakes"]  # random moves lose points
    assert client.get(f"/api/games/{gid}/review?value=planner").json()["players"] == review["players"]
    rated = client.get(f"/api/games/{gid}/error-rating").json()
    assert rated["available"] is False and "perfect play" in rated["message"]
