"""The games database file: its schema and versions, the lock that keeps one server per file,
the checks at opening, transactions and the background checkpoints.

Writes go through one connection (one writer at a time, as SQLite allows) that
waits at most ``write_timeout`` seconds for a lock held elsewhere; reads use a
connection per thread, so a write waiting on a lock never holds up a read
(write-ahead log: readers see the last committed state and are not blocked).

The write-ahead log is copied back into the database file (a checkpoint) by a
background thread every ``checkpoint_s`` seconds, not by the commit that
happens to fill it, so no move waits for a checkpoint.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 4
"""2 added ``games.initial_rng`` (the dice generator's state at the start, so a game's dice can be replayed),
3 ``games.rematch`` (the id of the game its players started after it), 4 the people's ratings
(``ratings``, ``rating_history``, ``rated_games``: :mod:`~.ratings_store`)."""
KNOWN_VERSIONS = (0, 1, 2, 3, SCHEMA_VERSION)
"""The schema versions a file may have to be opened (0: a new file)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'over')),
    seats TEXT NOT NULL,
    initial_state TEXT NOT NULL,
    state TEXT NOT NULL,
    rng TEXT NOT NULL,
    num_moves INTEGER NOT NULL,
    initial_rng TEXT,
    rematch TEXT
);
CREATE TABLE IF NOT EXISTS moves (
    game_id TEXT NOT NULL REFERENCES games(id),
    idx INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action INTEGER NOT NULL,
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (game_id, idx)
);
CREATE INDEX IF NOT EXISTS games_status ON games(status);
CREATE TABLE IF NOT EXISTS ratings (
    person TEXT NOT NULL,
    players INTEGER NOT NULL,
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    games INTEGER NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (person, players)
);
CREATE TABLE IF NOT EXISTS rating_history (
    person TEXT NOT NULL,
    game_id TEXT NOT NULL,
    players INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    rated INTEGER NOT NULL,
    reason TEXT,
    before REAL,
    after REAL,
    rd REAL,
    change REAL,
    time REAL NOT NULL,
    summary TEXT NOT NULL,
    PRIMARY KEY (person, game_id)
);
CREATE INDEX IF NOT EXISTS rating_history_time ON rating_history(person, time);
CREATE TABLE IF NOT EXISTS rated_games (
    game_id TEXT PRIMARY KEY,
    time REAL NOT NULL,
    outcome TEXT
);
"""


def default_db_path() -> Path:
    """Where the games (and the people's ratings) are kept unless ``--db`` says otherwise: the
    user's data directory (``$XDG_DATA_HOME``, else ``~/.local/share``; ``%LOCALAPPDATA%`` on
    Windows), ``shelfie-env/games.sqlite3``, so no database lands in the working directory.
    ``shelfie serve``, ``shelfie play`` and ``shelfie rating`` share it."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "shelfie-env" / "games.sqlite3"


class DatabaseInUseError(RuntimeError):
    """Another server (process or store) already holds the database file."""


class DamagedDatabaseError(RuntimeError):
    """The database file fails SQLite's integrity check (or is not a database)."""


class StoreBusyError(sqlite3.OperationalError):
    """A write found the database locked (by another process) for longer than its timeout."""


class ReadOnlyDatabaseError(RuntimeError):
    """The database file (or its folder) cannot be written by this process."""


LOCK_FOLDER = "shelfie-env-locks"
"""Folder under the system's temporary folder holding one lock file per database file (device, inode)."""


class _Claim:
    """The lock files a server holds on a database: ``path + ".lock"`` and the file's identity lock."""

    def __init__(self, handles: list[Any]) -> None:
        self.handles = handles

    def close(self) -> None:
        for handle in self.handles:
            handle.close()


def _identity_lock(path: str) -> Path:
    """The lock file of the database file at ``path`` whatever link names it: keyed by its device and
    inode, in one folder of the machine (created with the sticky bit, open to every user)."""
    if not os.path.exists(path):  # a new database: create the file so it has an inode to lock
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    st = os.stat(path)
    folder = Path(tempfile.gettempdir()) / LOCK_FOLDER
    if not folder.is_dir():
        folder.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o1777)
    return folder / f"{st.st_dev}-{st.st_ino}.lock"


def claim(path: str) -> Any:
    """Exclusive locks for as long as the store lives (None for ``:memory:``): on ``path + ".lock"``
    and on a lock file keyed by the database file's device and inode, so no symlink or hard link
    opens a second server on the same file (the database file itself is never opened outside
    SQLite: closing a descriptor of it would drop SQLite's locks in this process). A file that
    cannot be written is refused here (:class:`ReadOnlyDatabaseError`), before any request."""
    if path == ":memory:":
        return None
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return None
    held = _Claim([])
    try:
        for lock in (Path(path + ".lock"), _identity_lock(path)):
            held.handles.append(os.fdopen(os.open(lock, os.O_RDONLY | os.O_CREAT, 0o666)))
            try:
                fcntl.flock(held.handles[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DatabaseInUseError(
                    f"{path} is in use by another shelfie server; stop it or use another --db"
                ) from None
        _check_writable(path)
    except BaseException:
        held.close()
        raise
    return held


def _check_writable(path: str) -> None:
    """Refuse a database this process may not write (a read-only file, folder or medium) with
    :class:`ReadOnlyDatabaseError`: a write to the file's header in a transaction that is rolled
    back, on a connection of its own, so nothing changes. Other failures are left to
    :func:`open_writer`, which names them."""
    db = sqlite3.connect(path, isolation_level=None, timeout=0)  # busy elsewhere: not waited for
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(f"PRAGMA user_version={int(version)}")
        finally:
            db.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:  # a damaged file or a busy one: said by open_writer
        if "readonly" not in str(exc) and "read-only" not in str(exc):
            return
        raise ReadOnlyDatabaseError(
            f"{path} cannot be written ({exc}); a server needs a database file and folder it may write: "
            "fix their permissions or use another --db"
        ) from None
    finally:
        db.close()


def open_writer(path: str, write_timeout: float, own_checkpoints: bool) -> tuple[sqlite3.Connection, int]:
    """The write connection of the file at ``path`` (write-ahead log, ``synchronous=FULL``, a busy
    timeout of ``write_timeout``; no automatic checkpoints with ``own_checkpoints``), checked,
    and the file's schema version. A damaged file is a :class:`DamagedDatabaseError`, one with a
    newer schema a ``RuntimeError``."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        version = _set_up(db, path, write_timeout, own_checkpoints)
    except BaseException:
        db.close()
        raise
    return db, version


def _set_up(db: sqlite3.Connection, path: str, write_timeout: float, own_checkpoints: bool) -> int:
    """Check the file (nothing is written to one that is refused), then set the connection up."""
    try:
        db.execute(f"PRAGMA busy_timeout={max(0, int(write_timeout * 1000))}")
        check = [r[0] for r in db.execute("PRAGMA quick_check").fetchall()]
        version = db.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise DamagedDatabaseError(f"{path} is damaged ({exc}); restore a copy or use another --db") from None
    if check != ["ok"]:
        raise DamagedDatabaseError(
            f"{path} is damaged (quick_check: {'; '.join(check[:3])}); restore a copy or use another --db"
        )
    if version not in KNOWN_VERSIONS:
        raise RuntimeError(
            f"{path}: database schema version {version}, this version of shelfie knows {SCHEMA_VERSION} "
            "(a newer shelfie wrote it); nothing was changed"
        )
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")  # a stored move survives a power loss too
    if own_checkpoints:
        db.execute("PRAGMA wal_autocheckpoint=0")  # the checkpoint thread does it
    return version


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a file of schema ``version`` (0: a new file) to :data:`SCHEMA_VERSION`."""
    if version == SCHEMA_VERSION:  # a current file needs no write to open (another may hold the lock)
        return
    db.executescript(SCHEMA)
    columns = {r[1] for r in db.execute("PRAGMA table_info(games)").fetchall()}
    if "initial_rng" not in columns:  # a version 1 database: its games have no initial dice state
        db.execute("ALTER TABLE games ADD COLUMN initial_rng TEXT")
    if "rematch" not in columns:  # before version 3: no game has a rematch yet
        db.execute("ALTER TABLE games ADD COLUMN rematch TEXT")
    if version < 4:  # games finished before ratings were kept are not rated later
        db.execute(
            "INSERT OR IGNORE INTO rated_games (game_id, time, outcome)"
            " SELECT id, updated, NULL FROM games WHERE status='over'"
        )
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def open_reader(path: str) -> sqlite3.Connection:
    """A read-only connection to the file at ``path`` (one per reading thread)."""
    reader = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    reader.execute("PRAGMA busy_timeout=1000")
    reader.execute("PRAGMA query_only=1")
    return reader


def checkpoints(path: str, every: float, stop: threading.Event) -> None:
    """Copy the write-ahead log into the database file every ``every`` seconds until ``stop`` is
    set, beside the writes (``PASSIVE``: it waits for no reader or writer)."""
    con = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        con.execute("PRAGMA busy_timeout=0")
        while not stop.wait(every):
            try:
                con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error:  # locked or closed: the next one catches up
                pass
    finally:
        con.close()


class Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error); a lock held elsewhere past the
    busy timeout is a :class:`StoreBusyError`."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusyError(f"the database is locked by another connection ({exc})") from exc
            raise

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


__all__ = [
    "KNOWN_VERSIONS",
    "SCHEMA_VERSION",
    "DamagedDatabaseError",
    "DatabaseInUseError",
    "ReadOnlyDatabaseError",
    "StoreBusyError",
    "Transaction",
    "checkpoints",
    "claim",
    "default_db_path",
    "migrate",
    "open_reader",
    "open_writer",
]
