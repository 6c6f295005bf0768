"""Replay files: what ``shelfie replay`` refuses, and with which message."""

from __future__ import annotations

from pathlib import Path

import pytest

from shelfie_env.cli import main


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
    assert err == f"shelfie replay: error: cannot read replay {path}: it is not a text file (a replay is UTF-8 JSON)\n"


def test_nesting_too_deep_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    assert main(["replay", str(path)]) == 2
    assert capsys.readouterr().err == f"shelfie replay: error: cannot read replay {path}: its JSON is nested too deeply\n"


def test_play_replay_reports_as_shelfie_play(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"\x00\xff")
    assert main(["play", "--replay", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"shelfie play: error: cannot read replay {path}:")
