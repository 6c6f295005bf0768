"""``shelfie play`` / ``shelfie replay`` options: the default opponent, errors naming their
option (never a traceback), and seats of bots that play a model file."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from shelfie_env import cli
from shelfie_env.bots.learned.card import models_dir
from shelfie_env.cli import main
from shelfie_env.play import replay, terminal
from shelfie_env.play.labels import bot_label


def _play(*args: str, lines: str = "quit\n") -> str:
    out = io.StringIO()
    assert terminal.run_play(cli.build_parser().parse_args(["play", *args]), io.StringIO(lines), out) == 0
    return out.getvalue()


# ----------------------------------------------------------------------------- the default opponent
def test_help_names_td_as_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: td, the shipped self-taught bot for the table's size)" in text
    assert "ppo if shipped" not in text and "else greedy" not in text


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_table_size_plays_td_by_default(players: int) -> None:
    text = _play("--players", str(players), "--seed", "1")
    for seat in range(2, players + 1):
        assert f"td (player {seat})" in text
    assert "greedy" not in text


# ----------------------------------------------------------------------------- errors name their option
BAD = [
    (["play", "--seed", "-1"], "argument --seed: must be 0 or more"),
    (["play", "--seed", "x"], "argument --seed: expected a whole number 0 or more"),
    (["play", "--seed", "1.5"], "argument --seed: expected a whole number"),
    (["play", "--players", "0"], "argument --players: must be 1 to 4"),
    (["play", "--players", "5"], "argument --players: must be 1 to 4"),
    (["play", "--players", "two"], "argument --players: expected a whole number 1 to 4"),
    (["play", "--seat", "0"], "argument --seat: must be 1 to 4"),
    (["play", "--seat", "-2"], "argument --seat: must be 1 to 4"),
    (["play", "--name", "  "], "argument --name: give a name"),
    (["play", "--name", "x" * 40], "argument --name: at most 24 characters, got 40"),
    (["play", "--name", "a\x1b[31mb"], "argument --name: 'a\\x1b[31mb' holds control characters"),
    (["play", "--opponents", " , "], "argument --opponents: give at least one bot name"),
    (["play", "--bot", ""], "argument --bot: '' names no bot"),
    (["play", "--bot", "ppo:path="], "argument --bot: 'ppo:path=': options are key=value, got 'path='"),
    (["play", "--opponent", ":x=1"], "argument --opponent: ':x=1' names no bot"),
    (["play", "--replay", "no/such/file.json"], "argument --replay: no such file: no/such/file.json"),
    (["replay", "no/such/file.json"], "argument FILE: no such file: no/such/file.json"),
    (["replay", "."], "argument FILE: . is not a file"),
]


@pytest.mark.parametrize(("argv", "message"), BAD, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_bad_arguments_name_their_option(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--seat", "3"], "--seat must be 1-2, got 3"),
        (["play", "--bot", "nosuchbot"], "--bot: bot 'nosuchbot' cannot play this table: unknown bot"),
        (["play", "--opponents", "greedy,nosuchbot"], "--opponents: bot 'nosuchbot'"),
        (["play", "--opponent", "planner:thret=1"], "--opponent: bot 'planner:thret=1'"),
        (["play", "--players", "3", "--bot", "ppo"], "--bot: bot 'ppo' cannot play this table"),
    ],
)
def test_setup_errors_name_their_option(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_run_play_refuses_a_negative_seed_given_from_code(capsys: pytest.CaptureFixture[str]) -> None:
    args = cli.build_parser().parse_args(["play", "--opponents", "greedy"])
    args.seed = -1
    assert terminal.run_play(args, io.StringIO(""), io.StringIO()) == 2
    assert "--seed must be 0 or more, got -1" in capsys.readouterr().err


def test_good_values_pass() -> None:
    args = cli.build_parser().parse_args(["play", "--players", " 3 ", "--seat", "2", "--seed", "0", "--name", " Ann  Lee "])
    assert (args.players, args.seat, args.seed, args.name) == (3, 2, 0, "Ann Lee")


# ----------------------------------------------------------------------------- labels of model bots
def _own_model(tmp_path: Path, stem: str, card_name: str | None = None) -> Path:
    target = tmp_path / "runs" / "x" / f"{stem}.npz"
    target.parent.mkdir(parents=True)
    shutil.copy(models_dir() / "ppo_2p.npz", target)
    card = json.loads((models_dir() / "ppo_2p.json").read_text())
    if card_name is not None:
        card["name"] = card_name
    target.with_suffix(".json").write_text(json.dumps(card))
    return target


def test_bot_labels() -> None:
    assert bot_label("ppo:path=runs/x/mine.npz") == "mine (ppo)"
    assert bot_label("td:path=C:\\models\\best.zip,num_players=2") == "best (td)"
    assert bot_label("greedy") == "greedy"
    assert bot_label("planner:threat=0.4") == "planner:threat=0.4"


def test_a_model_bot_sits_under_its_file_stem_or_card_name(tmp_path: Path) -> None:
    path = _own_model(tmp_path, "mine")
    text = _play("--bot", f"ppo:path={path}", "--seed", "2")
    assert "mine (ppo) (player 2)" in text and "path=" not in text
    named = _own_model(tmp_path / "b", "mine", card_name="  Mine   v2 ")
    assert "Mine v2 (ppo) (player 2)" in _play("--opponent", f"ppo:path={named}", "--seed", "2")


def test_replays_label_model_bots_the_same_way(tmp_path: Path) -> None:
    seats = [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "ppo:path=runs/x/mine.npz"},
             {"type": "bot", "bot": "ppo:path=runs/x/mine.npz", "name": "ppo:path=runs/x/mine.npz bot"},
             {"type": "bot", "bot": "greedy"}]
    assert replay.seat_names({"seats": seats}, 4) == [
        "Ann", "mine (ppo) (player 2)", "mine (ppo) (player 3)", "greedy bot"
    ]
