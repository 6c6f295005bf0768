"""Levels and people's ratings in the web table's API (Starlette's ASGI test client): a level seat,
``/api/meta``'s levels, a finished game's view with each person's rating, its deviation and its
change, an unrated hints game, people joining their seats, the person's report, the error rate
as a rating, a restart, and the refusals."""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient

from shelfie_env.arena.ladder import level_ratings
from shelfie_env.arena.person_rating import PersonRating, Result, update
from shelfie_env.bots.levels import LEVELS
from shelfie_env.play.web import moves as moves_module
from shelfie_env.play.web.app import create_app
from shelfie_env.play.web.botturns import BotTurns
from tests.test_web_api import act, create, play_out

ANN, BOB = "ann-key-0123456789abcdef", "bob-key-0123456789abcdef"


@pytest.fixture(autouse=True)
def unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BotTurns, "bots_only_pace_s", 0.0)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite3"


@pytest.fixture
def client(db: Path) -> TestClient:
    return TestClient(create_app(db, preload=False))


def level_table(level: str = "level-2", key: str | None = ANN) -> dict[str, Any]:
    me: dict[str, Any] = {"type": "human", "name": "Ann"}
    if key is not None:
        me["person"] = key
    return {"seats": [me, {"type": "bot", "bot": level}]}


def score(scores: list[int], a: int, b: int) -> float:
    return 1.0 if scores[a] > scores[b] else 0.5 if scores[a] == scores[b] else 0.0


def test_meta_lists_the_levels_with_their_ratings_per_table_size(client: TestClient) -> None:
    meta = client.get("/api/meta").json()
    assert [f"level-{lv.number}" for lv in LEVELS] == [b for b in meta["bots"] if b.startswith("level-")]
    assert meta["bot_tables"]["level-3"] == [2, 3, 4] and meta["first_level"] == "level-3"
    for n in (2, 3, 4):
        shipped = level_ratings(n)
        rows = meta["levels"][str(n)]
        assert [r["spec"] for r in rows] == [lv.spec for lv in LEVELS]
        assert [r["name"] for r in rows] == [lv.name for lv in LEVELS]
        for r in rows:
            rating, se = shipped[r["spec"]]
            assert r["rating"] == pytest.approx(rating, abs=0.06)
            assert r["ci95"] == pytest.approx([rating - 1.96 * se, rating + 1.96 * se], abs=0.06)


def test_a_level_is_a_bot_like_any_other_and_a_finished_game_carries_the_rating(client: TestClient) -> None:
    view = create(client, level_table("level-2"))
    assert view["seats"][1]["bot"] == "level-2" and view["ratings"] is None
    final = play_out(client, view, view["tokens"], random.Random(1))
    rating, se = level_ratings(2)["level-2"]
    scores = final["result"]["scores"]
    expected = update(PersonRating(), [Result(rating, se, score(scores, 0, 1))])
    mine, other = final["ratings"]
    assert mine["rated"] and mine["seat"] == 0 and mine["players"] == 2 and mine["games"] == 1
    assert mine["rating"] == pytest.approx(expected.rating, abs=0.06)
    assert mine["rd"] == pytest.approx(expected.rd, abs=0.06)
    assert mine["change"] == pytest.approx(expected.rating - 1500, abs=0.06)
    assert other == {"seat": 1, "rated": False, "reason": "a bot"}
    assert client.get(f"/api/games/{view['game_id']}").json()["ratings"] == final["ratings"]


def test_the_rating_survives_a_restart_and_the_game_is_not_rated_again(client: TestClient, db: Path) -> None:
    view = create(client, level_table("level-1"))
    final = play_out(client, view, view["tokens"], random.Random(2))
    report = client.post("/api/person", json={"person": ANN}).json()
    client.app.state.service.close()
    client.app.state.store.close()
    again = TestClient(create_app(db, preload=False))
    try:
        assert again.get(f"/api/games/{view['game_id']}?since=0").json()["ratings"] == final["ratings"]
        assert again.post("/api/person", json={"person": ANN}).json() == report
        assert report["ratings"]["2"]["games"] == 1 and len(report["games"]) == 1
        assert report["games"][0]["game_id"] == view["game_id"] and report["games"][0]["rated"]
    finally:
        again.app.state.service.close()
        again.app.state.store.close()


def test_a_game_with_hints_is_unrated_and_says_so(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(moves_module, "hint_function", lambda: lambda state, k=3: [])
    view = create(client, level_table("level-3"))
    gid, token = view["game_id"], view["tokens"]["0"]
    assert client.post(f"/api/games/{gid}/hint", json={"seat": 0, "token": token}).status_code == 200
    final = play_out(client, view, view["tokens"], random.Random(3))
    assert final["ratings"][0] == {"seat": 0, "rated": False, "reason": "hints were used"}
    report = client.post("/api/person", json={"person": ANN}).json()
    assert report["ratings"] == {} and report["games"][0]["reason"] == "hints were used"


def test_two_people_join_their_seats_and_are_both_rated(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN}, {"type": "human", "name": "Bob"},
                                     {"type": "bot", "bot": "level-4"}]})
    gid, tokens = view["game_id"], view["tokens"]
    join = {"seat": 1, "token": tokens["1"], "person": BOB}
    assert client.post(f"/api/games/{gid}/join", json=join).json() == {"seat": 1, "joined": True}
    assert client.post(f"/api/games/{gid}/join", json=join).json() == {"seat": 1, "joined": False}
    refused = [
        ({**join, "person": ANN}, 409, "seat_taken"),  # the seat is Bob's
        ({"seat": 0, "token": tokens["0"], "person": BOB}, 409, "seat_taken"),  # seat 0 is Ann's
        ({**join, "token": "nope"}, 403, "bad_token"),
        ({**join, "person": "short"}, 400, "bad_person"),
    ]
    for body, status, code in refused:
        r = client.post(f"/api/games/{gid}/join", json=body)
        assert (r.status_code, r.json()["error"]) == (status, code), r.text
    final = play_out(client, view, tokens, random.Random(4), persons={"1": BOB})  # Bob's seat answers to his key
    assert [o["rated"] for o in final["ratings"]] == [True, True, False]
    assert all(o["games"] == 1 and o["players"] == 3 for o in final["ratings"][:2])
    r = client.post(f"/api/games/{gid}/join", json=join)
    assert (r.status_code, r.json()["error"]) == (409, "game_over")


def test_a_person_seat_without_a_key_is_unrated(client: TestClient) -> None:
    view = create(client, level_table("level-3", key=None))
    final = play_out(client, view, view["tokens"], random.Random(5))
    assert final["ratings"][0]["rated"] is False and "identity" in final["ratings"][0]["reason"]


def test_a_resignation_is_rated_as_a_loss(client: TestClient) -> None:
    view = create(client, level_table("level-6"))
    r = client.post(f"/api/games/{view['game_id']}/resign", json={"seat": 0, "token": view["tokens"]["0"]})
    mine = r.json()["ratings"][0]
    rating, se = level_ratings(2)["level-6"]
    assert mine["rated"] and mine["rating"] == pytest.approx(update(PersonRating(), [Result(rating, se, 0.0)]).rating,
                                                             abs=0.06)
    assert mine["change"] < 0


@pytest.mark.parametrize("level", ["level-0", "level-7", "level-banana"])
def test_a_seat_that_is_no_level_is_one_clear_400_that_lists_the_levels(client: TestClient, level: str) -> None:
    r = client.post("/api/games", json=level_table(level))
    body = r.json()
    assert r.status_code == 400 and body["error"] == "unknown_bot"
    assert "\n" not in body["message"] and all(lv.spec in body["message"] for lv in LEVELS)
    assert client.app.state.store.count_games() == {}


def test_a_level_at_a_table_without_a_ladder_is_refused(client: TestClient) -> None:
    r = client.post("/api/games", json={"seats": [{"type": "bot", "bot": "level-3"}]})
    assert r.status_code == 400 and r.json()["error"] == "bot_unavailable"
    assert "2, 3, 4 players" in r.json()["message"]


def test_the_person_report_and_page(client: TestClient) -> None:
    assert client.post("/api/person", json={"person": BOB}).json()["ratings"] == {}
    assert client.post("/api/person", json={}).json()["error"] == "bad_person"
    page = client.get("/me")
    assert page.status_code == 200 and "me.js" in page.text
    assert "<svg" not in client.get("/static/me.js").text and "innerHTML" not in client.get("/static/me.js").text


def test_the_error_rate_as_a_rating(client: TestClient) -> None:
    view = create(client, level_table("level-2"))
    final = play_out(client, view, view["tokens"], random.Random(6))
    answer = client.get(f"/api/games/{view['game_id']}/error-rating").json()
    assert answer["available"] and answer["judge"] == "td" and len(answer["players"]) == 2
    for row in answer["players"]:
        lo, hi = row["ci95"]
        assert row["decisions"] > 0 and lo < row["rating"] < hi and row["suggested_level"].startswith("level-")
    mine = answer["players"][0]
    assert mine["suggested_from"] == "rating"  # the person was rated: the level nearest their new rating
    ratings = level_ratings(2)
    nearest = min(ratings, key=lambda s: abs(ratings[s][0] - final["ratings"][0]["rating"]))
    assert mine["suggested_level"] == nearest
    r = act(client, view["game_id"], 0, view["tokens"]["0"], 0)
    assert r.status_code == 409
