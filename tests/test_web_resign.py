"""``POST /api/games/{id}/resign``: a player leaves; the game ends, is stored, downloads and reviews."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette announces a future switch of its test client to httpx2
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient

from shelfie_env.cli import main
from shelfie_env.play.web.app import create_app
from shelfie_env.play.web.botturns import BotTurns
from shelfie_env.play.web.service import check_replay
from tests.test_web_api import act, create, restart, settle


@pytest.fixture(autouse=True)
def unpaced_bot_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BotTurns, "bots_only_pace_s", 0.0)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite3"


@pytest.fixture
def client(db: Path) -> TestClient:
    return TestClient(create_app(db))


ANN_VS_GREEDY = {"seats": [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}]}


def resign(client: Any, gid: str, seat: int, token: str, **extra: Any) -> Any:
    return client.post(f"/api/games/{gid}/resign", json={"seat": seat, "token": token, **extra})


def _play_a_turn(client: Any, view: dict[str, Any], token: str) -> dict[str, Any]:
    """Ann plays random legal moves until the bot has played its turn after hers."""
    rng = random.Random(3)
    gid = view["game_id"]
    while view["state"]["current_player"] == 0 and not view["over"]:
        r = act(client, gid, 0, token, rng.choice(view["legal"])["action"], expect=view["num_moves"])
        assert r.status_code == 200, r.text
        view = r.json()
    return settle(client, view)


def test_resigning_ends_the_game_and_it_downloads_and_reviews(
    client: Any, tmp_path: Path, capsys: Any
) -> None:
    view = create(client, ANN_VS_GREEDY)
    gid, token = view["game_id"], view["tokens"]["0"]
    view = _play_a_turn(client, view, token)
    moves = view["num_moves"]
    assert moves > 0 and not view["over"]

    r = resign(client, gid, 0, token)
    assert r.status_code == 200, r.text
    ended = r.json()
    assert ended["over"] and ended["resigned"] == 0 and ended["legal"] == []
    assert ended["result"]["winners"] == [1] and ended["num_moves"] == moves
    assert client.get(f"/api/games/{gid}").json()["resigned"] == 0
    # no move after it, from either side; the same request again is answered as a repeat
    r = act(client, gid, 0, token, 0, expect=moves)
    assert r.status_code == 409 and r.json()["error"] == "game_over"
    again = resign(client, gid, 0, token)
    assert again.status_code == 200 and again.json()["repeated"] and again.json()["resigned"] == 0
    assert check_replay(client.app.state.store, gid) == []

    replay = client.get(f"/api/games/{gid}/replay")
    assert replay.status_code == 200, replay.text
    data = replay.json()
    assert data["resigned"] == 0 and len(data["actions"]) == moves and data["final_state"] == ended["state"]
    review = client.get(f"/api/games/{gid}/review")
    assert review.status_code == 200, review.text
    players = review.json()["players"]
    assert [p["result"] for p in players] == [-1.0, 1.0]
    assert [p["score"] for p in players] == ended["result"]["scores"]
    # the download reads back in the terminal, reviewed the same way
    path = tmp_path / "resigned.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path), "--review", "--no-color"]) == 0
    assert "Ann" in capsys.readouterr().out


def test_a_resigned_game_stays_over_after_a_restart(client: Any, db: Path) -> None:
    view = create(client, ANN_VS_GREEDY)
    gid, token = view["game_id"], view["tokens"]["0"]
    assert resign(client, gid, 0, token).status_code == 200
    fresh = restart(client, db)
    view = fresh.get(f"/api/games/{gid}").json()
    assert view["over"] and view["resigned"] == 0 and view["result"]["winners"] == [1]
    assert fresh.get(f"/api/games/{gid}/replay").status_code == 200


def test_at_three_players_the_others_are_ranked_by_their_scores(client: Any) -> None:
    spec = {
        "seats": [
            {"type": "human", "name": "Ann"},
            {"type": "human", "name": "Bo"},
            {"type": "bot", "bot": "greedy"},
        ]
    }
    view = create(client, spec)
    gid = view["game_id"]
    r = resign(client, gid, 1, view["tokens"]["1"])  # out of turn: leaving needs no turn
    assert r.status_code == 200, r.text
    ended = r.json()
    assert ended["resigned"] == 1 and ended["result"]["winners"] == [0, 2]  # equal scores (none yet) share
    review = client.get(f"/api/games/{gid}/review").json()
    assert [p["result"] for p in review["players"]] == [0.5, -1.0, 0.5]


def test_bad_resign_requests_get_a_clear_error(client: Any) -> None:
    view = create(client, ANN_VS_GREEDY)
    gid, token = view["game_id"], view["tokens"]["0"]
    cases = [
        (resign(client, gid, 0, "nope"), 403, "bad_token"),
        (resign(client, gid, 1, token), 403, "bad_token"),
        (resign(client, gid, 0, token, action=3), 400, "bad_request"),
        (resign(client, gid, 5, token), 400, "bad_seat"),
        (resign(client, "nosuchgame", 0, token), 404, "unknown_game"),
        (client.post(f"/api/games/{gid}/resign", json=[1]), 400, "bad_request"),
    ]
    for r, status, code in cases:
        assert (r.status_code, r.json()["error"]) == (status, code), r.text
    assert not client.get(f"/api/games/{gid}").json()["over"]


def test_an_unfinished_game_says_when_it_can_be_downloaded_and_reviewed(client: Any) -> None:
    view = create(client, ANN_VS_GREEDY)
    gid = view["game_id"]
    replay = client.get(f"/api/games/{gid}/replay")
    review = client.get(f"/api/games/{gid}/review")
    assert replay.status_code == review.status_code == 409
    assert (
        replay.json()["message"]
        == "replays are available once the game is over (played to the end or resigned)"
    )
    assert (
        review.json()["message"] == "a game can be reviewed once it is over (played to the end or resigned)"
    )


def test_resigning_while_the_bot_is_on_turn_stops_it(client: Any) -> None:
    view = create(client, {"seats": [{"type": "bot", "bot": "planner"}, {"type": "human", "name": "Ann"}]})
    gid, token = view["game_id"], view["tokens"]["1"]
    r = resign(client, gid, 1, token)  # the planner is thinking about its opening turn
    assert r.status_code == 200, r.text
    assert client.app.state.service.wait_for_bots(60)
    after = client.get(f"/api/games/{gid}").json()
    assert after["over"] and after["resigned"] == 1 and after["num_moves"] == r.json()["num_moves"]
    assert check_replay(client.app.state.store, gid) == []
