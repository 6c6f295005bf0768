"""Every table size: the learned bot chosen per player count, a refused mismatch, and a 4-seat
table of learned bots played through the terminal pipe and the web API."""

from __future__ import annotations

import random

import pytest

from shelfie_env import bots
from shelfie_env.arena import play_game
from shelfie_env.game.engine import Game

from .test_cli import RESULT, _piped_game


@pytest.mark.parametrize("players", [2, 3, 4])
def test_td_plays_the_shipped_model_of_each_table_size(players: int) -> None:
    assert players in bots.table_sizes("td")
    bot = bots.make("td")  # one bot, seated at any table: the model of that size
    scores = play_game([bot] * players, seed=players)
    assert len(scores) == players
    model = bot.model_for(players)
    assert model.num_players == players
    assert model.card["preset"] == f"td_{players}p" and model.card["teacher"] == "none"
    sized = bots.make("td", num_players=players)
    assert sized.card["preset"] == f"td_{players}p"
    game = Game.new(players, rng=1)
    assert sized.act(game.to_dict()) in game.legal_actions()


@pytest.mark.parametrize(("players", "preset"), [(1, "ppo_solo"), (2, "ppo_2p")])
def test_ppo_plays_the_shipped_model_of_each_table_size(players: int, preset: str) -> None:
    bot = bots.make("ppo")
    play_game([bot] * players, seed=3)
    assert bot.model_for(players).card["preset"] == preset


def test_a_bot_that_cannot_play_the_table_is_refused_with_the_bots_that_can() -> None:
    with pytest.raises(ValueError, match=r"'ppo' plays 1- and 2-player games, not 4-player ones; bots for 4 players: .*td"):
        bots.check_table("ppo", 4)
    with pytest.raises(ValueError, match=r"'td' plays 2-, 3- and 4-player games, not 1-player ones"):
        bots.check_table("td", 1)
    bots.check_table("td", 4)
    with pytest.raises(FileNotFoundError, match="no shipped td model for 7-player games"):
        bots.make("td", num_players=7)


def test_table_errors_list_only_the_bots_a_table_takes() -> None:
    table = bots.table_bots()
    assert "clairvoyant" not in table and {"greedy", "greedy-br", "td"} <= set(table)
    with pytest.raises(ValueError, match=r"unknown bot 'foo'; bots for a table: greedy, ") as err:
        bots.check_table("foo", 2)
    assert "clairvoyant" not in str(err.value)
    with pytest.raises(ValueError, match=r"'clairvoyant' reads the dice ahead .*bots for a table: greedy,"):
        bots.check_table("clairvoyant", 2)
    with pytest.raises(ValueError, match=r"'greedy-br' plays 2-player games, not 3-player ones") as err:
        bots.check_table("greedy-br", 3)
    assert "clairvoyant" not in str(err.value)
    bots.check_table("clairvoyant", 2, tape=True)  # the arena deals from a tape
    with pytest.raises(ValueError, match=r"unknown bot 'foo'; available: clairvoyant, "):
        bots.check_table("foo", 2, tape=True)


@pytest.mark.parametrize("spec", ["foo", "clairvoyant"])
def test_play_and_serve_refuse_a_bot_listing_only_the_bots_they_take(spec: str, capsys, tmp_path) -> None:
    from shelfie_env.cli import main
    from shelfie_env.play.web.cli import main as serve

    assert main(["play", "--bot", spec]) == 2
    err = capsys.readouterr().err
    assert f"bot '{spec}' cannot play this table" in err and "clairvoyant," not in err
    # a directory as --db fails after the bots are read (exit 1): a bot taken by mistake starts no server
    argv = ["--no-browser", "--db", str(tmp_path)]
    assert serve([*argv, "--bot", f"mine={spec}"]) == 2
    err = capsys.readouterr().err
    assert f"--bot mine={spec}: " in err and "bots for a table: greedy, greedy-br, " in err
    assert "clairvoyant," not in err and "Traceback" not in err
    assert "mine" not in bots.available()


def test_a_piped_four_seat_game_with_learned_bots_in_three_seats() -> None:
    text = _piped_game("--players", "4", "--seat", "3", "--seed", "8")  # the default bot: td for 4
    for seat in (1, 2, 4):
        assert f"td (player {seat}) circled" in text
    assert "player 3 (you) circled" in text
    assert len(RESULT.findall(text)) == 1


def test_a_four_seat_web_table_with_learned_bots_in_three_seats(tmp_path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from shelfie_env.play.web.app import create_app

    from .test_web_api import create, play_out

    client = TestClient(create_app(tmp_path / "games.sqlite3"))
    try:
        meta = client.get("/api/meta").json()
        assert 4 in meta["bot_tables"]["td"] and 4 not in meta["bot_tables"]["ppo"]
        seats = [{"type": "bot", "bot": "td"}] * 2 + [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "td"}]
        view = create(client, {"seats": seats})
        final = play_out(client, view, view["tokens"], random.Random(4))
        moves = client.get(f"/api/games/{view['game_id']}").json()["moves"]
        assert final["over"] and {m["seat"] for m in moves} == {0, 1, 2, 3}
        assert not any("bot error" in m["name"] for m in moves)
        r = client.post("/api/games", json={"seats": [{"type": "human"}] + [{"type": "bot", "bot": "ppo"}] * 3})
        assert r.status_code == 400 and "4-player" in r.json()["message"] and "/" not in r.json()["message"]
    finally:
        client.app.state.store.close()


def test_the_web_guide_describes_every_bot_a_seat_offers() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "web.md").read_text(encoding="utf-8")
    for name in bots.table_bots():
        sizes = bots.table_sizes(name)
        seats = f"{sizes[0]}-{sizes[-1]}" if len(sizes) == 4 else ", ".join(map(str, sizes))
        assert f"| `{name}` | {seats} | " in text, name
    assert "| `clairvoyant` |" not in text
