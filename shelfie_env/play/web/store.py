"""SQLite persistence of web games (stdlib ``sqlite3``).

Two tables: ``games`` holds one row per game (seats, first and current state,
the dice generator's state, number of moves, status, the id of its rematch) and ``moves`` one row per
action with the state after it. Every move is written in one transaction that
appends its row and updates the game row, so a restart finds each game exactly
where its last move left it.

Writes go through one connection (one writer at a time, as SQLite allows) that
waits at most ``write_timeout`` seconds for a lock held elsewhere; reads use a
connection per thread, so a write waiting on a lock never holds up a read
(write-ahead log: readers see the last committed state and are not blocked).

The write-ahead log is copied back into the database file (a checkpoint) by a
background thread every ``checkpoint_s`` seconds, not by the commit that
happens to fill it, so no move waits for a checkpoint.

Writes that arrive while another is being committed are committed together
(group commit): one transaction, one ``fsync``, each write in its own savepoint
so one that fails is undone alone. Every write returns only once its
transaction is committed, so an acknowledged move is on disk either way.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 3
"""2 added ``games.initial_rng`` (the dice generator's state at the start, so a game's dice can be replayed),
3 ``games.rematch`` (the id of the game its players started after it)."""

_SCHEMA = """
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
"""


@dataclass
class GameRow:
    """One stored game (JSON columns decoded)."""

    id: str
    status: str
    seats: list[dict[str, Any]]
    initial_state: dict[str, Any]
    state: dict[str, Any]
    rng: dict[str, Any]
    num_moves: int
    created: float
    updated: float
    rematch: str | None = None
    """The id of the rematch started after this game, while that game is stored."""


@dataclass
class MoveRow:
    """One stored move: who played which action, and the state after it."""

    index: int
    seat: int
    action: int
    name: str
    state: dict[str, Any]


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


class DatabaseInUseError(RuntimeError):
    """Another server (process or store) already holds the database file."""


def _claim(path: str) -> Any:
    """An exclusive lock on ``path + ".lock"`` for as long as the store lives (None for ``:memory:``)."""
    if path == ":memory:":
        return None
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return None
    handle = open(path + ".lock", "a+")  # noqa: SIM115 - held open on purpose
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise DatabaseInUseError(
            f"{path} is in use by another shelfie server; stop it or use another --db"
        ) from None
    return handle


class DamagedDatabaseError(RuntimeError):
    """The database file fails SQLite's integrity check (or is not a database)."""


class DamagedRowError(ValueError):
    """A stored game whose row cannot be read (invalid JSON in a field)."""


@dataclass
class _Write:
    """One write waiting for the group commit."""

    run: Callable[[sqlite3.Connection], None]
    done: bool = False
    error: BaseException | None = None


class RematchTakenError(RuntimeError):
    """The game already has a stored rematch, or is not finished: no other may be added."""


class StoreBusyError(sqlite3.OperationalError):
    """A write found the database locked (by another process) for longer than its timeout."""


WRITE_TIMEOUT = 1.0
"""Seconds a write waits for a lock held by another connection before it gives up."""
CHECKPOINT_S = 1.0
"""Seconds between two checkpoints of the write-ahead log (by a background thread)."""


class GameStore:
    """Thread-safe access to the games database at ``path`` (``":memory:"`` works too)."""

    def __init__(
        self,
        path: str | Path,
        exclusive: bool = True,
        write_timeout: float = WRITE_TIMEOUT,
        checkpoint_s: float = CHECKPOINT_S,
    ) -> None:
        """Open (or create) the database; ``exclusive`` (the server's way) refuses a file another
        store holds. ``exclusive=False`` is for tools that add games beside a running server.
        ``write_timeout`` bounds the wait of a write for a lock held elsewhere
        (:class:`StoreBusyError` after it); ``checkpoint_s`` is the time between checkpoints."""
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        """Held by the write connection's user (and by reads on a ``:memory:`` database)."""
        self._pending: list[_Write] = []
        self._pending_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[tuple[sqlite3.Connection, threading.Lock]] = []
        """Each thread's read connection, with the lock its reads hold (closing one in use would crash)."""
        self._readers_lock = threading.Lock()
        self._closed = False
        self._owner = _claim(self.path) if exclusive else None
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # a stored move survives a power loss too
            self._db.execute(f"PRAGMA busy_timeout={max(0, int(write_timeout * 1000))}")
            if self.path != ":memory:" and checkpoint_s > 0:
                self._db.execute("PRAGMA wal_autocheckpoint=0")  # the checkpoint thread does it
            check = [r[0] for r in self._db.execute("PRAGMA quick_check").fetchall()]
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            self.close()
            raise DamagedDatabaseError(
                f"{self.path} is damaged ({exc}); restore a copy or use another --db"
            ) from None
        if check != ["ok"]:
            self.close()
            raise DamagedDatabaseError(
                f"{self.path} is damaged (quick_check: {'; '.join(check[:3])}); restore a copy or use another --db"
            )
        if version not in (0, 1, 2, SCHEMA_VERSION):
            raise RuntimeError(
                f"{self.path}: database schema version {version}, this server knows {SCHEMA_VERSION}"
            )
        self._stop = threading.Event()
        if self.path != ":memory:" and checkpoint_s > 0:
            threading.Thread(
                target=self._checkpoints, args=(checkpoint_s,), name="shelfie-checkpoint", daemon=True
            ).start()
        if version != SCHEMA_VERSION:  # a current file needs no write to open (another may hold the lock)
            with self._lock:
                self._db.executescript(_SCHEMA)
                columns = {r[1] for r in self._db.execute("PRAGMA table_info(games)").fetchall()}
                if "initial_rng" not in columns:  # a version 1 database: its games have no initial dice state
                    self._db.execute("ALTER TABLE games ADD COLUMN initial_rng TEXT")
                if "rematch" not in columns:  # before version 3: no game has a rematch yet
                    self._db.execute("ALTER TABLE games ADD COLUMN rematch TEXT")
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        """Close the database and let another server open it."""
        stop = getattr(self, "_stop", None)
        if stop is not None:
            stop.set()
        with self._lock:
            self._closed = True
            with self._readers_lock:
                for reader, in_use in self._readers:
                    with in_use:  # waits for a read under way on another thread
                        reader.close()
                self._readers.clear()
            db = getattr(self, "_db", None)
            if db is not None:
                db.close()
            if self._owner is not None:
                self._owner.close()  # releases the lock
                self._owner = None

    # ------------------------------------------------------------ writes
    def create_game(
        self,
        game_id: str,
        seats: list[dict[str, Any]],
        state: dict[str, Any],
        rng: dict[str, Any],
        status: str,
    ) -> None:
        """Insert a new game whose initial and current state is ``state`` (and dice generator ``rng``)."""
        self._write(_inserter(game_id, seats, state, rng, status))

    def create_rematch(
        self,
        of: str,
        game_id: str,
        seats: list[dict[str, Any]],
        state: dict[str, Any],
        rng: dict[str, Any],
        status: str,
    ) -> None:
        """Insert game ``game_id`` (as :meth:`create_game`) as the rematch of finished game ``of``, in one
        transaction; :class:`RematchTakenError` (and nothing written) when ``of`` already has a rematch
        that is still stored, or is not a finished game."""
        insert = _inserter(game_id, seats, state, rng, status)

        def link(db: sqlite3.Connection) -> None:
            cur = db.execute(
                "UPDATE games SET rematch=? WHERE id=? AND status='over'"
                " AND (rematch IS NULL OR rematch NOT IN (SELECT id FROM games))",
                (game_id, of),
            )
            if cur.rowcount != 1:
                raise RematchTakenError(f"game {of} already has a rematch or is not over")
            insert(db)

        self._write(link)

    def record_move(
        self,
        game_id: str,
        index: int,
        seat: int,
        action: int,
        name: str,
        state: dict[str, Any],
        rng: dict[str, Any],
        status: str,
    ) -> None:
        """Append move ``index`` and make its state the game's current state (one transaction)."""
        text = _dumps(state)
        rng_text = _dumps(rng)

        def append(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO moves (game_id, idx, seat, action, name, state) VALUES (?, ?, ?, ?, ?, ?)",
                (game_id, index, seat, action, name, text),
            )
            cur = db.execute(
                "UPDATE games SET updated=?, status=?, state=?, rng=?, num_moves=?"
                " WHERE id=? AND num_moves=?",
                (time.time(), status, text, rng_text, index + 1, game_id, index),
            )
            if cur.rowcount != 1:
                raise RuntimeError(f"game {game_id}: move {index} does not follow the stored moves")

        self._write(append)

    def resign(self, game_id: str, num_moves: int, seats: list[dict[str, Any]]) -> None:
        """End active game ``game_id`` after its ``num_moves`` moves by a resignation: status ``over``
        and its seat list ``seats`` (where the seat that resigned carries ``"resigned": true``)."""
        text = _dumps(seats)

        def end(db: sqlite3.Connection) -> None:
            cur = db.execute(
                "UPDATE games SET updated=?, status='over', seats=? WHERE id=? AND status='active' AND num_moves=?",
                (time.time(), text, game_id, num_moves),
            )
            if cur.rowcount != 1:
                raise RuntimeError(f"game {game_id}: not an active game after {num_moves} moves")

        self._write(end)

    def _write(self, run: Callable[[sqlite3.Connection], None]) -> None:
        """Run ``run`` in a committed transaction, together with the writes waiting meanwhile."""
        item = _Write(run)
        with self._pending_lock:
            self._pending.append(item)
        with self._lock:  # whoever holds it commits every write waiting, this one too
            if not item.done:
                with self._pending_lock:
                    batch, self._pending = self._pending, []
                self._commit(batch)
        if item.error is not None:
            raise item.error

    def _commit(self, batch: list[_Write]) -> None:
        committed = False
        failure: BaseException = RuntimeError("the write was not committed")
        try:
            with self._transaction():
                for i, item in enumerate(batch):
                    self._db.execute(f"SAVEPOINT w{i}")
                    try:
                        item.run(self._db)
                    except Exception as exc:
                        self._db.execute(f"ROLLBACK TO w{i}")
                        item.error = exc
                    self._db.execute(f"RELEASE w{i}")
            committed = True
        except Exception as exc:
            failure = exc
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        finally:
            for item in batch:  # nothing of the batch is on disk unless the commit went through
                if not committed:
                    item.error = item.error or failure
                item.done = True

    # ------------------------------------------------------------- reads
    def get_game(self, game_id: str) -> GameRow | None:
        row = self._read(
            "SELECT id, status, seats, initial_state, state, rng, num_moves, created, updated,"
            f" {_REMATCH} FROM games g WHERE id=?",
            (game_id,),
        )
        return None if not row else _game_row(row[0])

    def rematch_of(self, game_id: str) -> tuple[str, int, str | None] | None:
        """``(status, number of seats, id of its stored rematch or None)`` of ``game_id``; None if unknown.

        A single small read, for pages that wait for a rematch of a finished game."""
        rows = self._read(
            "SELECT status, CASE WHEN json_valid(seats) THEN json_array_length(seats) ELSE 0 END,"
            f" {_REMATCH} FROM games g WHERE id=?",
            (game_id,),
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def active_game_ids(self) -> list[str]:
        """The ids of every unfinished game, oldest first (read each with :meth:`get_game`)."""
        return [r[0] for r in self._read("SELECT id FROM games WHERE status='active' ORDER BY created")]

    def bot_due_ids(self) -> list[str]:
        """Unfinished games whose seat on turn is a bot, oldest move first (rows with invalid JSON left out).

        The server resumes only these at start-up; every other game is loaded when it is asked for.
        """
        rows = self._read(
            "SELECT id FROM games WHERE status='active' AND CASE WHEN json_valid(state) AND json_valid(seats)"
            " THEN json_extract(seats, '$[' || CAST(json_extract(state, '$.current_player') AS INTEGER)"
            " || '].type') = 'bot' ELSE 0 END ORDER BY updated"
        )
        return [r[0] for r in rows]

    def moves(self, game_id: str, since: int = 0) -> list[MoveRow]:
        """Moves of ``game_id`` with index >= ``since``, in order."""
        rows = self._read(
            "SELECT idx, seat, action, name, state FROM moves WHERE game_id=? AND idx>=? ORDER BY idx",
            (game_id, since),
        )
        return [MoveRow(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows]

    def move(self, game_id: str, index: int) -> MoveRow | None:
        """Move ``index`` of ``game_id`` (None if there is none)."""
        rows = self._read(
            "SELECT idx, seat, action, name, state FROM moves WHERE game_id=? AND idx=?", (game_id, index)
        )
        return (
            MoveRow(rows[0][0], rows[0][1], rows[0][2], rows[0][3], json.loads(rows[0][4])) if rows else None
        )

    def initial_rng(self, game_id: str) -> dict[str, Any] | None:
        """The dice generator's state when ``game_id`` was created (None for games stored before it was kept)."""
        rows = self._read("SELECT initial_rng FROM games WHERE id=?", (game_id,))
        return json.loads(rows[0][0]) if rows and rows[0][0] else None

    def count_games(self) -> dict[str, int]:
        rows = self._read("SELECT status, COUNT(*) FROM games GROUP BY status")
        return {status: n for status, n in rows}

    # ----------------------------------------------------------- expiry
    def expire(self, active_before: float | None, over_before: float | None, batch: int = 200) -> int:
        """Delete unfinished games with no move since ``active_before`` and finished games older
        than ``over_before`` (``time.time()`` values; None keeps them), in transactions of
        ``batch`` games; return how many were deleted."""
        deleted = 0
        for status, before in (("active", active_before), ("over", over_before)):
            if before is None:
                continue
            while True:
                with self._lock, self._transaction():
                    ids = [
                        r[0]
                        for r in self._db.execute(
                            "SELECT id FROM games WHERE status=? AND updated<? LIMIT ?",
                            (status, before, batch),
                        ).fetchall()
                    ]
                    marks = ",".join("?" * len(ids))
                    if ids:
                        self._db.execute(f"DELETE FROM moves WHERE game_id IN ({marks})", ids)
                        self._db.execute(f"DELETE FROM games WHERE id IN ({marks})", ids)
                deleted += len(ids)
                if len(ids) < batch:
                    break
        return deleted

    # ----------------------------------------------------------- helpers
    def _checkpoints(self, every: float) -> None:
        """Copy the write-ahead log into the database file now and then, beside the writes
        (``PASSIVE``: it waits for no reader or writer)."""
        con = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            con.execute("PRAGMA busy_timeout=0")
            while not self._stop.wait(every):
                try:
                    con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:  # locked or closed: the next one catches up
                    pass
        finally:
            con.close()

    def _transaction(self) -> _Txn:
        return _Txn(self._db)

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run a query on this thread's read connection (the write connection for ``:memory:``)."""
        if self.path == ":memory:":
            with self._lock:
                return self._db.execute(sql, params).fetchall()
        entry = getattr(self._local, "db", None)
        if entry is None:
            reader = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            reader.execute("PRAGMA busy_timeout=1000")
            reader.execute("PRAGMA query_only=1")
            entry = (reader, threading.Lock())
            with self._readers_lock:
                if self._closed:
                    reader.close()
                    raise sqlite3.ProgrammingError("the store is closed")
                self._readers.append(entry)
            self._local.db = entry
        reader, in_use = entry
        with in_use:
            if self._closed:
                raise sqlite3.ProgrammingError("the store is closed")
            return reader.execute(sql, params).fetchall()


class _Txn:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error)."""

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


_REMATCH = "(SELECT r.id FROM games r WHERE r.id = g.rematch)"
"""SQL: a game's rematch id while that game is stored (an expired rematch reads as none)."""


def _inserter(
    game_id: str, seats: list[dict[str, Any]], state: dict[str, Any], rng: dict[str, Any], status: str
) -> Callable[[sqlite3.Connection], None]:
    """A write inserting a new game whose initial and current state is ``state`` (dice generator ``rng``)."""
    now = time.time()
    text = _dumps(state)
    rng_text = _dumps(rng)
    row = (game_id, now, now, status, _dumps(seats), text, text, rng_text, rng_text)

    def insert(db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO games (id, created, updated, status, seats, initial_state, state, rng,"
            " initial_rng, num_moves)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
            row,
        )

    return insert


def _game_row(row: tuple[Any, ...]) -> GameRow:
    fields = {}
    for name, raw in zip(("seats", "initial_state", "state", "rng"), row[2:6]):
        try:
            fields[name] = json.loads(raw)
        except (TypeError, ValueError):
            raise DamagedRowError(f"game {row[0]}: its stored {name} is not valid JSON") from None
    return GameRow(
        id=row[0], status=row[1], num_moves=row[6], created=row[7], updated=row[8], rematch=row[9], **fields
    )


def iter_json_lines(rows: list[MoveRow]) -> Iterator[dict[str, Any]]:
    """Moves as the JSON dicts the API returns."""
    for m in rows:
        yield {"index": m.index, "seat": m.seat, "action": m.action, "name": m.name, "state": m.state}
