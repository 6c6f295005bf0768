"""Replay files: ``shelfie play --save`` writes one that ``shelfie replay`` shows and reviews;
what ``shelfie replay`` refuses, and with which message."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from shelfie_env import cli
from shelfie_env.cli import main
from shelfie_env.game.engine import Game
from shelfie_env.game.render import result_line
from shelfie_env.play import terminal
from shelfie_env.play.command_line import shelfie_command


@pytest.mark.parametrize(
    "content",
    [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", b"\xff\xfe{\x00}\x00", bytes(range(256))],
    ids=["png", "utf16", "bytes"],
)
def test_a_binary_file_is_refused_in_one_line(
    content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "picture.json"
    path.write_bytes(content)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"shelfie replay: error: cannot read replay {path}: it is not a text file (a replay is UTF-8 JSON)\n"
    )


def test_nesting_too_deep_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    assert main(["replay", str(path)]) == 2
    assert (
        capsys.readouterr().err
        == f"shelfie replay: error: cannot read replay {path}: its JSON is nested too deeply\n"
    )


def test_play_replay_reports_as_shelfie_play(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"\x00\xff")
    assert main(["play", "--replay", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"shelfie play: error: cannot read replay {path}:")


# ----------------------------------------------------------------------------- shelfie play --save
class _Player(io.StringIO):
    """Stdin of a scripted person: answers each prompt from the last ``legal:`` line printed to
    ``out`` (keep the dice, else the first legal command), as someone at the keyboard would."""

    def __init__(self, out: io.StringIO, quit_after: int | None = None) -> None:
        super().__init__()
        self.out, self.left = out, quit_after

    def readline(self, size: int | None = -1) -> str:
        if self.left is not None:
            if self.left == 0:
                return "quit\n"
            self.left -= 1
        legal = re.findall(r"^legal: (.*)$", self.out.getvalue(), re.M)[-1].split(" | ")
        return ("stop" if "stop" in legal else legal[0]) + "\n"


def _play_saved(path: Path, *args: str, quit_after: int | None = None) -> tuple[int, str]:
    out = io.StringIO()
    parsed = cli.build_parser().parse_args(["play", "--seed", "1", "--save", str(path), *args])
    rc = terminal.run_play(parsed, _Player(out, quit_after), out)
    return rc, out.getvalue()


def test_a_saved_terminal_game_replays_and_reviews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "game.json"
    rc, text = _play_saved(path, "--opponents", "greedy", "--name", "Ann")
    assert rc == 0 and "Final score breakdown" in text
    assert (
        text.splitlines()[-1] == f"Saved the game to {path}; review it with: shelfie replay {path} --review"
    )
    data = json.loads(path.read_text())
    # the web table's download (GameService.replay) without its game_id
    assert set(data) == {"version", "seats", "initial_state", "actions", "states", "final_state"}
    assert data["version"] == 1
    assert data["seats"] == [
        {"seat": 0, "type": "human", "name": "Ann", "bot": None},
        {"seat": 1, "type": "bot", "name": "greedy", "bot": "greedy"},
    ]
    assert data["initial_state"] == Game.new(2, rng=1).to_dict()
    assert all(set(a) == {"seat", "action", "name"} for a in data["actions"])
    assert len(data["states"]) == len(data["actions"]) > 40 and data["final_state"] == data["states"][-1]
    assert Game.from_dict(data["final_state"]).over
    capsys.readouterr()
    assert main(["replay", str(path), "--review", "--no-color"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("Replay of a 2-player game: Ann and greedy bot, in seat order.")
    # the replay ends with the result the game printed, then the review follows
    final = Game.from_dict(data["final_state"])
    played = re.findall(r"^Game over — .*$", text, re.M)[-1]
    assert all(str(final.score(p)) in played for p in (0, 1))
    assert result_line(final, None, ["Ann", "greedy bot"]) in shown
    assert "Luck per turn" in shown and re.search(r"^Ann +\d+ ", shown, re.M)


def test_a_game_left_early_is_saved_for_watching(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "left.json"
    rc, text = _play_saved(path, "--bot", "greedy", "--players", "3", "--seat", "2", quit_after=4)
    assert rc == 0 and "Leaving the game." in text
    assert text.splitlines()[-1] == f"Saved the game to {path}; watch it with: shelfie replay {path}"
    data = json.loads(path.read_text())
    assert [s["type"] for s in data["seats"]] == ["bot", "human", "bot"] and data["seats"][1]["name"] is None
    assert not Game.from_dict(data["final_state"]).over
    assert main(["replay", str(path), "--no-color"]) == 0
    assert capsys.readouterr().out.startswith(
        "Replay of a 3-player game: greedy bot (player 1), player 2 and greedy bot (player 3), in seat order."
    )
    assert main(["replay", str(path), "--review"]) == 2
    assert "a review needs a finished game" in capsys.readouterr().err


def test_save_refusals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad, why in ((tmp_path, "is a folder"), (tmp_path / "no" / "x.json", "no such folder")):
        with pytest.raises(SystemExit) as exc:
            main(["play", "--save", str(bad)])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "shelfie play: error: argument --save: " in err and why in err
    saved = tmp_path / "saved.json"
    saved.write_text("{}")
    assert main(["play", "--replay", str(saved), "--save", str(tmp_path / "y.json")]) == 2
    assert "give one of them" in capsys.readouterr().err

    def refuse(path: object, data: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(terminal, "write_replay", refuse)
    rc, _ = _play_saved(tmp_path / "z.json", "--opponents", "greedy", quit_after=0)
    assert rc == 2
    assert (
        capsys.readouterr().err
        == f"shelfie play: error: cannot save the game to {tmp_path / 'z.json'}: Permission denied\n"
    )


def test_the_printed_command_runs_from_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "venv" / "bin" / "shelfie"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(program), "play"])
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.chdir(tmp_path)
    assert shelfie_command() == "venv/bin/shelfie"  # .venv/bin/shelfie without an activated venv
    monkeypatch.chdir(program.parent)
    assert shelfie_command() == "./shelfie"
    monkeypatch.setenv("PATH", str(program.parent))
    assert shelfie_command() == "shelfie"  # the one on PATH
    monkeypatch.setattr(sys, "argv", ["/usr/lib/python3/site-packages/pytest/__main__.py"])
    assert shelfie_command() == "shelfie"


def test_nesting_is_counted_outside_strings() -> None:
    from shelfie_env.play.json_nesting import nesting_exceeds

    assert not nesting_exceeds('{"a": [[1]], "b": "[[[[[[\\"[[["}', 3)
    assert nesting_exceeds('{"a": [[[1]]]}', 3)
    assert not nesting_exceeds(b"[" * 3 + b"]" * 3, 3)
    assert nesting_exceeds("[" * 4, 3)
