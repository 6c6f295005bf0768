"""Every output file of the commands that play games is checked before the first game: an
unwritable ``--out`` / ``--json`` is one line and exit status 2, like any other bad argument."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from shelfie_env.argtypes import output_file
from shelfie_env.cli import main

COMMANDS = [
    ["arena", "greedy", "random", "--games", "2", "--workers", "1", "--out"],
    ["errors", "greedy", "--json"],
    ["rate", "greedy", "--json"],
    ["bench", "--out"],
    ["bench", "rate", "greedy", "--out"],
    ["levels", "--json"],
    ["levels", "measure", "--out"],
]


def _status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_an_output_through_a_file_is_refused_before_any_game(argv, tmp_path, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert _status([*argv, str(blocker / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    last = captured.err.strip().splitlines()[-1]
    assert f"argument {argv[-1]}: cannot write {blocker / 'out'}" in last
    assert f"{blocker} is not a folder" in last


@pytest.mark.parametrize("argv", COMMANDS[1:3], ids=lambda a: a[0])
def test_a_folder_as_output_is_refused(argv, tmp_path, capsys) -> None:
    assert _status([*argv, str(tmp_path)]) == 2
    assert f"cannot write {tmp_path}: it is a folder" in capsys.readouterr().err


def test_the_output_type_accepts_new_folders_and_existing_files(tmp_path) -> None:
    parse = output_file(".json", ".md")
    assert parse(str(tmp_path / "new" / "deeper" / "out")) == tmp_path / "new" / "deeper" / "out"
    (tmp_path / "old.json").write_text("{}")
    assert parse(str(tmp_path / "old")) == tmp_path / "old"
    (tmp_path / "x.md").mkdir()
    with pytest.raises(argparse.ArgumentTypeError, match="x.md: it is a folder"):
        parse(str(tmp_path / "x"))


def test_arena_writes_its_out_when_it_can(tmp_path, capsys) -> None:
    out = tmp_path / "sub" / "r"
    assert main(["arena", "greedy", "random", "--games", "2", "--workers", "1", "--out", str(out)]) == 0
    assert Path(f"{out}.json").is_file() and Path(f"{out}.md").is_file()
