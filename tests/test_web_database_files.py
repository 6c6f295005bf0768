"""The games database is checked before a server starts: one server per database file whatever
link names it, and a file the server cannot write is refused at start (not a 500 on every write)."""

from __future__ import annotations

import argparse
import os
import sqlite3
from pathlib import Path

import pytest

from shelfie_env.play.web import database
from shelfie_env.play.web.database import DatabaseInUseError, ReadOnlyDatabaseError
from shelfie_env.play.web.store import GameStore


@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_a_link_to_a_database_in_use_is_refused(tmp_path: Path, link: str) -> None:
    path = tmp_path / "games.sqlite3"
    other = tmp_path / "elsewhere" / "other.sqlite3"
    store = GameStore(path)
    other.parent.mkdir()
    (os.symlink if link == "symlink" else os.link)(path, other)
    try:
        with pytest.raises(DatabaseInUseError, match="in use by another shelfie server"):
            GameStore(other)
    finally:
        store.close()
    GameStore(other).close()  # free again once the first server has closed


def test_a_new_database_file_is_locked_too(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    store = GameStore(path)
    try:
        link = tmp_path / "link.sqlite3"
        os.symlink(path, link)
        with pytest.raises(DatabaseInUseError):
            GameStore(link)
        GameStore(link, exclusive=False).close()  # tools beside a server still open it
    finally:
        store.close()


def _read_only(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Open ``path`` as SQLite opens a file this process may not write: read-only."""
    connect = sqlite3.connect

    def read_only(target: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        if Path(str(target)) == path:
            return connect(f"file:{path}?mode=ro", *args, uri=True, **kwargs)  # type: ignore[misc]
        return connect(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(database.sqlite3, "connect", read_only)


def test_a_database_that_cannot_be_written_is_refused_at_start(tmp_path, monkeypatch) -> None:
    path = tmp_path / "games.sqlite3"
    GameStore(path).close()
    _read_only(monkeypatch, path)
    with pytest.raises(ReadOnlyDatabaseError) as info:
        GameStore(path)
    message = str(info.value)
    assert message.startswith(f"{path} cannot be written (attempt to write a readonly database)")
    assert "\n" not in message
    GameStore(tmp_path / "other.sqlite3").close()  # the lock of the refused file was let go


def test_serve_refuses_a_database_it_cannot_write_before_serving(tmp_path, monkeypatch, capsys) -> None:
    from shelfie_env.play.web import cli as web_cli

    path = tmp_path / "games.sqlite3"
    GameStore(path).close()
    _read_only(monkeypatch, path)
    parser = argparse.ArgumentParser()
    web_cli.add_arguments(parser)
    args = parser.parse_args(["--db", str(path), "--no-browser", "--port", "0", "--bot-processes", "0"])
    with pytest.raises(ReadOnlyDatabaseError):
        web_cli._open_app(args)
