"""People's ratings (shelfie_env.play.rated_games) in the games store: Glicko-2 against the levels
as fixed anchors and against other people, once per game, across a restart; and the store file
refused when it is not a database or a newer shelfie wrote it."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.arena.ladder import level_ratings
from shelfie_env.arena.person_rating import PersonRating, Result, update
from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import Game
from shelfie_env.play import rated_games
from shelfie_env.play.rated_games import (
    HINTS_USED,
    NO_IDENTITY,
    NO_RIVAL,
    SOLO,
    TWICE,
    rate_game,
    rate_unrated,
)
from shelfie_env.play.web import database
from shelfie_env.play.web.ratings_store import Standing
from shelfie_env.play.web.store import GameStore


def person(name: str, who: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "human", "name": name, "bot": None, "token_hash": None, "person": who or f"id-{name}", **extra}


def bot(spec: str) -> dict[str, Any]:
    return {"type": "bot", "name": f"{spec} bot", "bot": spec, "token_hash": None}


def finished(store: GameStore, seats: list[dict[str, Any]], seed: int = 1) -> tuple[str, list[int]]:
    """A game of ``seats`` played to its end by greedy in every seat, stored as finished; its id and scores."""
    game = Game.new(len(seats), rng=np.random.default_rng(seed))
    start, start_rng = game.to_dict(), game.rng.bit_generator.state
    player = bots.make("greedy")
    moves = []
    while not game.over:
        seat, action = game.current, player.act_game(game)
        game.step(action)
        moves.append((seat, action, action_name(action), game.to_dict()))
    game_id = secrets.token_urlsafe(12)
    store.add_finished_game(game_id, seats, (start, start_rng), moves, game.rng.bit_generator.state)
    return game_id, game.scores()


def score(scores: list[int], a: int, b: int) -> float:
    return 1.0 if scores[a] > scores[b] else 0.5 if scores[a] == scores[b] else 0.0


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = GameStore(tmp_path / "games.sqlite3")
    yield s
    s.close()


def test_a_game_against_a_level_rates_the_person_at_the_levels_anchor(store: GameStore) -> None:
    gid, scores = finished(store, [person("Ann"), bot("level-3")])
    outcome = rate_game(store, gid)
    rating, se = level_ratings(2)["level-3"]
    expected = update(PersonRating(), [Result(rating, se, score(scores, 0, 1))])
    assert outcome is not None and outcome[1] == {"seat": 1, "rated": False, "reason": rated_games.BOT}
    mine = outcome[0]
    assert mine["rated"] and mine["players"] == 2 and mine["games"] == 1
    assert mine["rating"] == pytest.approx(expected.rating, abs=0.06)
    assert mine["rd"] == pytest.approx(expected.rd, abs=0.06) and mine["rd"] < 350
    assert mine["change"] == pytest.approx(expected.rating - 1500, abs=0.06)
    [row] = store.rating_history("id-Ann")
    assert row["game_id"] == gid and row["rated"] and row["before"] == 1500 and row["scores"] == scores
    # the history gives the numbers the game's outcome gave, so both pages show one rounding of one number
    assert (row["after"], row["rd"], row["change"]) == (mine["rating"], mine["rd"], mine["change"])


def test_a_rating_survives_a_restart_and_a_game_is_never_rated_twice(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite3"
    store = GameStore(path)
    first, _ = finished(store, [person("Ann"), bot("level-2")], seed=3)
    second, _ = finished(store, [bot("level-4"), person("Ann")], seed=4)
    outcomes = [rate_game(store, first), rate_game(store, second)]
    standing = store.standings("id-Ann")[2]
    store.close()
    store = GameStore(path)  # a restart: the ratings are read back from the file
    try:
        assert store.standings("id-Ann")[2] == standing and standing.games == 2
        assert [rate_game(store, first), rate_game(store, second)] == outcomes  # the stored outcomes again
        assert store.standings("id-Ann")[2] == standing
        assert rate_unrated(store) == 0
        assert [g["game_id"] for g in store.rating_history("id-Ann")] == [second, first]
    finally:
        store.close()


def establish(store: GameStore, name: str, seed: int) -> Standing:
    """``name``'s 2-player rating once established by games against the levels (greedy plays every seat)."""
    for i in range(30):
        gid, _ = finished(store, [person(name), bot(f"level-{1 + i % 6}")], seed=seed + i)
        rate_game(store, gid)
        standing = store.standings(f"id-{name}")[2]
        if rated_games.established(standing):
            return standing
    raise AssertionError(f"{name} is not established after 30 games")


def as_rating(s: Standing) -> PersonRating:
    return PersonRating(s.rating, s.rd, s.volatility, s.games)


def test_two_people_are_each_rated_against_the_others_rating_before_the_game(store: GameStore) -> None:
    ann_before, bob_before = establish(store, "Ann", 100), establish(store, "Bob", 200)
    gid, scores = finished(store, [person("Bob"), person("Ann")], seed=6)
    outcome = rate_game(store, gid)
    assert outcome is not None
    bob = update(as_rating(bob_before), [Result(ann_before.rating, ann_before.rd, score(scores, 0, 1))])
    ann = update(as_rating(ann_before), [Result(bob_before.rating, bob_before.rd, score(scores, 1, 0))])
    assert outcome[0]["rating"] == pytest.approx(bob.rating, abs=0.06)
    assert outcome[1]["rating"] == pytest.approx(ann.rating, abs=0.06)
    assert outcome[1]["games"] == ann_before.games + 1


def test_a_person_who_is_not_established_moves_no_rating(store: GameStore) -> None:
    ann_before = establish(store, "Ann", 300)
    for i in range(40):  # forty games over throw-away keys, each played to its end
        gid, _ = finished(store, [person("Ann"), person(f"fresh{i}")], seed=400 + i)
        outcome = rate_game(store, gid)
        assert outcome is not None and outcome[0] == {"seat": 0, "rated": False, "reason": rated_games.NOT_ESTABLISHED}
        assert outcome[1]["rated"]  # the fresh key is rated against Ann, who is established
    assert store.standings("id-Ann")[2] == ann_before
    assert "10 rated games" in rated_games.NOT_ESTABLISHED and "110" in rated_games.NOT_ESTABLISHED
    # beside a level, the person who is not established is left out and the level still counts
    gid, scores = finished(store, [person("Ann"), person("fresh0"), bot("level-3")], seed=500)
    mine = rate_game(store, gid)[0]  # type: ignore[index]
    three = store.standings("id-Ann")[3]
    rating, se = level_ratings(3)["level-3"]
    assert mine["rated"] and three.games == 1
    assert three.rating == pytest.approx(update(PersonRating(), [Result(rating, se, score(scores, 0, 2))]).rating)


def test_an_early_resignation_against_a_person_is_aborted_for_both(store: GameStore) -> None:
    ann_before, bob_before = establish(store, "Ann", 600), establish(store, "Bob", 700)
    for moves_before_resigning, aborted in ((0, True), (2, True), (3, False)):
        gid = resigned_game(store, [person("Ann"), person("Bob")], seat=1, after=moves_before_resigning)
        outcome = rate_game(store, gid)
        assert outcome is not None
        if aborted:
            assert [o["reason"] for o in outcome] == [rated_games.ABORTED] * 2
            assert store.standings("id-Ann")[2] == ann_before and store.standings("id-Bob")[2] == bob_before
        else:
            assert outcome[0]["rated"] and outcome[0]["change"] > 0 and outcome[1]["change"] < 0
    # against levels alone an early resignation is a loss (the level waits for nobody)
    gid = resigned_game(store, [person("Cy"), bot("level-4")], seat=0, after=0)
    assert rate_game(store, gid)[0]["rated"]  # type: ignore[index]


def resigned_game(store: GameStore, seats: list[dict[str, Any]], seat: int, after: int, seed: int = 1) -> str:
    """A game where ``seat`` resigned once it had made ``after`` moves (greedy plays every seat)."""
    game = Game.new(len(seats), rng=np.random.default_rng(seed))
    start, start_rng = game.to_dict(), game.rng.bit_generator.state
    player, moves, made = bots.make("greedy"), [], 0
    while made < after or game.current != seat:
        mover, action = game.current, player.act_game(game)
        game.step(action)
        moves.append((mover, action, action_name(action), game.to_dict()))
        made += mover == seat
        if made >= after and mover == seat:
            break
    game_id = secrets.token_urlsafe(12)
    stored = [{**s, "resigned": True} if i == seat else s for i, s in enumerate(seats)]
    store.add_finished_game(game_id, stored, (start, start_rng), moves, game.rng.bit_generator.state)
    assert store.seat_decisions(game_id).get(seat, 0) == after
    return game_id


def test_the_levels_are_never_updated_and_other_bots_do_not_count(store: GameStore) -> None:
    gid, scores = finished(store, [person("Ann"), bot("greedy"), bot("level-1")], seed=7)
    outcome = rate_game(store, gid)
    rating, se = level_ratings(3)["level-1"]
    expected = update(PersonRating(), [Result(rating, se, score(scores, 0, 2))])  # greedy is not a rival
    assert outcome is not None and outcome[0]["rating"] == pytest.approx(expected.rating, abs=0.06)
    assert store.standings("level-1") == {} and store.standings("greedy") == {}
    assert level_ratings(3)["level-1"] == (rating, se)


@pytest.mark.parametrize(
    ("seats", "reason"),
    [
        ([person("Ann", hinted=True), bot("level-3")], HINTS_USED),
        ([person("Ann"), bot("greedy")], NO_RIVAL),
        ([person("Ann")], SOLO),
        ([person("Ann", "same"), person("Bob", "same"), bot("level-3")], TWICE),
    ],
    ids=["hints", "no-rated-rival", "solo", "same-person-twice"],
)
def test_unrated_games_say_why_and_change_no_rating(store: GameStore, seats: list[dict[str, Any]], reason: str) -> None:
    gid, _ = finished(store, seats, seed=8)
    outcome = rate_game(store, gid)
    assert outcome is not None and outcome[0] == {"seat": 0, "rated": False, "reason": reason}
    who = seats[0]["person"]
    assert store.standings(who) == {}
    [row] = store.rating_history(who, limit=1)
    assert not row["rated"] and row["reason"] == reason and row["change"] is None


def test_a_person_who_used_hints_is_unrated_and_their_rival_is_rated(store: GameStore) -> None:
    establish(store, "Ann", 800)  # a rival counts once established
    gid, _ = finished(store, [person("Ann", hinted=True), person("Bob")], seed=9)
    outcome = rate_game(store, gid)
    assert outcome is not None and outcome[0]["reason"] == HINTS_USED and outcome[1]["rated"]
    stored = {k: v for k, v in person("Cy").items() if k != "person"}
    gid, _ = finished(store, [stored, bot("level-3")], seed=10)
    assert rate_game(store, gid)[0] == {"seat": 0, "rated": False, "reason": NO_IDENTITY}  # type: ignore[index]


def test_a_seat_that_resigned_is_behind_everyone() -> None:
    assert rated_games.ranking_scores([40, 12, 55], resigned=0) == [-1, 12, 55]
    assert rated_games.ranking_scores([40, 12], resigned=None) == [40, 12]


# ----------------------------------------------------------------------------- the store file
def test_a_version_3_file_gains_the_rating_tables_and_its_old_games_stay_unrated(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite3"
    store = GameStore(path)
    old, _ = finished(store, [person("Ann"), bot("level-3")], seed=11)
    store.close()
    con = sqlite3.connect(path)  # as a version 3 server left it: no rating tables
    for table in ("ratings", "rating_history", "rated_games"):
        con.execute(f"DROP TABLE {table}")
    con.execute("PRAGMA user_version=3")
    con.commit()
    con.close()
    store = GameStore(path)
    try:
        assert store.game_outcome(old) is None  # finished before ratings were kept: never rated
        assert rate_game(store, old) is None and rate_unrated(store) == 0 and store.standings("id-Ann") == {}
        new, _ = finished(store, [person("Ann"), bot("level-3")], seed=12)
        assert rate_game(store, new)[0]["rated"]  # type: ignore[index]
    finally:
        store.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == database.SCHEMA_VERSION == 4


def test_a_file_that_is_not_a_database_is_refused_in_one_line_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_bytes(b"my shopping list\n" * 100)
    with pytest.raises(database.DamagedDatabaseError) as exc:
        GameStore(path)
    assert "\n" not in str(exc.value) and "not a database" in str(exc.value)
    assert path.read_bytes() == b"my shopping list\n" * 100


def test_a_file_of_a_newer_schema_is_refused_in_one_line_and_its_games_are_untouched(tmp_path: Path) -> None:
    path = tmp_path / "newer.sqlite3"
    store = GameStore(path)
    gid, _ = finished(store, [person("Ann"), bot("level-3")], seed=13)
    store.close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version=99")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(RuntimeError) as exc:
        GameStore(path)
    assert "\n" not in str(exc.value) and "schema version 99" in str(exc.value)
    assert path.read_bytes() == before
    con = sqlite3.connect(path)
    assert con.execute("SELECT status FROM games WHERE id=?", (gid,)).fetchone() == ("over",)
    con.close()
