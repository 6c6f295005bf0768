"""Ratings a person can trust, tried as a hostile player would through the web table's API: the
creator of a table acting with the invite token of a seat its person joined, a rematch opened
for someone else, a rated game left to dodge a loss, an early resignation, and wins farmed over
throw-away person keys."""

from __future__ import annotations

import sqlite3
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient

from shelfie_env.arena.ladder import level_ratings
from shelfie_env.arena.person_rating import PersonRating, Result, update
from shelfie_env.play import rated_games
from shelfie_env.play.web import moves as moves_module
from shelfie_env.play.web.app import create_app
from shelfie_env.play.web.botturns import BotTurns
from shelfie_env.play.web.ratings_store import person_id
from shelfie_env.play.web.store import GameStore
from tests.test_people_ratings import finished
from tests.test_web_api import create, settle

ANN, BOB, EVE = "ann-key-0123456789abcdef", "bob-key-0123456789abcdef", "eve-key-0123456789abcdef"


@pytest.fixture(autouse=True)
def unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BotTurns, "bots_only_pace_s", 0.0)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite3"


@pytest.fixture
def client(db: Path) -> TestClient:
    return TestClient(create_app(db, preload=False, games_per_minute=0, inactive_hours=1))


def post(client: TestClient, gid: str, what: str, **body: Any) -> Any:
    return client.post(f"/api/games/{gid}/{what}", json=body)


def move(client: TestClient, view: dict[str, Any], seat: int, **cred: Any) -> Any:
    """The first legal move of the view's position for ``seat``, sent with ``cred`` (token, person)."""
    return post(client, view["game_id"], "actions", seat=seat, action=view["legal"][0]["action"],
                expect=view["num_moves"], **cred)


def play_until(client: TestClient, view: dict[str, Any], seat: int, creds: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Play first legal moves for the people (their ``creds``) until ``seat`` is on turn."""
    while view["state"]["current_player"] != seat:
        current = view["state"]["current_player"]
        if view["seats"][current]["type"] == "bot":
            view = settle(client, view)
            continue
        r = move(client, view, current, **creds[current])
        assert r.status_code == 200, r.text
        view = r.json()
    return view


def stored_seats(client: TestClient, gid: str) -> list[dict[str, Any]]:
    row = client.app.state.store.get_game(gid)
    assert row is not None
    return row.seats


def ann_and_bob(client: TestClient, extra: list[dict[str, Any]] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """A table Ann opened with her key, Bob's seat joined by Bob through his invite link."""
    seats = [{"type": "human", "name": "Ann", "person": ANN}, {"type": "human", "name": "Bob"}, *(extra or [])]
    view = create(client, {"seats": seats})
    tokens = view["tokens"]
    joined = post(client, view["game_id"], "join", seat=1, token=tokens["1"], person=BOB)
    assert joined.json() == {"seat": 1, "joined": True}
    return view, tokens


def test_the_creator_cannot_act_for_a_seat_its_person_joined(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(moves_module, "hint_function", lambda: lambda state, k=3: [])
    view, tokens = ann_and_bob(client)
    gid = view["game_id"]
    view = play_until(client, view, 1, {0: {"token": tokens["0"]}})
    invite = {"token": tokens["1"]}  # what the creator still holds
    for cred, code in ((invite, "missing_person"), ({**invite, "person": ANN}, "other_person"),
                       ({**invite, "person": EVE}, "other_person")):
        for r in (move(client, view, 1, **cred), post(client, gid, "hint", seat=1, **cred),
                  post(client, gid, "resign", seat=1, **cred)):
            assert (r.status_code, r.json()["error"]) == (403, code), r.text
    after = client.get(f"/api/games/{gid}?since=0").json()
    assert not after["over"] and after["num_moves"] == view["num_moves"]
    assert not any(s.get("hinted") or s.get("resigned") for s in stored_seats(client, gid))  # nothing stored
    # Bob plays his seat with his key alone; a malformed key is one clear 400
    assert post(client, gid, "hint", seat=1, person=BOB).status_code == 200
    r = move(client, view, 1, person="short")
    assert (r.status_code, r.json()["error"]) == (400, "bad_person")
    assert move(client, view, 1, person=BOB).status_code == 200
    # the invite token still proves the link for Bob's own page, and changes nothing for anyone else
    assert post(client, gid, "join", seat=1, token=tokens["1"], person=BOB).json() == {"seat": 1, "joined": False}
    r = post(client, gid, "join", seat=1, token=tokens["1"], person=EVE)
    assert (r.status_code, r.json()["error"]) == (409, "seat_taken")


def test_the_openers_own_seat_keeps_its_token_and_the_invited_seats_do_not(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ann"}, {"type": "human", "name": "Bob"}]})
    gid, tokens = view["game_id"], view["tokens"]
    for seat, key in ((0, ANN), (1, BOB)):  # each page joins the seat of its link
        assert post(client, gid, "join", seat=seat, token=tokens[str(seat)], person=key).json()["joined"]
    assert move(client, view, 0, token=tokens["0"]).status_code == 200  # the opener's token was given to nobody else
    seats = stored_seats(client, gid)
    assert seats[0]["person"] == person_id(ANN) and not seats[0].get("key_only")
    assert seats[1]["person"] == person_id(BOB) and seats[1]["key_only"]
    assert post(client, gid, "resign", seat=1, token=tokens["1"]).status_code == 403


def test_a_seat_is_joined_before_its_first_move(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN}, {"type": "human", "name": "Bob"}]})
    tokens = view["tokens"]
    view = play_until(client, view, 1, {0: {"token": tokens["0"]}})
    assert move(client, view, 1, token=tokens["1"]).status_code == 200  # the creator plays Bob's seat first
    r = post(client, view["game_id"], "join", seat=1, token=tokens["1"], person=BOB)
    assert (r.status_code, r.json()["error"]) == (409, "seat_played") and "first move" in r.json()["message"]
    assert stored_seats(client, view["game_id"])[1].get("person") is None


def test_a_rematch_carries_a_person_only_when_they_open_or_ask_for_it(client: TestClient) -> None:
    view, tokens = ann_and_bob(client)
    gid = view["game_id"]
    view = play_until(client, view, 1, {0: {"token": tokens["0"]}})
    assert move(client, view, 1, person=BOB).status_code == 200
    assert post(client, gid, "resign", seat=0, token=tokens["0"]).json()["over"]
    # the creator cannot open Bob's rematch with his invite token, nor with a key of their own
    for cred in ({"token": tokens["1"]}, {"token": tokens["1"], "person": EVE}):
        r = post(client, gid, "rematch", seat=1, **cred)
        assert r.status_code == 403 and r.json()["error"] in ("missing_person", "other_person"), r.text
    assert client.get(f"/api/games/{gid}/rematch").json()["rematch"] is None
    # Ann opens it: her seat carries her, Bob's is kept for him and carries nobody
    opened = post(client, gid, "rematch", seat=0, token=tokens["0"])
    assert opened.status_code == 201
    rid = opened.json()["game_id"]  # Bob (old seat 1) starts at seat 0, Ann at seat 1
    seats = stored_seats(client, rid)
    assert seats[1]["person"] == person_id(ANN) and seats[0].get("person") is None and seats[0]["key_only"]
    first = client.get(f"/api/games/{rid}").json()
    for cred in ({"token": tokens["1"]}, {"token": tokens["1"], "person": ANN}, {"token": tokens["1"], "person": EVE}):
        assert move(client, first, 0, **cred).status_code == 403
        assert post(client, rid, "resign", seat=0, **cred).status_code == 403
    r = post(client, rid, "join", seat=0, token=tokens["1"], person=EVE)
    assert (r.status_code, r.json()["error"]) == (409, "seat_taken")
    # the invite token finds the open rematch (a second tab of Bob's page) but takes no seat there
    found = post(client, gid, "rematch", seat=1, token=tokens["1"])
    assert found.status_code == 200 and found.json()["game_id"] == rid
    assert stored_seats(client, rid)[0].get("person") is None
    # Ann resigns the rematch: Bob, who never came, is rated in nothing
    assert post(client, rid, "resign", seat=1, token=tokens["0"]).json()["over"]
    bob = client.post("/api/person", json={"person": BOB}).json()
    assert rid not in [g["game_id"] for g in bob["games"]]


def test_the_player_who_asks_for_an_open_rematch_takes_their_seat_there(client: TestClient) -> None:
    view, tokens = ann_and_bob(client)
    gid = view["game_id"]
    assert post(client, gid, "resign", seat=0, token=tokens["0"]).json()["over"]
    rid = post(client, gid, "rematch", seat=0, token=tokens["0"]).json()["game_id"]
    asked = post(client, gid, "rematch", seat=1, token=tokens["1"], person=BOB)
    assert asked.status_code == 200 and asked.json()["game_id"] == rid
    assert stored_seats(client, rid)[0]["person"] == person_id(BOB)
    first = client.get(f"/api/games/{rid}").json()
    assert move(client, first, 0, token=tokens["1"]).status_code == 403  # his seat answers to his key
    assert move(client, first, 0, person=BOB).status_code == 200


def decided(client: TestClient, view: dict[str, Any], seat: int, creds: dict[int, dict[str, Any]], n: int) -> dict[str, Any]:
    """Play first legal moves (bots in the background) until ``seat`` has made ``n`` moves and is on turn."""
    while True:
        view = play_until(client, view, seat, creds)
        if sum(m["seat"] == seat for m in client.get(f"/api/games/{view['game_id']}?since=0").json()["moves"]) >= n:
            return view
        view = move(client, view, seat, **creds[seat]).json()


def test_a_hint_cannot_take_a_game_under_way_out_of_the_rating(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(moves_module, "hint_function", lambda: lambda state, k=3: [])
    view = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN}, {"type": "bot", "bot": "level-6"}]})
    gid, creds = view["game_id"], {0: {"token": view["tokens"]["0"]}}
    view = decided(client, view, 0, creds, rated_games.ABORT_DECISIONS)
    r = post(client, gid, "hint", seat=0, **creds[0])
    assert (r.status_code, r.json()["error"]) == (409, "rated_game") and "3rd decision" in r.json()["message"]
    assert not stored_seats(client, gid)[0].get("hinted")  # the game still counts
    # where no rating is at stake (a rival who is not established, no level) hints are given as before
    view = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN},
                                     {"type": "human", "name": "Fresh", "person": EVE}]})
    creds = {0: {"token": view["tokens"]["0"]}, 1: {"token": view["tokens"]["1"]}}
    view = decided(client, view, 0, creds, rated_games.ABORT_DECISIONS)
    assert post(client, view["game_id"], "hint", seat=0, **creds[0]).status_code == 200


def leave_for(client: TestClient, gid: str, seconds: float) -> None:
    """Make game ``gid``'s last move ``seconds`` older in the database, as if its players had left."""
    with sqlite3.connect(client.app.state.store.path) as con:
        con.execute("UPDATE games SET updated=updated-? WHERE id=?", (seconds, gid))


def test_a_rated_game_left_is_lost_at_the_inactivity_limit(client: TestClient) -> None:
    view = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN}, {"type": "bot", "bot": "level-6"}]})
    gid, token = view["game_id"], view["tokens"]["0"]
    view = play_until(client, move(client, view, 0, token=token).json(), 0, {0: {"token": token}})
    left = view["inactivity"]
    assert left["limit_s"] == 3600 and left["seat"] == 0 and left["abort_decisions"] == rated_games.ABORT_DECISIONS
    assert left["move_by"] == pytest.approx(time.time() + 3600, abs=60)
    assert client.get("/api/meta").json()["rating_rules"]["inactive_s"] == 3600
    assert client.post("/api/person", json={"person": ANN}).json()["rules"] == {
        "inactive_s": 3600, "abort_decisions": 3, "established_games": 10, "established_rd": 110.0}
    service = client.app.state.service
    leave_for(client, gid, 1800)
    service.housekeeping(None, None)
    assert not client.get(f"/api/games/{gid}").json()["over"]  # within the limit: it waits
    leave_for(client, gid, 1900)
    service.housekeeping(None, None)
    final = client.get(f"/api/games/{gid}?since=0").json()
    assert final["over"] and final["resigned"] == 0 and final["left"] and final["inactivity"] is None
    rating, se = level_ratings(2)["level-6"]
    mine = final["ratings"][0]
    assert mine["rated"] and mine["rating"] == pytest.approx(update(PersonRating(), [Result(rating, se, 0.0)]).rating,
                                                             abs=0.06)
    report = client.post("/api/person", json={"person": ANN}).json()
    assert report["ratings"]["2"]["games"] == 1 and report["games"][0]["game_id"] == gid


def test_games_left_against_a_level_count_as_losses_however_many(client: TestClient) -> None:
    service, games = client.app.state.service, []
    for _ in range(4):  # a losing game quit by closing the tab, four times
        view = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN},
                                         {"type": "bot", "bot": "level-6"}]})
        assert move(client, view, 0, token=view["tokens"]["0"]).status_code == 200
        games.append(view["game_id"])
        leave_for(client, view["game_id"], 4000)
    service.housekeeping(None, None)
    report = client.post("/api/person", json={"person": ANN}).json()
    assert report["ratings"]["2"]["games"] == 4 and report["ratings"]["2"]["rating"] < 1300
    assert sorted(g["game_id"] for g in report["games"]) == sorted(games)


def test_a_game_left_before_the_first_decisions_is_aborted_for_both(client: TestClient) -> None:
    view, tokens = ann_and_bob(client, [{"type": "bot", "bot": "level-3"}])
    gid = view["game_id"]
    view = play_until(client, view, 1, {0: {"token": tokens["0"]}})  # Bob joined, then never moved
    leave_for(client, gid, 4000)
    client.app.state.service.housekeeping(None, None)
    final = client.get(f"/api/games/{gid}?since=0").json()
    assert final["over"] and final["resigned"] == 1 and final["left"]
    assert [o.get("reason") for o in final["ratings"]] == [rated_games.ABORTED, rated_games.ABORTED, "a bot"]
    for key in (ANN, BOB):
        report = client.post("/api/person", json={"person": key}).json()
        assert report["ratings"] == {} and report["games"][0]["reason"] == rated_games.ABORTED
    # a resignation before the third decision is aborted just the same
    view, tokens = ann_and_bob(client)
    view = play_until(client, view, 1, {0: {"token": tokens["0"]}})
    ended = post(client, view["game_id"], "resign", seat=1, person=BOB).json()
    assert [o["reason"] for o in ended["ratings"]] == [rated_games.ABORTED] * 2


def test_a_rated_game_past_its_expiry_is_ended_never_deleted(db: Path) -> None:
    client = TestClient(create_app(db, preload=False, expire_days=30, inactive_hours=None))
    rated = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN}, {"type": "bot", "bot": "level-2"}]})
    unrated = create(client, {"seats": [{"type": "human", "name": "Ann", "person": ANN}, {"type": "bot", "bot": "td"}]})
    assert rated["inactivity"]["limit_s"] == 30 * 86400 and unrated["inactivity"] is None
    for view in (rated, unrated):
        leave_for(client, view["game_id"], 40 * 86400)
    client.app.state.service.housekeeping(30 * 86400, None)
    final = client.get(f"/api/games/{rated['game_id']}").json()
    assert final["over"] and final["left"] and final["ratings"][0]["rated"]
    assert client.app.state.store.get_game(unrated["game_id"]) is None  # no rating at stake: deleted


def establish(store: GameStore, key: str) -> dict[str, Any]:
    """Rate ``key``'s person in finished games against the levels until established; their 2-player standing."""
    who = person_id(key)
    seat = {"type": "human", "name": "Ann", "bot": None, "token_hash": None, "person": who}
    for i in range(30):
        gid, _ = finished(store, [seat, {"type": "bot", "name": "lv", "bot": f"level-{1 + i % 6}", "token_hash": None}],
                          seed=900 + i)
        rated_games.rate_game(store, gid)
        if rated_games.established(store.standings(who)[2]):
            return store.standings(who)[2].__dict__
    raise AssertionError("not established after 30 games")


def test_forty_wins_over_fresh_keys_leave_the_rating_where_it_was(client: TestClient) -> None:
    before = establish(client.app.state.store, ANN)
    for i in range(40):
        fresh = f"fresh-key-{i:04d}-0123456789"
        view = create(client, {"seats": [{"type": "human", "name": "Throwaway", "person": fresh},
                                         {"type": "human", "name": "Ann", "person": ANN}]})
        creds = {0: {"token": view["tokens"]["0"]}, 1: {"token": view["tokens"]["1"]}}
        made = 0
        while i % 2 and made < rated_games.ABORT_DECISIONS:  # half resign at once, half after three decisions
            view = play_until(client, view, 0, creds)
            view = move(client, view, 0, **creds[0]).json()
            made += 1
        ended = post(client, view["game_id"], "resign", seat=0, **creds[0]).json()
        reason = rated_games.ABORTED if i % 2 == 0 else rated_games.NOT_ESTABLISHED
        assert ended["ratings"][1] == {"seat": 1, "rated": False, "reason": reason}
    report = client.post("/api/person", json={"person": ANN}).json()
    assert report["ratings"]["2"]["games"] == before["games"]
    assert report["ratings"]["2"]["rating"] == pytest.approx(before["rating"], abs=0.06)


def test_serve_takes_the_inactivity_limit_and_the_sweep_keeps_up_with_it(tmp_path: Path) -> None:
    import argparse

    from shelfie_env.play.web import cli
    from shelfie_env.play.web.housekeeping import HOUSEKEEPING_S, Expiry

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    assert parser.parse_args([]).inactive_hours == 24
    for given, limit in (("0.5", 1800.0), ("0", 30 * 86400.0)):  # 0: only when the game would expire
        args = parser.parse_args(["--inactive-hours", given, "--db", str(tmp_path / f"{given}.sqlite3")])
        app = cli._open_app(args)
        try:
            assert app.state.service.rating_rules()["inactive_s"] == limit
        finally:
            app.state.service.close()
            app.state.store.close()
    assert Expiry(inactive_s=60).left_s == 60 and Expiry(active_s=50, inactive_s=60).left_s == 50
    assert Expiry().left_s is None
    store = GameStore(":memory:")
    try:
        from shelfie_env.play.web.service import GameService

        quick = GameService(store, expiry=Expiry(inactive_s=60)).housekeeper
        assert quick.every_s == 6.0 and GameService(store).housekeeper.every_s == HOUSEKEEPING_S
    finally:
        store.close()
