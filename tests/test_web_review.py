"""``GET /api/games/{id}/review``: a finished game's review, cached, rate-limited, refused before the end."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette announces a future switch of its test client to httpx2
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient

from shelfie_env.arena.analysis.review import review_game
from shelfie_env.cli import main
from shelfie_env.play.web.app import create_app
from shelfie_env.play.web.botturns import BotTurns
from shelfie_env.play.web.guard import RateLimiter
from tests.test_web_api import create, settle

TD_VS_GREEDY = {"seats": [{"type": "bot", "bot": "td", "name": "Tess"}, {"type": "bot", "bot": "greedy"}]}


@pytest.fixture(autouse=True)
def unpaced_bot_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BotTurns, "bots_only_pace_s", 0.0)


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return TestClient(create_app(tmp_path / "games.sqlite3", preload=False))


def finished_game(client: TestClient, spec: dict[str, Any] = TD_VS_GREEDY) -> str:
    view = settle(client, create(client, spec))
    assert view["over"]
    return str(view["game_id"])


def test_the_review_of_a_finished_game(client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gid = finished_game(client)
    r = client.get(f"/api/games/{gid}/review")
    assert r.status_code == 200, r.text
    review = r.json()
    replay = client.get(f"/api/games/{gid}/replay").json()
    expected = review_game(replay["initial_state"], [a["action"] for a in replay["actions"]], replay["states"],
                           names=["Tess", "greedy bot"])
    assert review == json.loads(json.dumps({**expected, "game_id": gid}))
    assert [p["name"] for p in review["players"]] == ["Tess", "greedy bot"]
    assert review["value"] == "td" and review["rolls"] and review["turns"] and len(review["mistakes"]) == 3
    assert "5 percentage points of win chance" in review["unit"]
    by_planner = client.get(f"/api/games/{gid}/review?value=planner")
    assert by_planner.status_code == 200 and by_planner.json()["value"] == "planner"
    # the replay it was computed from reads back in the terminal, with the same review
    path = tmp_path / "web.json"
    path.write_text(json.dumps(replay))
    assert main(["replay", str(path), "--review", "--no-color"]) == 0
    out = capsys.readouterr().out
    for p in review["players"]:
        cells = [p["name"], str(p["score"]), f"{p['result']:+.2f}", f"{p['luck']:+.2f}", f"{p['adjusted']:+.2f}"]
        assert re.search("^" + " +".join(map(re.escape, cells)) + " ", out, re.M)
    names = [p["name"] for p in review["players"]]
    for m in review["mistakes"]:  # either player's: the dice of a web game are not fixed
        assert f"move {m['move']}, round {m['round']}, {names[m['seat']]}" in out


def test_reviews_are_cached_and_new_ones_rate_limited(client: TestClient) -> None:
    first, second = finished_game(client), finished_game(client)
    client.app.state.reviews.limiter = RateLimiter(1)  # one new review a minute
    a = client.get(f"/api/games/{first}/review")
    assert a.status_code == 200
    again = client.get(f"/api/games/{first}/review")  # from the cache: not counted
    assert again.status_code == 200 and again.json() == a.json()
    limited = client.get(f"/api/games/{second}/review")
    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limited" and int(limited.headers["retry-after"]) >= 1


def test_reviews_are_refused_before_the_end_and_for_unknown_games(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}]})
    gid = view["game_id"]
    r = client.get(f"/api/games/{gid}/review")
    assert r.status_code == 409 and r.json()["error"] == "game_not_over"
    r = client.get("/api/games/nosuchgame/review")
    assert r.status_code == 404 and r.json()["error"] == "unknown_game"
    r = client.get(f"/api/games/{gid}/review?value=gnubg")
    assert r.status_code == 400 and r.json() == {
        "error": "bad_value", "message": "'value' must be one of td, planner, got 'gnubg'",
    }
    solo = finished_game(client, {"seats": [{"type": "bot", "bot": "greedy"}]})
    r = client.get(f"/api/games/{solo}/review")  # a solo game is solved: its review is exact
    assert r.status_code == 200 and r.json()["value"] == "exact"
