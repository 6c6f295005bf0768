"""Errors of the ``shelfie`` subcommands share argparse's form, ``shelfie CMD: error: ...``, and
an unknown option is reported under its own subcommand's usage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shelfie_env import cli
from shelfie_env.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, prog, unknown",
    [
        (["play", "--nme", "Bob"], "shelfie play", "--nme Bob"),
        (["play", "--seed", "1", "extra"], "shelfie play", "extra"),
        (["arena", "greedy", "random", "--gmaes", "4"], "shelfie arena", "--gmaes 4"),
    ],
)
def test_an_unknown_option_gets_its_subcommands_usage(
    argv: list[str], prog: str, unknown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _usage_error(argv, capsys)
    assert err.startswith(f"usage: {prog} [-h]")
    assert err.endswith(f"\n{prog}: error: unrecognized arguments: {unknown}\n")


def test_an_unknown_replay_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps({"version": 1}))
    err = _usage_error(["replay", str(path), "--every", "--fast"], capsys)  # --every: --every-move
    assert err.startswith("usage: shelfie replay [-h]")
    assert err.endswith("\nshelfie replay: error: unrecognized arguments: --fast\n")


@pytest.mark.parametrize(
    "argv, line",
    [
        (["play", "--seat", "3", "--bot", "greedy"], "shelfie play: error: --seat must be 1-2, got 3"),
        (
            ["play", "--players", "3", "--opponents", "greedy"],
            "shelfie play: error: --players 3 does not match 1 opponents (+ you = 2)",
        ),
        (
            ["play", "--bot", "nosuchbot"],
            "shelfie play: error: --bot: bot 'nosuchbot' cannot play this table: ",
        ),
        (["arena", "nosuchbot", "greedy", "--games", "2"], "shelfie arena: error: unknown bot 'nosuchbot'"),
        (["eval"], "shelfie eval: error: give at least one bot (or --plot RUN)"),
    ],
)
def test_errors_after_parsing_name_their_subcommand(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1


def test_a_missing_subcommand_module_is_an_error_of_that_subcommand(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(cli.LAZY_COMMANDS, "train", ("shelfie_env.train.no_such_module", "train", "train"))
    assert main(["train", "--steps", "10"]) == 2
    assert capsys.readouterr().err == (
        "shelfie train: error: not available in this installation (no module shelfie_env.train.no_such_module)\n"
    )


def test_the_installed_command_reports_as_the_subcommand() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shelfie_env.cli", "play", "--nme", "Bob"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: shelfie play [-h]")
    assert done.stderr.rstrip().splitlines()[-1] == "shelfie play: error: unrecognized arguments: --nme Bob"
