"""The web table's HTTP API, through Starlette's ASGI test client (no network)."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

with warnings.catch_warnings():  # starlette announces a future switch of its test client to httpx2
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient

from shelfie_env import bots
from shelfie_env.game.engine import Game
from shelfie_env.play.web import moves as moves_module
from shelfie_env.play.web.app import MAX_BODY, create_app
from shelfie_env.play.web.botturns import BotTurns
from shelfie_env.play.web.schemas import MAX_NAME
from shelfie_env.play.web.seats import BotShelf
from shelfie_env.play.web.service import GameService
from shelfie_env.play.web.store import GameStore
from shelfie_env.play.web.views import Views

HUMAN_VS_RANDOM = {"seats": [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "random"}]}
TWO_HUMANS = {"seats": [{"type": "human", "name": "Ann"}, {"type": "human", "name": "Bob"}]}


@pytest.fixture(autouse=True)
def unpaced_bot_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables of bots play at full speed here (the server paces them for watchers)."""
    monkeypatch.setattr(BotTurns, "bots_only_pace_s", 0.0)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite3"


@pytest.fixture
def client(db: Path) -> TestClient:
    return TestClient(create_app(db))


def restart(client: TestClient, db: Path) -> TestClient:
    """Stop the server behind ``client`` (its store lets go of the file) and start another on ``db``."""
    client.app.state.service.close()
    client.app.state.store.close()
    return TestClient(create_app(db))


def settle(client: TestClient, view: dict[str, Any]) -> dict[str, Any]:
    """The game's view (all moves) once the bots that are due have played (they play in the background)."""
    deadline = time.monotonic() + 60
    while True:
        assert client.app.state.service.wait_for_bots(60), "the bots did not finish"
        fresh = client.get(f"/api/games/{view['game_id']}?since=0").json()
        bot_on_turn = fresh["seats"][fresh["state"]["current_player"]]["type"] == "bot"
        if fresh["over"] or not bot_on_turn or time.monotonic() > deadline:
            return {**fresh, **{k: view[k] for k in ("tokens", "links") if k in view}}
        time.sleep(0.01)  # a bot that failed is tried again shortly


def create(client: TestClient, spec: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/games", json=spec)
    assert r.status_code == 201, r.text
    return r.json()


def act(client: TestClient, gid: str, seat: int, token: str, action: int, **extra: Any) -> Any:
    """Send a move; ``expect`` defaults to the number of moves the game has now."""
    if "expect" not in extra:
        current = client.get(f"/api/games/{gid}")
        extra["expect"] = current.json()["num_moves"] if current.status_code == 200 else 0
    return client.post(
        f"/api/games/{gid}/actions", json={"seat": seat, "token": token, "action": action, **extra}
    )


def play_out(
    client: TestClient,
    view: dict[str, Any],
    tokens: dict[str, str],
    rng: random.Random,
    max_moves: int = 10_000,
    persons: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Play random legal moves for the human seats until the game is over (``persons``: the person
    key sent with each move of a seat, which a seat its person joined needs)."""
    gid = view["game_id"]
    for _ in range(max_moves):
        if not view["over"] and str(view["state"]["current_player"]) not in tokens:
            view = settle(client, view)  # a bot is on turn: it plays in the background
        if view["over"]:
            return view
        seat = view["state"]["current_player"]
        assert str(seat) in tokens, "the bots have played"
        action = rng.choice(view["legal"])["action"]
        key = {"person": persons[str(seat)]} if persons and str(seat) in persons else {}
        r = act(client, gid, seat, tokens[str(seat)], action, expect=view["num_moves"], **key)
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("game did not end")


def check_moves_follow_rules(initial: dict[str, Any], moves: list[dict[str, Any]]) -> None:
    """Each stored move is legal in the state before it and yields the shelves stored after it."""
    before = initial
    for m in moves:
        game = Game.from_dict(before, rng=0)
        assert m["action"] in game.legal_actions()
        assert m["seat"] == before["current_player"]
        game.step(m["action"])
        after = m["state"]
        assert game.to_dict()["boards"] == after["boards"]
        assert game.current == after["current_player"]
        assert game.end_triggered == after["end_triggered"]
        before = after


# ----------------------------------------------------------------------------- pages and meta


def test_pages_and_static_files_are_served_with_security_headers(client: TestClient) -> None:
    for path in ("/", "/rules", "/g/whatever"):
        r = client.get(path)
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff"
    assert "Shelfie" in client.get("/rules").text
    for asset in ("table.js", "setup.js", "common.js", "style.css", "favicon.svg"):
        assert client.get(f"/static/{asset}").status_code == 200
    # the page scripts never put data into innerHTML
    for asset in ("table.js", "setup.js", "common.js"):
        assert not re.search(
            r"\.(inner|outer)HTML\s*=|insertAdjacentHTML|document\.write", client.get(f"/static/{asset}").text
        )


def test_meta_lists_the_registered_bots(client: TestClient) -> None:
    meta = client.get("/api/meta").json()
    assert meta["bots"] == [b for b in bots.available() if not bots.needs_tape(b)]  # no clairvoyant
    assert {"random", "greedy"} <= set(meta["bots"])
    assert meta["hint"] is (moves_module.hint_function() is not None)
    assert meta["max_players"] == 4 and meta["max_name"] == MAX_NAME and meta["max_body"] == MAX_BODY
    tables = meta["bot_tables"]
    assert tables["greedy"] == [1, 2, 3, 4] and tables["ppo"] == [1, 2]  # the shipped ppo models
    r = client.post("/api/games", json={"seats": [{"type": "human"}] * 2 + [{"type": "bot", "bot": "ppo"}]})
    assert r.status_code == 400 and r.json()["error"] == "bot_unavailable" and "/" not in r.json()["message"]
    # the start page's default opponent is the shipped self-taught bot, named as the terminal help names it
    assert meta["default_bot"] == "td" and meta["bot_notes"]["td"] == "the shipped self-taught bot"
    assert tables["td"] == [2, 3, 4]


def test_the_page_names_the_items_as_the_engine_does(client: TestClient) -> None:
    """The row labels and cell names of the page are the engine's symbol names (actions.py)."""
    from shelfie_env.game.actions import SYMBOL_PLURALS, SYMBOLS

    common = client.get("/static/common.js").text

    def js_list(name: str) -> list[str]:
        found = re.search(rf"const {name} = (\[[^\]]*\]);", common)
        assert found, f"common.js defines no {name} list"
        return json.loads(found.group(1))

    assert js_list("SYMBOLS") == list(SYMBOLS) and js_list("PLURALS") == list(SYMBOL_PLURALS)
    assert client.get("/api/meta").json()["symbols"] == list(SYMBOLS)


# ----------------------------------------------------------------------------- whole games


@pytest.mark.parametrize("bot", ["random", "greedy"])
def test_full_game_against_a_bot(client: TestClient, bot: str) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": bot}]})
    assert set(view["tokens"]) == {"0"}
    assert view["links"]["0"] == f"/g/{view['game_id']}#seat=0&token={view['tokens']['0']}"
    assert view["seats"][1] == {"seat": 1, "type": "bot", "name": f"{bot} bot", "bot": bot}
    final = play_out(client, view, view["tokens"], random.Random(1))
    assert final["over"] and final["legal"] == []
    result = final["result"]
    assert result["scores"] == final["state"]["scores"]
    best = max(result["scores"])
    assert result["winners"] == [p for p, s in enumerate(result["scores"]) if s == best]
    for p, parts in enumerate(result["breakdown"]):
        assert len(parts["rows"]) == 5 and len(parts["cols"]) == 5
        assert sum(parts["rows"]) + sum(parts["cols"]) == result["scores"][p]
    # the bot really played: some moves are seat 1's, and all moves follow the rules
    full = client.get(f"/api/games/{view['game_id']}?since=0").json()
    assert full["num_moves"] == len(full["moves"]) == final["num_moves"]
    assert any(m["seat"] == 1 for m in full["moves"])
    replay = client.get(f"/api/games/{view['game_id']}/replay")
    assert replay.status_code == 200
    assert "attachment" in replay.headers["content-disposition"]
    data = replay.json()
    assert data["version"] == 1
    assert data["final_state"] == final["state"]
    assert len(data["actions"]) == len(data["states"]) == final["num_moves"]
    assert data["states"][-1] == data["final_state"]
    assert [a["action"] for a in data["actions"]] == [m["action"] for m in full["moves"]]
    check_moves_follow_rules(data["initial_state"], full["moves"])


@pytest.mark.parametrize("bot", ["planner", "ppo"])
def test_planner_and_learned_bot_seats_play(client: TestClient, bot: str) -> None:
    """The strong bots of the project (the ppo bot with the shipped 2-player model) take a seat."""
    assert bot in bots.available()
    view = create(client, {"seats": [{"type": "bot", "bot": bot}, {"type": "human"}]})
    final = play_out(client, view, view["tokens"], random.Random(2))
    moves = client.get(f"/api/games/{view['game_id']}").json()["moves"]
    assert final["over"] and any(m["seat"] == 0 for m in moves)
    assert not any("bot error" in m["name"] for m in moves)


def test_learned_bot_without_a_model_for_the_table_size_is_a_clear_400(client: TestClient) -> None:
    r = client.post("/api/games", json={"seats": [{"type": "human"}] * 2 + [{"type": "bot", "bot": "ppo"}]})
    assert r.status_code == 400 and r.json()["error"] == "bot_unavailable"
    message = r.json()["message"]
    assert "3-player" in message and "shipped: 1 (ppo_solo), 2 (ppo_2p)" in message
    assert "/" not in message, "no server path reaches the user"


def test_bot_in_seat_zero_plays_its_opening_turn_in_the_background(client: TestClient) -> None:
    first = create(client, {"seats": [{"type": "bot", "bot": "greedy"}, {"type": "human", "name": "Bob"}]})
    assert first["state"]["current_player"] == 0 or first["num_moves"] > 0  # the answer does not wait
    view = settle(client, first)
    assert view["moves"], "the bot's opening turn is played without a request"
    assert {m["seat"] for m in view["moves"]} == {0}
    assert view["state"]["current_player"] == 1
    assert [m["index"] for m in view["moves"]] == list(range(view["num_moves"]))
    assert set(view["tokens"]) == {"1"}
    assert view["seats"][1]["name"] == "Bob" and view["seats"][0]["name"] == "greedy bot"


def test_only_bots_table_plays_to_the_end_in_the_background(client: TestClient) -> None:
    first = create(
        client,
        {
            "seats": [
                {"type": "bot", "bot": "random"},
                {"type": "bot", "bot": "greedy"},
                {"type": "bot", "bot": "random"},
            ]
        },
    )
    assert first["tokens"] == {} and first["links"] == {}
    view = settle(client, first)
    assert view["over"]
    assert len(view["result"]["scores"]) == 3
    assert client.get(f"/api/games/{view['game_id']}/replay").status_code == 200


def test_solo_and_four_seat_tables(client: TestClient) -> None:
    solo = create(client, {"seats": [{"type": "human"}]})
    assert solo["seats"][0]["name"] == "Player 1"
    final = play_out(client, solo, solo["tokens"], random.Random(3))
    assert final["result"]["winners"] == [0]
    four = create(client, {"seats": [{"type": "human"}, {"type": "bot", "bot": "random"}] * 2})
    assert set(four["tokens"]) == {"0", "2"}
    assert play_out(client, four, four["tokens"], random.Random(4))["over"]


def test_two_humans_each_move_only_their_own_seat(client: TestClient) -> None:
    view = create(client, TWO_HUMANS)
    gid, tokens = view["game_id"], view["tokens"]
    assert tokens["0"] != tokens["1"]
    action = view["legal"][0]["action"]
    # seat 1's token cannot move seat 0, and seat 1 cannot move out of turn
    r = act(client, gid, 0, tokens["1"], action)
    assert r.status_code == 403 and r.json()["error"] == "bad_token"
    r = act(client, gid, 1, tokens["1"], action)
    assert r.status_code == 409 and r.json()["error"] == "not_your_turn"
    final = play_out(client, view, tokens, random.Random(5))
    seats = {m["seat"] for m in client.get(f"/api/games/{gid}").json()["moves"]}
    assert seats == {0, 1}
    assert final["over"]


def test_poll_since_returns_only_new_moves(client: TestClient) -> None:
    view = create(client, HUMAN_VS_RANDOM)
    gid, token = view["game_id"], view["tokens"]["0"]
    r = act(client, gid, 0, token, 0)  # stop rolling
    after = r.json()
    assert after["moves"][0]["index"] == 0 and after["moves"][0]["name"] == "stop rolling"
    polled = client.get(f"/api/games/{gid}?since={after['num_moves']}").json()
    assert polled["moves"] == [] and polled["num_moves"] == after["num_moves"]
    assert client.get(f"/api/games/{gid}?since=0").json()["moves"] == after["moves"]


# ----------------------------------------------------------------------------- errors leave games unchanged


def snapshot(client: TestClient, gid: str) -> dict[str, Any]:
    return client.get(f"/api/games/{gid}?since=0").json()


@pytest.fixture
def game(client: TestClient) -> dict[str, Any]:
    return create(client, TWO_HUMANS)


def post_raw(client: TestClient, path: str, content: bytes, **headers: str) -> Any:
    return client.post(path, content=content, headers={"content-type": "application/json", **headers})


@pytest.mark.parametrize(
    "body, status, code",
    [
        (b"{not json", 400, "bad_json"),
        (b"", 400, "bad_json"),
        (b"\xff\xfe", 400, "bad_json"),
        (b"[1, 2]", 400, "bad_request"),
        (b'"text"', 400, "bad_request"),
        (b'{"seat": 0, "token": "T"}', 400, "missing_action"),
        (b'{"seat": 0, "token": "T", "action": "1"}', 400, "bad_action"),
        (b'{"seat": 0, "token": "T", "action": true}', 400, "bad_action"),
        (b'{"seat": 0, "token": "T", "action": 1.5}', 400, "bad_action"),
        (b'{"seat": 0, "token": "T", "action": 99999999999999999999}', 400, "bad_action"),
        (b'{"seat": 0, "token": "T", "action": 0, "extra": 1}', 400, "bad_request"),
        (b'{"token": "T", "action": 0}', 400, "missing_seat"),
        (b'{"seat": 7, "token": "T", "action": 0}', 400, "bad_seat"),
        (b'{"seat": -1, "token": "T", "action": 0}', 400, "bad_seat"),
        (b'{"seat": 0, "action": 0}', 403, "missing_token"),
        (b'{"seat": 0, "token": "", "action": 0}', 403, "missing_token"),
        (b'{"seat": 0, "token": "guess", "action": 0}', 403, "bad_token"),
        (b'{"seat": 0, "token": 12345, "action": 0}', 403, "bad_token"),
        (b'{"seat": 1, "token": "T1", "action": 0}', 409, "not_your_turn"),
        (b'{"seat": 0, "token": "T", "action": 114}', 422, "illegal_action"),
        (b'{"seat": 0, "token": "T", "action": 120}', 422, "illegal_action"),
        (b'{"seat": 0, "token": "T", "action": -3}', 422, "illegal_action"),
        (b'{"seat": 0, "token": "T", "action": 0, "expect": 5}', 409, "stale"),
        (b'{"seat": 0, "token": "T", "action": 0, "since": -1}', 400, "bad_since"),
        (b'{"seat": 0, "token": "T", "action": 0, "since": "0"}', 400, "bad_since"),
        (b'{"seat": 0, "token": "T", "action": 0, "expect": null}', 400, "missing_expect"),
        (b'{"seat": 0, "token": "T", "action": 0, "expect": -1}', 400, "bad_expect"),
        (b'{"seat": 0, "token": "T", "action": 0, "expect": "0"}', 400, "bad_expect"),
    ],
)
def test_bad_action_requests_get_a_clear_error_and_change_nothing(
    client: TestClient, game: dict[str, Any], body: bytes, status: int, code: str
) -> None:
    gid = game["game_id"]
    body = body.replace(b'"T1"', json.dumps(game["tokens"]["1"]).encode())
    body = body.replace(b'"T"', json.dumps(game["tokens"]["0"]).encode())
    if body.startswith(b'{"') and b'"expect"' not in body:
        body = body[:-1] + b', "expect": 0}'
    before = snapshot(client, gid)
    r = post_raw(client, f"/api/games/{gid}/actions", body)
    assert r.status_code == status, r.text
    err = r.json()
    assert err["error"] == code and err["message"]
    assert snapshot(client, gid) == before


def test_illegal_action_explains_why_and_lists_the_legal_ones(
    client: TestClient, game: dict[str, Any]
) -> None:
    r = act(client, game["game_id"], 0, game["tokens"]["0"], 114)
    err = r.json()
    assert "illegal action 114" in err["message"] and "reroll phase" in err["message"]
    assert err["legal"] == [m["action"] for m in game["legal"]]


def test_oversized_body_is_refused_with_413(client: TestClient, game: dict[str, Any]) -> None:
    gid = game["game_id"]
    before = snapshot(client, gid)
    big = json.dumps({"seat": 0, "token": game["tokens"]["0"], "action": 0, "pad": "x" * MAX_BODY}).encode()
    r = post_raw(client, f"/api/games/{gid}/actions", big)
    assert r.status_code == 413 and r.json()["error"] == "body_too_large"

    def chunks() -> Any:  # no Content-Length: counted while streaming
        for _ in range(20):
            yield b" " * 1024

    r = client.post(f"/api/games/{gid}/actions", content=chunks())
    assert r.status_code == 413
    r = client.post("/api/games", content=b"{}", headers={"content-length": "nope"})
    assert r.status_code == 400
    assert snapshot(client, gid) == before


def test_unknown_game_is_404_everywhere(client: TestClient) -> None:
    for r in (
        client.get("/api/games/nope"),
        client.get("/api/games/nope/replay"),
        act(client, "nope", 0, "t", 0),
        client.post("/api/games/nope/hint", json={"seat": 0, "token": "t"}),
        client.get("/api/games/" + "x" * 500),
    ):
        if r.request.url.path.endswith("/hint") and moves_module.hint_function() is None:
            assert r.status_code == 404 and r.json()["error"] == "no_hints"
            continue
        assert r.status_code == 404, r.text
        assert r.json()["error"] == "unknown_game"


def test_routing_errors_are_json(client: TestClient) -> None:
    r = client.get("/api/nothing-here")
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    r = client.delete("/api/games")
    assert r.status_code == 405 and r.json()["error"] == "method_not_allowed"


@pytest.mark.parametrize("since", ["-1", "x", "1e3"])
def test_bad_since_is_400(client: TestClient, game: dict[str, Any], since: str) -> None:
    r = client.get(f"/api/games/{game['game_id']}?since={since}")
    assert r.status_code == 400 and r.json()["error"] == "bad_since"


@pytest.mark.parametrize(
    "spec, code, words",
    [
        ({}, "bad_seats", "seats"),
        ({"seats": []}, "bad_seats", "1 to 4"),
        ({"seats": [{"type": "human"}] * 5}, "bad_seats", "1 to 4"),
        ({"seats": "human"}, "bad_seats", "list"),
        ({"seats": [1]}, "bad_seats", "object"),
        ({"seats": [{"type": "alien"}]}, "bad_seats", "'human' or 'bot'"),
        ({"seats": [{"type": "bot", "bot": "nobody"}]}, "unknown_bot", "available"),
        ({"seats": [{"type": "bot"}]}, "unknown_bot", "available"),
        ({"seats": [{"type": "human", "name": "x" * (MAX_NAME + 1)}]}, "bad_name", "at most 24"),
        ({"seats": [{"type": "human", "name": 7}]}, "bad_name", "string"),
        ({"seats": [{"type": "human", "name": "a\u0000b"}]}, "bad_name", "control"),
        ({"seats": [{"type": "human", "token": "mine"}]}, "bad_seats", "unknown field"),
        ({"seats": [{"type": "human"}], "seed": 3}, "bad_request", "unknown field"),
    ],
)
def test_bad_table_specs_are_refused(client: TestClient, spec: dict[str, Any], code: str, words: str) -> None:
    r = client.post("/api/games", json=spec)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == code and words in r.json()["message"]


def test_names_are_trimmed_and_stored_verbatim(client: TestClient) -> None:
    view = create(
        client,
        {"seats": [{"type": "human", "name": "  <b>Ann</b>   &  Co  "}, {"type": "human", "name": ""}]},
    )
    assert view["seats"][0]["name"] == "<b>Ann</b> & Co"
    assert view["seats"][1]["name"] == "Player 2"
    assert (
        create(client, {"seats": [{"type": "human", "name": "é" * MAX_NAME}]})["seats"][0]["name"] == "é" * 24
    )


def test_finished_game_refuses_moves_and_unfinished_game_refuses_replay(client: TestClient) -> None:
    view = create(client, HUMAN_VS_RANDOM)
    gid, token = view["game_id"], view["tokens"]["0"]
    r = client.get(f"/api/games/{gid}/replay")
    assert r.status_code == 409 and r.json()["error"] == "game_not_over"
    final = play_out(client, view, view["tokens"], random.Random(6))
    r = act(client, gid, 0, token, 0)
    assert r.status_code == 409 and r.json()["error"] == "game_over"
    assert snapshot(client, gid)["state"] == final["state"]


def test_a_bot_seat_has_no_token(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "bot", "bot": "random"}, {"type": "human"}]})
    r = act(client, view["game_id"], 0, view["tokens"]["1"], 0)
    assert r.status_code == 403


# ----------------------------------------------------------------------------- secrets and storage


def test_ids_and_tokens_are_long_random_and_not_stored_in_clear(client: TestClient, db: Path) -> None:
    views = [create(client, TWO_HUMANS) for _ in range(3)]
    ids = {v["game_id"] for v in views}
    tokens = [t for v in views for t in v["tokens"].values()]
    assert len(ids) == 3 and len(set(tokens)) == 6
    assert all(len(i) >= 16 for i in ids) and all(len(t) >= 32 for t in tokens)
    raw = b"".join(p.read_bytes() for p in db.parent.iterdir() if p.name.startswith(db.name))
    assert all(t.encode() not in raw for t in tokens)


def test_every_move_is_in_sqlite_right_after_it_is_answered(client: TestClient, db: Path) -> None:
    view = create(client, HUMAN_VS_RANDOM)
    gid = view["game_id"]
    after = act(client, gid, 0, view["tokens"]["0"], 0).json()
    con = sqlite3.connect(db)
    (n, state, status) = con.execute(
        "SELECT num_moves, state, status FROM games WHERE id=?", (gid,)
    ).fetchone()
    assert n == after["num_moves"] and json.loads(state) == after["state"] and status == "active"
    assert con.execute("SELECT COUNT(*) FROM moves WHERE game_id=?", (gid,)).fetchone()[0] == n
    con.close()


def test_restart_resumes_unfinished_games(db: Path) -> None:
    first = TestClient(create_app(db))
    view = create(first, HUMAN_VS_RANDOM)
    gid, tokens = view["game_id"], view["tokens"]
    rng = random.Random(7)
    for _ in range(6):
        if view["state"]["current_player"] != 0:
            view = settle(first, view)
        move = rng.choice(view["legal"])["action"]
        view = act(first, gid, 0, tokens["0"], move, expect=view["num_moves"]).json()
    settle(first, view)
    before = snapshot(first, gid)
    second = restart(first, db)  # the server goes away; a new one opens the same file
    assert snapshot(second, gid) == before
    final = play_out(second, before, tokens, rng)
    assert final["over"]
    full = snapshot(second, gid)
    check_moves_follow_rules(second.get(f"/api/games/{gid}/replay").json()["initial_state"], full["moves"])


def test_restart_lets_a_due_bot_move(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server killed after storing a human move but before its bot answered: the bot plays on restart."""
    first = TestClient(create_app(db))
    view = create(first, {"seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]})
    gid, token = view["game_id"], view["tokens"]["0"]
    monkeypatch.setattr(GameService, "_play_bots", lambda self, game_id: None)  # the "crash"
    view = act(first, gid, 0, token, 0).json()
    while view["state"]["current_player"] == 0:
        view = act(first, gid, 0, token, view["legal"][0]["action"]).json()
    stuck = view["num_moves"]
    assert view["state"]["current_player"] == 1
    first.app.state.service.close()  # the server goes down before its workers reach the bot
    first.app.state.store.close()
    monkeypatch.undo()
    second = TestClient(create_app(db))
    resumed = settle(second, view)
    assert resumed["num_moves"] > stuck
    assert {m["seat"] for m in resumed["moves"][stuck:]} == {1}
    assert resumed["state"]["current_player"] == 0 or resumed["over"]


def test_dice_continue_identically_after_a_restart(tmp_path: Path) -> None:
    """The dice generator's state is stored too: a restart does not change the dice to come."""

    def run(restart_at: int | None, path: Path) -> list[dict[str, Any]]:
        svc = GameService(GameStore(path))
        view = svc.create(TWO_HUMANS, seed=42)  # no bot: bots draw from their own generators
        gid, tokens = view["game_id"], view["tokens"]
        rng = random.Random(9)
        for i in range(40):
            if view["over"]:
                break
            if i == restart_at:
                svc.close()
                svc.store.close()
                svc = GameService(GameStore(path))
                svc.resume()
            seat = view["state"]["current_player"]
            action = rng.choice(view["legal"])["action"]
            move = {"seat": seat, "token": tokens[str(seat)], "action": action, "expect": view["num_moves"]}
            view = svc.act(gid, move)
        return [m["state"] for m in svc.view(gid, 0)["moves"]]

    straight = run(None, tmp_path / "a.sqlite3")
    restarted = run(15, tmp_path / "b.sqlite3")
    assert len(straight) > 15 and straight == restarted


def test_a_failing_bot_never_plays_a_random_move_and_is_tried_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    healthy = threading.Event()
    calls = {"n": 0}

    class Flaky:
        """Returns an illegal action until ``healthy`` is set, then plays legally."""

        def act(self, state: dict[str, Any]) -> int:
            calls["n"] += 1
            return Game.from_dict(state).legal_actions()[0] if healthy.is_set() else 999

    monkeypatch.setattr(BotTurns, "retry_s", 0.05)
    bots.register("flaky-test-bot", Flaky)
    try:
        view = create(client, {"seats": [{"type": "bot", "bot": "flaky-test-bot"}, {"type": "human"}]})
        gid, token = view["game_id"], view["tokens"]["1"]
        deadline = time.monotonic() + 30
        while calls["n"] < 3 and time.monotonic() < deadline:  # it fails, and is tried again, and again
            time.sleep(0.01)
        view = snapshot(client, gid)
        # the bot seat is on turn and has not moved: nothing was played for it
        assert calls["n"] >= 3 and view["num_moves"] == 0 and view["state"]["current_player"] == 0
        err = view["bot_error"]
        assert err["seat"] == 0 and err["bot"] == "flaky-test-bot" and "has not moved" in err["message"]
        assert act(client, gid, 1, token, 0).status_code == 409  # still the bot's turn
        healthy.set()
        again = settle(client, view)  # the next try moves
        assert again["bot_error"] is None and again["state"]["current_player"] == 1 and again["num_moves"] > 0
        moves = again["moves"]
        assert all(m["seat"] == 0 and "error" not in m["name"] for m in moves)
        check_moves_follow_rules(view["state"], moves)
        final = play_out(client, again, {"1": token}, random.Random(8))
        assert final["over"] and final["bot_error"] is None
    finally:
        bots._REGISTRY.pop("flaky-test-bot", None)


def test_a_storage_error_during_a_bot_move_does_not_wedge_the_game(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(BotTurns, "retry_s", 0.05)
    view = create(client, {"seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]})
    gid, token = view["game_id"], view["tokens"]["0"]
    store = client.app.state.service.store
    real = store.record_move
    fails = {"left": 1}  # the bot's first move cannot be stored (the database is locked)

    def locked(game_id: str, index: int, seat: int, *rest: Any) -> None:
        if seat == 1 and fails["left"] > 0:
            fails["left"] -= 1
            raise sqlite3.OperationalError("database is locked")
        real(game_id, index, seat, *rest)

    monkeypatch.setattr(store, "record_move", locked)
    errors: list[dict[str, Any]] = []
    real_play = GameService._play_bots

    def watched(self: GameService, game_id: str) -> float | None:
        retry = real_play(self, game_id)
        with self.sessions.lock:
            session = self.sessions.live.get(game_id)
        if session is not None and session.bot_error is not None:
            errors.append(session.bot_error)
        return retry

    monkeypatch.setattr(GameService, "_play_bots", watched)
    while view["state"]["current_player"] == 0:  # the human plays its turn
        before = view["num_moves"]
        r = act(client, gid, 0, token, view["legal"][0]["action"], expect=before)
        assert r.status_code == 200, r.text  # the person's move is stored and acknowledged
        view = r.json()
        assert view["num_moves"] == before + 1
    after = settle(client, view)  # the bot's first try fails to store, the next one moves
    assert fails["left"] == 0 and errors and "could not be stored" in errors[0]["message"]
    assert after["bot_error"] is None and (after["state"]["current_player"] == 0 or after["over"])
    assert after["num_moves"] > view["num_moves"]
    check_moves_follow_rules(view["state"], after["moves"][view["num_moves"]:])


def test_bot_that_cannot_be_built_is_a_clear_400(client: TestClient) -> None:
    def factory() -> Any:
        raise FileNotFoundError("no model file")

    bots.register("unbuildable-test-bot", factory)
    try:
        r = client.post(
            "/api/games", json={"seats": [{"type": "human"}, {"type": "bot", "bot": "unbuildable-test-bot"}]}
        )
        assert r.status_code == 400
        assert r.json()["error"] == "bot_unavailable" and "no model file" in r.json()["message"]
    finally:
        bots._REGISTRY.pop("unbuildable-test-bot", None)


# ----------------------------------------------------------------------------- hints


def test_hint_endpoint_uses_the_hint_module(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    def fake_hint(state: dict[str, Any], k: int = 3) -> list[dict[str, Any]]:
        calls.append(state)
        legal = Game.from_dict(state).legal_actions()
        return [{"action": a, "name": f"move {a}", "value": 1.5, "reason": "test"} for a in legal[:k]]

    monkeypatch.setattr(moves_module, "hint_function", lambda: fake_hint)
    view = create(client, TWO_HUMANS)
    gid, tokens = view["game_id"], view["tokens"]
    assert client.get("/api/meta").json()["hint"] is True
    r = client.post(f"/api/games/{gid}/hint", json={"seat": 0, "token": tokens["0"], "k": 2})
    assert r.status_code == 200
    hints = r.json()["hints"]
    assert [h["action"] for h in hints] == [m["action"] for m in view["legal"][:2]]
    assert hints[0] == {
        "action": hints[0]["action"],
        "name": f"move {hints[0]['action']}",
        "value": 1.5,
        "reason": "test",
    }
    assert calls[0] == view["state"]
    assert client.post(f"/api/games/{gid}/hint", json={"seat": 0, "token": "bad"}).status_code == 403
    assert client.post(f"/api/games/{gid}/hint", json={"seat": 1, "token": tokens["1"]}).status_code == 409
    assert (
        client.post(f"/api/games/{gid}/hint", json={"seat": 0, "token": tokens["0"], "k": 0}).status_code
        == 400
    )


def test_hint_endpoint_without_the_planner_says_so(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(moves_module, "hint_function", lambda: None)
    view = create(client, TWO_HUMANS)
    r = client.post(f"/api/games/{view['game_id']}/hint", json={"seat": 0, "token": view["tokens"]["0"]})
    assert r.status_code == 404 and r.json()["error"] == "no_hints"
    assert client.get("/api/meta").json()["hint"] is False


def test_real_hint_module_when_present(client: TestClient) -> None:
    import importlib.util

    present = importlib.util.find_spec("shelfie_env.bots.planner.hint") is not None
    assert (moves_module.hint_function() is not None) == present
    assert client.get("/api/meta").json()["hint"] is present
    if not present:
        return
    view = create(client, TWO_HUMANS)
    r = client.post(f"/api/games/{view['game_id']}/hint", json={"seat": 0, "token": view["tokens"]["0"]})
    assert r.status_code == 200, r.text
    legal = {m["action"] for m in view["legal"]}
    hints = r.json()["hints"]
    assert 1 <= len(hints) <= 3 and all(h["action"] in legal for h in hints)


def test_replay_file_plays_back_in_the_terminal(client: TestClient, tmp_path: Path) -> None:
    import argparse
    import io

    from shelfie_env.play.replay import run_replay

    view = create(client, HUMAN_VS_RANDOM)
    final = play_out(client, view, view["tokens"], random.Random(12))
    path = tmp_path / "replay.json"
    path.write_bytes(client.get(f"/api/games/{view['game_id']}/replay").content)
    out = io.StringIO()
    assert run_replay(argparse.Namespace(file=str(path), no_color=True), out) == 0
    text = out.getvalue()
    move_lines = [  # one line per move, under the seats' names
        ln for ln in text.splitlines()
        if re.match(r"(Ann|random bot) (rerolled|kept the dice|circled|ended the turn|crossed out)", ln)
    ]
    assert len(move_lines) == final["num_moves"]
    assert str(max(final["result"]["scores"])) in text


def test_restart_survives_a_damaged_game_and_a_bot_that_is_gone(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Passive:
        def act(self, state: dict[str, Any]) -> int:
            return Game.from_dict(state).legal_actions()[0]

    bots.register("vanishing-test-bot", Passive)
    try:
        first = TestClient(create_app(db))
        damaged = create(first, TWO_HUMANS)["game_id"]
        view = create(first, {"seats": [{"type": "human"}, {"type": "bot", "bot": "vanishing-test-bot"}]})
        gid, token = view["game_id"], view["tokens"]["0"]
        monkeypatch.setattr(
            GameService, "_play_bots", lambda self, game_id: None
        )  # crash before the bot moves
        view = act(first, gid, 0, token, 0).json()
        while view["state"]["current_player"] == 0:
            view = act(first, gid, 0, token, view["legal"][0]["action"]).json()
        first.app.state.service.close()  # the server goes down before its workers reach the bot
        first.app.state.store.close()
        monkeypatch.undo()
    finally:
        bots._REGISTRY.pop("vanishing-test-bot", None)
    con = sqlite3.connect(db)
    con.execute("UPDATE games SET state=? WHERE id=?", (json.dumps({"num_players": 9}), damaged))
    con.commit()
    con.close()
    second = TestClient(create_app(db))  # starts although one game is unreadable
    second.app.state.service.wait_for_bots()
    resumed = snapshot(second, gid)
    # the bot is gone: its seat waits (no move is invented for it) and the view says why
    assert resumed["state"]["current_player"] == 1 and resumed["num_moves"] == view["num_moves"]
    assert resumed["bot_error"]["bot"] == "vanishing-test-bot"
    assert "/" not in resumed["bot_error"]["message"]  # no server path
    r = second.get(f"/api/games/{damaged}")
    assert (
        r.status_code == 500
        and r.json()["error"] == "damaged_game"
        and "invalid state field" in r.json()["message"]
    )


@pytest.mark.parametrize(
    "column,value",
    [
        ("state", "{not json"),
        ("rng", json.dumps({"bit_generator": "PCG64"})),  # an RNG record without its state
        ("seats", "[]"),  # an empty seat list
        ("seats", "{broken"),
    ],
)
def test_one_damaged_row_does_not_keep_the_server_down(db: Path, column: str, value: str) -> None:
    first = TestClient(create_app(db))
    damaged = create(first, TWO_HUMANS)["game_id"]
    healthy = create(first, TWO_HUMANS)
    con = sqlite3.connect(db)
    con.execute(f"UPDATE games SET {column}=? WHERE id=?", (value, damaged))
    con.commit()
    con.close()
    second = restart(first, db)  # starts
    r = second.get(f"/api/games/{damaged}")
    assert r.status_code == 500 and r.json()["error"] == "damaged_game", r.text
    ok = act(second, healthy["game_id"], 0, healthy["tokens"]["0"], healthy["legal"][0]["action"])
    assert ok.status_code == 200


def test_a_damaged_database_file_is_refused_at_start(tmp_path: Path) -> None:
    from shelfie_env.play.web.store import DamagedDatabaseError, GameStore

    path = tmp_path / "games.sqlite3"
    client = TestClient(create_app(path, games_per_minute=0))
    for _ in range(20):
        create(client, TWO_HUMANS)
    client.app.state.store.close()
    data = bytearray(path.read_bytes())
    for i in range(4096 + 64, len(data), 97):  # flip bytes in every page after the first
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"games.sqlite3{suffix}").unlink(missing_ok=True)
    with pytest.raises(DamagedDatabaseError, match="damaged"):
        GameStore(path)


@pytest.mark.parametrize(
    "body,why",
    [
        (b'{"seats": [{"type": "human"}], "x": ' + b"9" * 5000 + b"}", "number too long"),
        (b"[" * 6000 + b"]" * 6000, "nested deeper"),
        (b'{"seats": [[[[[[[[[[1]]]]]]]]]]}', "nested deeper"),
        (b'{"seats": [{"type": "human", "name": "\\ud800"}]}', "unpaired surrogate"),
        (b'{"\\udfff": 1}', "unpaired surrogate"),
    ],
)
def test_hostile_json_gets_a_400_json_error(client: TestClient, body: bytes, why: str) -> None:
    r = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "bad_json" and why in r.json()["message"], r.text
    assert r.headers["x-content-type-options"] == "nosniff"


def test_a_lone_surrogate_in_a_token_is_a_400_and_leaves_the_game_unchanged(client: TestClient) -> None:
    view = create(client, TWO_HUMANS)
    gid = view["game_id"]
    body = b'{"seat": 0, "token": "\\ud800", "action": 0}'
    r = client.post(f"/api/games/{gid}/actions", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "bad_json"
    assert snapshot(client, gid)["num_moves"] == 0


def test_an_unexpected_error_is_a_500_json_answer_with_the_security_headers(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = TestClient(create_app(db), raise_server_exceptions=False)
    gid = create(client, TWO_HUMANS)["game_id"]

    def boom(self: GameService, game_id: str, since: int = 0) -> dict[str, Any]:
        raise RuntimeError("/secret/server/path exploded")

    monkeypatch.setattr(GameService, "view", boom)
    r = client.get(f"/api/games/{gid}")
    assert r.status_code == 500 and r.json()["error"] == "internal_error"
    assert "/secret" not in r.text and r.headers["content-security-policy"].startswith("default-src")


def test_a_second_server_on_the_same_database_is_refused(db: Path) -> None:
    from shelfie_env.play.web.store import DatabaseInUseError

    first = TestClient(create_app(db))
    gid = create(first, TWO_HUMANS)["game_id"]
    with pytest.raises(DatabaseInUseError, match="in use by another shelfie server"):
        create_app(db)
    second = restart(first, db)  # once the first has stopped, the file is free again
    assert snapshot(second, gid)["num_moves"] == 0


def test_api_answers_are_not_cached_and_forms_cannot_create_games(client: TestClient) -> None:
    r = client.post("/api/games", json=TWO_HUMANS)
    assert r.status_code == 201 and r.headers["cache-control"] == "no-store"
    assert re.fullmatch(r"app;dur=\d+\.\d", r.headers["server-timing"])
    assert "server-timing" not in client.get("/").headers
    for ctype, body in (
        ("text/plain", b'{"seats": [{"type": "human"}]}'),
        ("application/x-www-form-urlencoded", b"seats=1"),
        ("multipart/form-data; boundary=x", b"--x--"),
    ):
        r = client.post("/api/games", content=body, headers={"content-type": ctype})
        assert r.status_code == 415 and r.json()["error"] == "unsupported_media_type", ctype
    assert "cache-control" not in client.get("/").headers


# ----------------------------------------------------------------------------- open on a network


def serve_in_thread(app: Any, request_timeout: float) -> tuple[Any, int, threading.Thread]:
    """``shelfie serve``'s uvicorn configuration, on a free loopback port, in a thread."""
    import argparse

    import uvicorn

    from shelfie_env.play.web.cli import add_arguments, server_config

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--port", "0", "--request-timeout", str(request_timeout), "--log-level", "warning"])
    server = uvicorn.Server(server_config(app, args))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    return server, server.servers[0].sockets[0].getsockname()[1], thread


def test_clients_that_stall_mid_request_are_cut_off_while_others_are_served(db: Path) -> None:
    import socket

    import httpx

    server, port, thread = serve_in_thread(create_app(db), request_timeout=4.0)
    stalled: list[socket.socket] = []
    try:
        for i in range(300):  # half-open requests: part of the headers (or of a body), then nothing
            s = socket.create_connection(("127.0.0.1", port))
            if i % 2:
                s.sendall(b"GET /api/meta HTTP/1.1\r\nHost: x\r\n")
            else:
                s.sendall(b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100\r\n\r\n{\"seats\"")  # fmt: skip
            stalled.append(s)
        t0 = time.monotonic()
        r = httpx.get(f"http://127.0.0.1:{port}/api/meta", timeout=10)
        assert r.status_code == 200
        waiting = 0  # others are served meanwhile: answered while every stalled request still waits
        for s in stalled:
            s.setblocking(False)
            try:
                s.recv(1024)  # b"" (closed) or data: this one was already answered or cut
            except BlockingIOError:
                waiting += 1
            s.setblocking(True)
        assert waiting == len(stalled), f"{len(stalled) - waiting} stalled requests ended before another was served"
        deadline = time.monotonic() + 12
        closed = 0
        for s in stalled:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                if s.recv(1024) == b"":
                    closed += 1
            except (TimeoutError, ConnectionError):
                pass
        assert closed == len(stalled), f"only {closed} of {len(stalled)} stalled connections were closed"
        assert time.monotonic() - t0 < 14
        r = httpx.post(f"http://127.0.0.1:{port}/api/games", json=TWO_HUMANS, timeout=5)
        assert r.status_code == 201
    finally:
        for s in stalled:
            s.close()
        server.should_exit = True
        thread.join(10)


def test_a_persons_move_answers_while_a_slow_bot_thinks_in_the_background(client: TestClient) -> None:
    release = threading.Event()

    class Slow:
        def act(self, state: dict[str, Any]) -> int:
            release.wait(30)
            return Game.from_dict(state).legal_actions()[0]

    bots.register("slow-test-bot", Slow)
    try:
        view = create(client, {"seats": [{"type": "human"}, {"type": "bot", "bot": "slow-test-bot"}]})
        gid, token = view["game_id"], view["tokens"]["0"]
        while view["state"]["current_player"] == 0:
            t0 = time.monotonic()
            r = act(client, gid, 0, token, view["legal"][0]["action"], expect=view["num_moves"])
            assert r.status_code == 200 and time.monotonic() - t0 < 10, r.text  # the bot waits 30 s
            view = r.json()
        t0 = time.monotonic()
        polled = snapshot(client, gid)  # reads are not held up by the thinking bot
        assert time.monotonic() - t0 < 10 and polled["state"]["current_player"] == 1
        release.set()
        after = settle(client, view)
        assert after["num_moves"] > view["num_moves"] and after["bot_error"] is None
    finally:
        release.set()
        bots._REGISTRY.pop("slow-test-bot", None)


def test_bots_of_different_games_think_at_the_same_time(client: TestClient) -> None:
    """No single bot instance and lock is shared by every game: two games' bots overlap."""
    state = {"now": 0, "most": 0}
    lock = threading.Lock()
    instances: set[int] = set()

    class Counting:
        def act(self, st: dict[str, Any]) -> int:
            with lock:
                instances.add(id(self))
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.05)
            with lock:
                state["now"] -= 1
            return Game.from_dict(st).legal_actions()[0]

    bots.register("counting-test-bot", Counting)
    try:
        views = [create(client, {"seats": [{"type": "bot", "bot": "counting-test-bot"}] * 2}) for _ in range(2)]
        finals = [settle(client, v) for v in views]
        assert all(f["over"] for f in finals)
        assert state["most"] == 2, "the two games' bots never thought at the same time"
        assert len(instances) == 4, "each seat of each game has its own bot instance"
    finally:
        bots._REGISTRY.pop("counting-test-bot", None)


def test_building_a_slow_bot_does_not_stall_other_games(client: TestClient) -> None:
    building = threading.Event()
    release = threading.Event()

    def slow_factory() -> Any:
        building.set()
        release.wait(30)
        return bots.make("greedy")

    bots.register("slow-build-test-bot", slow_factory)
    try:
        view = create(client, {"seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]})
        gid, token = view["game_id"], view["tokens"]["0"]
        spec = {"seats": [{"type": "human"}, {"type": "bot", "bot": "slow-build-test-bot"}]}
        other = threading.Thread(target=lambda: client.post("/api/games", json=spec), daemon=True)
        other.start()
        assert building.wait(10)
        t0 = time.monotonic()
        while view["state"]["current_player"] == 0:  # the person's turn, then the greedy bot's
            view = act(client, gid, 0, token, view["legal"][0]["action"], expect=view["num_moves"]).json()
        while view["state"]["current_player"] == 1 and time.monotonic() - t0 < 10:
            time.sleep(0.02)
            view = snapshot(client, gid)
        assert view["state"]["current_player"] == 0, "the greedy bot waited for another bot's build"
        assert any(m["seat"] == 1 for m in view["moves"]) and building.is_set() and not release.is_set()
    finally:
        release.set()
        bots._REGISTRY.pop("slow-build-test-bot", None)


def test_bot_processes_play_the_shipped_bots_with_the_same_moves(tmp_path: Path) -> None:
    """The planner in a worker process plays what it plays in the server process."""
    views = []
    for processes in (0, 1):
        svc = GameService(GameStore(tmp_path / f"p{processes}.sqlite3"), bot_processes=processes)
        try:
            first = svc.create({"seats": [{"type": "bot", "bot": "planner"}, {"type": "bot", "bot": "greedy"}]},
                               seed=5)  # fmt: skip
            gid = first["game_id"]
            deadline = time.monotonic() + 120
            while not svc.view(gid)["over"] and time.monotonic() < deadline:
                time.sleep(0.05)
            views.append(svc.view(gid, 0))
        finally:
            svc.close()
            svc.store.close()
    assert views[0]["over"] and views[1]["over"]
    assert [m["action"] for m in views[0]["moves"]] == [m["action"] for m in views[1]["moves"]]
    assert views[0]["state"] == views[1]["state"]


def test_a_move_without_expect_is_refused_and_a_repeated_move_is_not_played_twice(
    client: TestClient,
) -> None:
    view = create(client, TWO_HUMANS)
    gid, tokens = view["game_id"], view["tokens"]
    r = client.post(f"/api/games/{gid}/actions", json={"seat": 0, "token": tokens["0"], "action": 0})
    assert r.status_code == 400 and r.json()["error"] == "missing_expect"
    assert snapshot(client, gid)["num_moves"] == 0
    body = {"seat": 0, "token": tokens["0"], "action": 0, "expect": 0}  # stop rolling
    first = client.post(f"/api/games/{gid}/actions", json=body)
    again = client.post(f"/api/games/{gid}/actions", json=body)  # a retried POST
    assert first.status_code == again.status_code == 200
    assert again.json()["repeated"] is True and "repeated" not in first.json()
    assert again.json()["num_moves"] == first.json()["num_moves"] == 1
    assert again.json()["moves"] == first.json()["moves"]
    other = client.post(f"/api/games/{gid}/actions", json={**body, "action": first.json()["legal"][0]["action"]})
    assert other.status_code == 409 and other.json()["error"] == "stale"  # a different move for an old position
    wrong = client.post(f"/api/games/{gid}/actions", json={**body, "token": tokens["1"]})
    assert wrong.status_code == 403
    assert snapshot(client, gid)["num_moves"] == 1


def test_concurrent_moves_for_one_decision_exactly_one_is_accepted(client: TestClient) -> None:
    view = create(client, TWO_HUMANS)
    gid, token = view["game_id"], view["tokens"]["0"]
    legal = [m["action"] for m in view["legal"]]
    answers: list[Any] = []
    barrier = threading.Barrier(8)

    def send(action: int) -> None:
        barrier.wait()
        answers.append(client.post(f"/api/games/{gid}/actions",
                                   json={"seat": 0, "token": token, "action": action, "expect": 0}))  # fmt: skip

    threads = [threading.Thread(target=send, args=(legal[i % len(legal)],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    played = [r for r in answers if r.status_code == 200 and not r.json().get("repeated")]
    assert len(played) == 1
    assert all(r.status_code in (200, 409) for r in answers)
    assert snapshot(client, gid)["num_moves"] == 1


def test_game_creation_and_hints_are_limited_per_client_address(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(moves_module, "hint_function", lambda: lambda state, k=3: [])
    app = create_app(db, games_per_minute=3, hints_per_minute=2)
    alice, bob = TestClient(app, client=("10.0.0.1", 1000)), TestClient(app, client=("10.0.0.2", 1000))
    views = [create(alice, TWO_HUMANS) for _ in range(3)]
    r = alice.post("/api/games", json=TWO_HUMANS)
    assert r.status_code == 429 and r.json()["error"] == "rate_limited"
    assert 1 <= int(r.headers["retry-after"]) <= 20 and r.json()["retry_after"] == int(r.headers["retry-after"])
    assert r.headers["cache-control"] == "no-store"
    create(bob, TWO_HUMANS)  # another address is not held back
    gid, token = views[0]["game_id"], views[0]["tokens"]["0"]
    hint = {"seat": 0, "token": token}
    assert [alice.post(f"/api/games/{gid}/hint", json=hint).status_code for _ in range(3)] == [200, 200, 429]
    assert bob.post(f"/api/games/{gid}/hint", json=hint).status_code == 200  # each address has its own budget


def test_rate_limiter_refills_and_forgets_full_buckets() -> None:
    from shelfie_env.play.web.guard import RateLimiter

    limit = RateLimiter(per_minute=6, burst=2, max_keys=3)
    assert limit.check("a", now=0) is None and limit.check("a", now=0) is None
    assert limit.check("a", now=0) == pytest.approx(10.0)
    assert limit.check("a", now=10) is None  # one token every 10 s
    for key in "bcdef":
        limit.check(key, now=100)
    assert len(limit._buckets) <= 3
    assert RateLimiter(per_minute=0).check("a") is None


def test_abandoned_games_expire_and_start_up_reads_only_games_with_a_bot_due(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = TestClient(create_app(db, games_per_minute=0))
    old = [create(first, TWO_HUMANS)["game_id"] for _ in range(30)]
    fresh = create(first, TWO_HUMANS)["game_id"]
    finished = settle(first, create(first, {"seats": [{"type": "bot", "bot": "random"}] * 2}))["game_id"]
    due = create(first, {"seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]})
    monkeypatch.setattr(GameService, "_play_bots", lambda self, game_id: None)  # crash before the bot moves
    view = act(first, due["game_id"], 0, due["tokens"]["0"], 0)
    while view.json()["state"]["current_player"] == 0:
        view = act(first, due["game_id"], 0, due["tokens"]["0"], view.json()["legal"][0]["action"])
    first.app.state.service.close()
    first.app.state.store.close()
    monkeypatch.undo()
    con = sqlite3.connect(db)
    con.execute(f"UPDATE games SET updated=updated-40*86400 WHERE id IN ({','.join('?' * len(old))})", old)
    con.execute("UPDATE games SET updated=updated-400*86400 WHERE id=?", (finished,))
    con.commit()
    con.close()
    reads: list[str] = []
    real = GameStore.get_game
    monkeypatch.setattr(GameStore, "get_game", lambda self, gid: reads.append(gid) or real(self, gid))
    second = TestClient(create_app(db, expire_days=30, keep_finished_days=None))
    service = second.app.state.service
    assert service.wait_for_bots(30)
    assert set(reads) == {due["game_id"]}, "start-up read games that have no bot to move"
    assert set(service.sessions.live) <= {due["game_id"]}
    deadline = time.monotonic() + 10
    while second.get(f"/api/games/{old[0]}").status_code != 404 and time.monotonic() < deadline:
        time.sleep(0.05)  # the expiry runs in the background at start-up
    assert all(second.get(f"/api/games/{g}").status_code == 404 for g in old)
    assert second.get(f"/api/games/{fresh}").status_code == 200
    assert second.get(f"/api/games/{finished}").status_code == 200  # finished games are kept by default
    assert snapshot(second, due["game_id"])["state"]["current_player"] == 0  # the due bot played on
    assert service.housekeeping(None, 300 * 86400) == 1  # finished games go after keep_finished_days
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM moves WHERE game_id=?", (finished,)).fetchone()[0] == 0
    con.close()


def test_idle_games_leave_memory_and_come_back_when_asked_for(client: TestClient) -> None:
    service = client.app.state.service
    view = create(client, TWO_HUMANS)
    gid, tokens = view["game_id"], view["tokens"]
    view = act(client, gid, 0, tokens["0"], 0).json()
    service.idle_s = 0.0
    service.housekeeping(None, None)
    assert gid not in service.sessions.live
    service.idle_s = 600.0
    again = act(client, gid, 0, tokens["0"], view["legal"][0]["action"], expect=view["num_moves"])
    assert again.status_code == 200 and again.json()["num_moves"] == view["num_moves"] + 1


def test_writes_waiting_meanwhile_are_committed_together_and_one_failure_is_undone_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = GameStore(tmp_path / "g.sqlite3")
    state = Game.new(2, rng=1).to_dict()
    for i in range(20):
        store.create_game(f"g{i}", [], state, {}, "active")
    batches: list[int] = []
    real = GameStore._commit
    monkeypatch.setattr(GameStore, "_commit", lambda self, batch: batches.append(len(batch)) or real(self, batch))
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:  # game g7 gets a move that does not follow its stored moves
            store.record_move(f"g{i}", 3 if i == 7 else 0, 0, 0, "stop rolling", state, {}, "active")
        except RuntimeError as exc:
            errors.append(exc)

    store._lock.acquire()  # a commit is under way: the writes arriving meanwhile wait for the next
    threads = [threading.Thread(target=write, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(store._pending) < 20 and time.monotonic() < deadline:
        time.sleep(0.005)
    store._lock.release()
    for t in threads:
        t.join()
    assert batches == [20], "the 20 waiting writes were not committed in one transaction"
    assert len(errors) == 1 and "does not follow" in str(errors[0])
    counts = {g.id: g.num_moves for g in (store.get_game(f"g{i}") for i in range(20)) if g}
    assert counts == {f"g{i}": 0 if i == 7 else 1 for i in range(20)}
    store.close()


_CLOSE_WHILE_READING = """
import sqlite3, sys, threading, time
from shelfie_env.play.web.store import GameStore
failures = []
threading.excepthook = lambda args: failures.append(repr(args.exc_value))
for n in range(60):
    store = GameStore(f"{sys.argv[1]}/g{n}.sqlite3")
    for i in range(10):
        store.create_game(f"g{i}", [], {}, {}, "active")
    def read():
        while True:
            try:
                store.get_game("g3"), store.count_games()
            except sqlite3.ProgrammingError as exc:
                assert "the store is closed" in str(exc), exc
                return
    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers:
        t.start()
    time.sleep(0.01)
    store.close()
    for t in readers:
        t.join()
print(failures or "ok")
"""


def test_closing_the_store_while_other_threads_read_is_safe(tmp_path: Path) -> None:
    """A server stopping while request or bot threads still read: those reads finish or get a
    closed-store error (in a process of its own, where a crash fails this test alone)."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _CLOSE_WHILE_READING, str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])


def test_a_locked_database_holds_up_neither_reads_nor_the_answer_for_long(db: Path) -> None:
    client = TestClient(create_app(db, write_timeout=2.0))
    a, b = create(client, TWO_HUMANS), create(client, TWO_HUMANS)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        answers: list[Any] = []
        mover = threading.Thread(
            target=lambda: answers.append(act(client, a["game_id"], 0, a["tokens"]["0"], 0, expect=0))
        )
        t0 = time.monotonic()
        mover.start()
        time.sleep(0.05)
        r = client.get(f"/api/games/{b['game_id']}?since=0")  # another game's read, while the write waits
        assert r.status_code == 200 and mover.is_alive()  # answered before the waiting write gave up
        mover.join(10)
        assert time.monotonic() - t0 < 6.0  # the write gave up after its 2 s, not after the lock's holder
        busy = answers[0]
        assert busy.status_code == 503 and busy.json()["error"] == "storage_busy"
        assert busy.headers["retry-after"] == "1"
        r = client.post("/api/games", json=TWO_HUMANS)  # nor is a new table: 503, not a 500
        assert r.status_code == 503 and r.json()["error"] == "storage_busy"
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert snapshot(client, a["game_id"])["num_moves"] == 0  # the refused move was not played
    assert act(client, a["game_id"], 0, a["tokens"]["0"], 0, expect=0).status_code == 200


def test_every_stored_game_replays_move_by_move_with_the_same_dice(db: Path) -> None:
    from shelfie_env.play.web.service import check_replay

    client = TestClient(create_app(db))
    view = create(client, {"seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]})
    gid, tokens = view["game_id"], view["tokens"]
    rng = random.Random(11)
    for _ in range(10):
        view = settle(client, view)
        view = act(client, gid, 0, tokens["0"], rng.choice(view["legal"])["action"], expect=view["num_moves"]).json()
    client = restart(client, db)  # the dice go on from the stored generator
    final = play_out(client, settle(client, view), tokens, rng)
    store = client.app.state.store
    assert final["over"] and check_replay(store, gid) == []
    con = sqlite3.connect(db)  # one stored roll is changed: the replay says which move
    idx, raw = con.execute("SELECT idx, state FROM moves WHERE game_id=? AND name LIKE 'reroll%' LIMIT 1",
                           (gid,)).fetchone()  # fmt: skip
    state = json.loads(raw)
    state["dice"] = [(d + 1) % 7 for d in state["dice"]]
    con.execute("UPDATE moves SET state=? WHERE game_id=? AND idx=?", (json.dumps(state), gid, idx))
    con.commit()
    con.close()
    assert check_replay(store, gid) == [f"move {idx}: replaying it gives another state (dice or shelves) than the stored one"]


def test_a_version_1_database_opens_and_its_games_are_checked_without_the_dice(tmp_path: Path) -> None:
    from shelfie_env.play.web.service import check_replay

    path = tmp_path / "v1.sqlite3"
    client = TestClient(create_app(path))
    view = create(client, TWO_HUMANS)
    final = play_out(client, view, view["tokens"], random.Random(13))
    client.app.state.service.close()
    client.app.state.store.close()
    con = sqlite3.connect(path)  # as a version 1 server left it: no initial_rng column
    con.execute("ALTER TABLE games DROP COLUMN initial_rng")
    con.execute("PRAGMA user_version=1")
    con.commit()
    con.close()
    store = GameStore(path)
    assert store.initial_rng(view["game_id"]) is None
    assert check_replay(store, view["game_id"]) == [] and final["over"]
    store.close()


def test_tables_of_bots_only_are_paced_and_a_persons_table_is_not(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(BotTurns, "bots_only_pace_s", 0.2)
    t0 = time.monotonic()
    bots_only = create(client, {"seats": [{"type": "bot", "bot": "random"}] * 2})
    person = create(client, {"seats": [{"type": "human"}, {"type": "bot", "bot": "random"}]})
    view = act(client, person["game_id"], 0, person["tokens"]["0"], 0, expect=0).json()
    while view["state"]["current_player"] == 0:
        view = act(client, person["game_id"], 0, person["tokens"]["0"], view["legal"][0]["action"]).json()
    after = settle(client, view)  # the bot's whole turn, without pauses
    assert after["state"]["current_player"] == 0 and time.monotonic() - t0 < 3
    for _ in range(5):
        snapshot(client, bots_only["game_id"])  # watchers' polls do not hurry it
    n = snapshot(client, bots_only["game_id"])["num_moves"]
    assert 1 <= n <= (time.monotonic() - t0) / 0.2 + 2


_SERVE_PROBE = """
import json, sys
import uvicorn
from shelfie_env.play.web import cli
configs = []
uvicorn.Server.run = lambda self: configs.append(self.config)
try:
    rc = cli.main(sys.argv[1:])
except SystemExit as exc:  # argparse refused an option
    rc = exc.code
c = configs[0] if configs else None
print(json.dumps({"rc": rc, "config": c and [c.timeout_keep_alive, c.limit_concurrency, c.http.timeout]}))
"""


@pytest.mark.parametrize("host, warned", [("0.0.0.0", True), ("127.0.0.1", False)])
def test_serve_warns_when_it_listens_beyond_loopback(tmp_path: Path, host: str, warned: bool) -> None:
    """``shelfie serve``'s start-up (uvicorn's ``run`` replaced), in a process of its own: it
    configures logging, threads and the interpreter's switch interval for the whole process."""
    import json
    import subprocess
    import sys

    argv = ["--host", host, "--port", "0", "--db", str(tmp_path / "g.sqlite3"), "--no-browser", "--request-timeout", "7",
            "--bot-processes", "0"]  # fmt: skip

    def serve(*args: str) -> tuple[dict[str, Any], str]:
        done = subprocess.run([sys.executable, "-c", _SERVE_PROBE, *args], capture_output=True, text=True,
                              timeout=120, cwd=Path(__file__).resolve().parents[1])  # fmt: skip
        return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr

    out, err = serve(*argv)
    assert out["rc"] == 0, err
    assert ("warning: listening on 0.0.0.0" in err and "plain HTTP" in err) is warned
    assert out["config"] == [20, 500, 7.0]  # keep-alive, concurrency limit, the guarded h11 protocol's deadline
    out, err = serve(*argv, "--request-timeout", "0")
    assert out["rc"] == 2 and "argument --request-timeout: must be > 0, got 0" in err


def test_bot_worker_processes_end_when_their_server_is_killed(tmp_path: Path) -> None:
    import signal
    import socket
    import subprocess
    import sys

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cmd = [sys.executable, "-m", "shelfie_env.play.web.cli", "--port", str(port), "--db", str(tmp_path / "g.sqlite3"),
           "--no-browser", "--log-level", "warning", "--bot-processes", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/meta", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        workers = [
            int(p.name) for p in Path("/proc").iterdir()
            if p.name.isdigit() and _parent(p) == proc.pid and b"spawn_main" in _cmdline(p)
        ]  # fmt: skip
        assert len(workers) == 2
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in workers), "bot worker processes outlived their server"


def _parent(proc_dir: Path) -> int:
    try:
        return int((proc_dir / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _cmdline(proc_dir: Path) -> bytes:
    try:
        return (proc_dir / "cmdline").read_bytes()
    except OSError:
        return b""


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_server_starts_while_another_connection_holds_the_write_lock(db: Path) -> None:
    first = TestClient(create_app(db))
    gid = create(first, TWO_HUMANS)["game_id"]
    first.app.state.service.close()
    first.app.state.store.close()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        second = TestClient(create_app(db, write_timeout=0.2))  # opening a current file writes nothing
        assert snapshot(second, gid)["num_moves"] == 0
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_stopped_pool_leaves_no_worker_process_or_manager_thread_behind() -> None:
    """The interpreter's exit hook writes to each pool manager's pipe: the managers must be gone."""
    from shelfie_env.play.web.botpool import BotPool

    pool = BotPool(lambda game_id: None, workers=1, processes=2)
    pool.start()
    executors = list(pool._executors)
    for executor in executors:
        executor.submit(int).result(timeout=120)  # each worker process is up
    processes = [p for e in executors for p in e._processes.values()]
    managers = [e._executor_manager_thread for e in executors]
    pool.stop()
    assert not any(t.is_alive() for t in managers)
    assert not any(p.is_alive() for p in processes)


@pytest.mark.parametrize("processes", [0, 1])
def test_interleaved_games_never_share_a_bots_turn_state(processes: int) -> None:
    """The td bot keeps state between the decisions of a turn: each game has its own instance."""
    from shelfie_env.play.web.botpool import BotPool

    pool = BotPool(lambda game_id: None, workers=1, processes=processes)
    try:
        rng = np.random.default_rng(0)
        games = [Game.new(2, rng=np.random.default_rng(i)) for i in range(6)]
        while any(not g.over for g in games):
            for i, g in enumerate(games):  # one decision of each game in turn
                if not g.over:
                    bot_turn = g.current == 1
                    action = pool.compute(f"g{i}", 1, "td", 2, g.to_dict()) if bot_turn else int(rng.choice(g.legal_actions()))
                    g.step(action)
    finally:
        pool.stop()


def test_a_game_deleted_while_its_bot_thinks_is_left_alone(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    thinking, release = threading.Event(), threading.Event()

    class Slow:
        def act(self, state: dict[str, Any]) -> int:
            thinking.set()
            release.wait(30)
            return Game.from_dict(state).legal_actions()[0]

    bots.register("slow-expiry-test-bot", Slow)
    try:
        view = create(client, {"seats": [{"type": "bot", "bot": "slow-expiry-test-bot"}, {"type": "human"}]})
        assert thinking.wait(10)
        service = client.app.state.service
        with service.sessions.lock:  # the game expires and leaves memory while the bot thinks
            service.sessions.live.pop(view["game_id"]).evicted = True
        service.store.expire(time.time() + 1, None)
        release.set()
        assert service.wait_for_bots(10)
        assert client.get(f"/api/games/{view['game_id']}").status_code == 404
        assert not [r for r in caplog.records if r.exc_info]
    finally:
        release.set()
        bots._REGISTRY.pop("slow-expiry-test-bot", None)


def test_polls_of_a_game_that_has_not_moved_reuse_its_view(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view of a game in play is built from what its moves changed: the head (state, legal moves,
    line summaries) once per move, the latest moves from the live log, not read back from the store."""
    view = create(client, TWO_HUMANS)
    gid, tokens = view["game_id"], view["tokens"]
    calls = {"head": 0, "stored": 0}
    real_head, real_stored = Views.head, Views.stored_entries

    def head(*args: Any) -> dict[str, Any]:
        calls["head"] += 1
        return real_head(*args)

    def stored(self: Views, *args: Any) -> list[dict[str, Any]]:
        calls["stored"] += 1
        return real_stored(self, *args)

    monkeypatch.setattr(Views, "head", staticmethod(head))
    monkeypatch.setattr(Views, "stored_entries", stored)
    polls = [client.get(f"/api/games/{gid}?since=0").json() for _ in range(3)]  # no moves yet
    assert calls["head"] == 0 and polls[0] == polls[1] == polls[2] and "tokens" not in polls[0]
    moved = act(client, gid, 0, tokens["0"], 0, expect=0).json()
    assert calls["head"] == 1
    after = client.get(f"/api/games/{gid}?since=1").json()
    assert after["num_moves"] == 1 and after["state"] == moved["state"] and after["moves"] == []
    assert client.get(f"/api/games/{gid}?since=0").json()["moves"] == moved["moves"]
    assert client.get(f"/api/games/{gid}?since=1").json() == after
    assert calls == {"head": 1, "stored": 0}


# ----------------------------------------------------------------------------- rematch


def finished_state(num_players: int, seed: int = 0) -> dict[str, Any]:
    """The last state of a game played with random legal moves."""
    game, rnd = Game.new(num_players, rng=seed), random.Random(seed)
    while not game.over:
        game.step(rnd.choice(list(game.legal_actions())))
    return game.to_dict()


def finished_game(client: TestClient, spec: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """A table opened at the end of a game (its first view, with tokens and links)."""
    return client.app.state.service.create(spec, seed=seed, state=finished_state(len(spec["seats"]), seed))


def ask_rematch(client: TestClient, gid: str, seat: int | None, token: str | None) -> Any:
    body = {} if seat is None else {"seat": seat, "token": token}
    return client.post(f"/api/games/{gid}/rematch", json=body)


THREE_SEATS = {
    "seats": [
        {"type": "human", "name": "Ann"},
        {"type": "bot", "bot": "greedy", "name": "Gus"},
        {"type": "human", "name": "Cy"},
    ]
}


def test_a_rematch_seats_the_same_players_one_seat_on_with_new_dice(client: TestClient, db: Path) -> None:
    old = finished_game(client, THREE_SEATS)
    gid, tokens = old["game_id"], old["tokens"]
    assert old["over"] and old["rematch"] is None
    assert client.get(f"/api/games/{gid}/rematch").json() == {"over": True, "rematch": None}
    r = ask_rematch(client, gid, 2, tokens["2"])
    assert r.status_code == 201, r.text
    new = r.json()
    rid = new["game_id"]
    assert rid != gid and new["rematch_of"] == gid and not new["over"] and new["num_moves"] == 0
    # everyone moves one seat on: Gus (the bot) starts, then Cy, then Ann
    assert new["seat_map"] == [2, 0, 1]
    assert [(s["type"], s["name"], s["bot"]) for s in new["seats"]] == [
        ("bot", "Gus", "greedy"), ("human", "Cy", None), ("human", "Ann", None)
    ]  # fmt: skip
    assert new["tokens"] == {"1": tokens["2"]}  # the asker's own token, at the asker's new seat
    assert new["links"] == {"1": f"/g/{rid}#seat=1&token={tokens['2']}"}
    store: GameStore = client.app.state.store
    assert store.initial_rng(rid) != store.initial_rng(gid)  # new dice
    # the finished game now points at it, in its view and in the small poll
    info = {"game_id": rid, "seat_map": [2, 0, 1]}
    assert snapshot(client, gid)["rematch"] == info
    assert client.get(f"/api/games/{gid}/rematch").json() == {"over": True, "rematch": info}
    assert snapshot(client, rid)["rematch"] is None
    # the other person's old token holds their new seat; a seat's old token holds no other seat
    view = settle(client, new)  # Gus plays his turn
    assert view["state"]["current_player"] == 1
    assert act(client, rid, 1, tokens["0"], 0).json()["error"] == "bad_token"
    r = act(client, rid, 1, tokens["2"], 0, expect=view["num_moves"])
    assert r.status_code == 200, r.text
    # asking again, from the other person, finds the same rematch: 200, not a second game
    again = ask_rematch(client, gid, 0, tokens["0"])
    assert again.status_code == 200
    assert again.json()["game_id"] == rid and again.json()["links"] == {"2": f"/g/{rid}#seat=2&token={tokens['0']}"}
    assert store.count_games() == {"over": 1, "active": 1}


def test_a_table_of_bots_gets_its_rematch_without_a_token(client: TestClient) -> None:
    spec = {"seats": [{"type": "bot", "bot": "random"}, {"type": "bot", "bot": "greedy"}]}
    old = finished_game(client, spec, seed=3)
    r = ask_rematch(client, old["game_id"], None, None)
    assert r.status_code == 201, r.text
    new = r.json()
    assert [s["bot"] for s in new["seats"]] == ["greedy", "random"]
    assert new["tokens"] == {} and new["links"] == {}
    assert settle(client, new)["over"]  # its bots play it out in the background
    assert ask_rematch(client, old["game_id"], None, None).json()["game_id"] == new["game_id"]


def test_bad_rematch_requests_get_a_clear_error_and_open_nothing(client: TestClient) -> None:
    old = finished_game(client, TWO_HUMANS)
    gid, token = old["game_id"], old["tokens"]["0"]
    live = create(client, TWO_HUMANS)
    cases = [
        (ask_rematch(client, "nope", 0, token), 404, "unknown_game"),
        (client.get("/api/games/nope/rematch"), 404, "unknown_game"),
        (ask_rematch(client, gid, None, None), 400, "missing_seat"),
        (ask_rematch(client, gid, 0, None), 403, "missing_token"),
        (ask_rematch(client, gid, 1, token), 403, "bad_token"),
        (ask_rematch(client, gid, 5, token), 400, "bad_seat"),
        (client.post(f"/api/games/{gid}/rematch", json={"seat": 0, "token": token, "x": 1}), 400, "bad_request"),
        (client.post(f"/api/games/{gid}/rematch", json=[0]), 400, "bad_request"),
        (client.post(f"/api/games/{gid}/rematch", content=b"{", headers={"content-type": "application/json"}),
         400, "bad_json"),
        (client.post(f"/api/games/{gid}/rematch", content=b"seat=0", headers={"content-type": "text/plain"}),
         415, "unsupported_media_type"),
        (ask_rematch(client, live["game_id"], 0, live["tokens"]["0"]), 409, "game_not_over"),
        (client.put(f"/api/games/{gid}/rematch", json={}), 405, "method_not_allowed"),
    ]  # fmt: skip
    for r, status, code in cases:
        assert (r.status_code, r.json()["error"]) == (status, code), r.text
        assert r.json()["message"]
    assert snapshot(client, gid)["rematch"] is None
    assert client.app.state.store.count_games() == {"over": 1, "active": 1}


def test_players_asking_for_a_rematch_at_once_open_one_game(client: TestClient) -> None:
    old = finished_game(client, TWO_HUMANS)
    gid, tokens = old["game_id"], old["tokens"]
    answers: list[Any] = []
    barrier = threading.Barrier(8)

    def send(seat: int) -> None:
        barrier.wait()
        answers.append(ask_rematch(client, gid, seat, tokens[str(seat)]))

    threads = [threading.Thread(target=send, args=(i % 2,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.status_code for r in answers) == [200] * 7 + [201]
    assert len({r.json()["game_id"] for r in answers}) == 1
    assert client.app.state.store.count_games() == {"over": 1, "active": 1}


def test_rematches_count_as_new_tables_for_the_rate_limit(db: Path) -> None:
    app = create_app(db, games_per_minute=1)
    alice, bob = TestClient(app, client=("10.0.0.1", 1000)), TestClient(app, client=("10.0.0.2", 1000))
    old = create(alice, TWO_HUMANS)  # Alice's one table this minute
    gid = old["game_id"]
    final = finished_game(alice, TWO_HUMANS)
    gid, tokens = final["game_id"], final["tokens"]
    r = ask_rematch(alice, gid, 0, tokens["0"])
    assert r.status_code == 429 and r.json()["error"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
    assert snapshot(alice, gid)["rematch"] is None
    opened = ask_rematch(bob, gid, 1, tokens["1"])  # Bob's address has its own budget
    assert opened.status_code == 201
    found = ask_rematch(alice, gid, 0, tokens["0"])  # joining the open rematch is no new table
    assert found.status_code == 200 and found.json()["game_id"] == opened.json()["game_id"]


def test_a_rematch_survives_a_restart_and_a_deleted_one_can_be_asked_again(db: Path) -> None:
    first = TestClient(create_app(db))
    old = finished_game(first, TWO_HUMANS)
    gid, tokens = old["game_id"], old["tokens"]
    rid = ask_rematch(first, gid, 0, tokens["0"]).json()["game_id"]
    second = restart(first, db)
    assert snapshot(second, gid)["rematch"] == {"game_id": rid, "seat_map": [1, 0]}
    again = ask_rematch(second, gid, 1, tokens["1"])
    assert again.status_code == 200 and again.json()["game_id"] == rid
    assert act(second, rid, 0, tokens["1"], 0, expect=0).status_code == 200  # Bob starts the rematch
    # an expired rematch is gone from the finished game, and a new one can be opened
    store: GameStore = second.app.state.store
    with sqlite3.connect(db) as con:
        con.execute("UPDATE games SET updated=0 WHERE id=?", (rid,))
    assert store.expire(active_before=1.0, over_before=None) == 1
    assert snapshot(second, gid)["rematch"] is None
    fresh = ask_rematch(second, gid, 1, tokens["1"])
    assert fresh.status_code == 201 and fresh.json()["game_id"] not in (gid, rid)


def test_a_rematch_refused_by_a_locked_database_is_a_503_and_stores_nothing(db: Path) -> None:
    client = TestClient(create_app(db, write_timeout=0.3))
    old = finished_game(client, TWO_HUMANS)
    gid, tokens = old["game_id"], old["tokens"]
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        r = ask_rematch(client, gid, 0, tokens["0"])
        assert r.status_code == 503 and r.json()["error"] == "storage_busy" and r.headers["retry-after"] == "1"
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert snapshot(client, gid)["rematch"] is None and client.app.state.store.count_games() == {"over": 1}
    assert ask_rematch(client, gid, 0, tokens["0"]).status_code == 201


def test_a_version_2_database_opens_and_its_finished_games_take_a_rematch(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite3"
    client = TestClient(create_app(path))
    old = finished_game(client, TWO_HUMANS)
    client.app.state.service.close()
    client.app.state.store.close()
    con = sqlite3.connect(path)  # as a version 2 server left it: no rematch column
    con.execute("ALTER TABLE games DROP COLUMN rematch")
    con.execute("PRAGMA user_version=2")
    con.commit()
    con.close()
    client = TestClient(create_app(path))
    assert snapshot(client, old["game_id"])["rematch"] is None
    assert ask_rematch(client, old["game_id"], 0, old["tokens"]["0"]).status_code == 201


def test_a_rematch_whose_bot_is_gone_is_a_clear_400_that_costs_no_table(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = TestClient(create_app(db, games_per_minute=1))
    old = finished_game(client, HUMAN_VS_RANDOM)
    gid, token = old["game_id"], old["tokens"]["0"]
    with monkeypatch.context() as patch:  # the server now offers another set of bots
        patch.setattr(BotShelf, "offered", staticmethod(lambda: ["greedy"]))
        r = ask_rematch(client, gid, 0, token)
    assert r.status_code == 400 and r.json()["error"] == "unknown_bot" and "'random'" in r.json()["message"]
    assert snapshot(client, gid)["rematch"] is None and client.app.state.store.count_games() == {"over": 1}
    assert ask_rematch(client, gid, 0, token).status_code == 201  # the refusal did not use up the limit
