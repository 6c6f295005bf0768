"""SQLite persistence of web games (stdlib ``sqlite3``).

Two tables hold the games: ``games`` holds one row per game (seats, first and current state,
the dice generator's state, number of moves, status, the id of its rematch) and ``moves`` one row per
action with the state after it. Every move is written in one transaction that
appends its row and updates the game row, so a restart finds each game exactly
where its last move left it.

The file itself (schema, lock, checks, checkpoints) is :mod:`~.database`; the people's
ratings beside the games are :mod:`~.ratings_store`'s tables.

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shelfie_env.play.web import ratings_store
from shelfie_env.play.web.database import (
    DamagedDatabaseError,
    DatabaseInUseError,
    StoreBusyError,
    Transaction,
    checkpoints,
    claim,
    migrate,
    open_reader,
    open_writer,
)
from shelfie_env.play.web.ratings_store import SeatChange, Standing
from shelfie_env.play.web.records import GameRow, MoveRow, dumps, game_row, move_row


@dataclass
class _Write:
    """One write waiting for the group commit."""

    run: Callable[[sqlite3.Connection], None]
    done: bool = False
    error: BaseException | None = None


class RematchTakenError(RuntimeError):
    """The game already has a stored rematch, or is not finished: no other may be added."""


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
        self._owner = claim(self.path) if exclusive else None
        own_checkpoints = self.path != ":memory:" and checkpoint_s > 0
        try:
            self._db, version = open_writer(self.path, write_timeout, own_checkpoints)
        except BaseException:
            self._release()
            raise
        self._stop = threading.Event()
        if own_checkpoints:
            threading.Thread(
                target=checkpoints, args=(self.path, checkpoint_s, self._stop), name="shelfie-checkpoint", daemon=True
            ).start()
        with self._lock:
            migrate(self._db, version)

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
            self._release()

    def _release(self) -> None:
        """Let go of the file's lock (another server may open it)."""
        if self._owner is not None:
            self._owner.close()
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
        at: float | None = None,
    ) -> None:
        """Append move ``index`` and make its state the game's current state (one transaction); ``at`` is
        the move's time (default: now), the game's ``updated``."""
        at = time.time() if at is None else at
        text = dumps(state)
        rng_text = dumps(rng)

        def append(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO moves (game_id, idx, seat, action, name, state) VALUES (?, ?, ?, ?, ?, ?)",
                (game_id, index, seat, action, name, text),
            )
            cur = db.execute(
                "UPDATE games SET updated=?, status=?, state=?, rng=?, num_moves=?"
                " WHERE id=? AND num_moves=?",
                (at, status, text, rng_text, index + 1, game_id, index),
            )
            if cur.rowcount != 1:
                raise RuntimeError(f"game {game_id}: move {index} does not follow the stored moves")

        self._write(append)

    def resign(self, game_id: str, num_moves: int, seats: list[dict[str, Any]]) -> None:
        """End active game ``game_id`` after its ``num_moves`` moves by a resignation: status ``over``
        and its seat list ``seats`` (where the seat that resigned carries ``"resigned": true``)."""
        text = dumps(seats)

        def end(db: sqlite3.Connection) -> None:
            cur = db.execute(
                "UPDATE games SET updated=?, status='over', seats=? WHERE id=? AND status='active' AND num_moves=?",
                (time.time(), text, game_id, num_moves),
            )
            if cur.rowcount != 1:
                raise RuntimeError(f"game {game_id}: not an active game after {num_moves} moves")

        self._write(end)

    def add_finished_game(
        self,
        game_id: str,
        seats: list[dict[str, Any]],
        start: tuple[dict[str, Any], dict[str, Any]],
        moves: list[tuple[int, int, str, dict[str, Any]]],
        rng: dict[str, Any],
    ) -> None:
        """Store a game played elsewhere (``shelfie play``) and finished, in one transaction:
        ``start`` is its first state and dice generator state, ``moves`` ``(seat, action, name,
        state after)``, ``rng`` the generator's state at the end."""
        insert = _inserter(game_id, seats, start[0], start[1], "over")
        final = dumps(moves[-1][3] if moves else start[0])
        rng_text = dumps(rng)

        def add(db: sqlite3.Connection) -> None:
            insert(db)
            db.executemany(
                "INSERT INTO moves (game_id, idx, seat, action, name, state) VALUES (?, ?, ?, ?, ?, ?)",
                [(game_id, i, seat, action, name, dumps(state)) for i, (seat, action, name, state) in enumerate(moves)],
            )
            db.execute(
                "UPDATE games SET state=?, rng=?, num_moves=? WHERE id=?", (final, rng_text, len(moves), game_id)
            )

        self._write(add)

    def set_seat_field(self, game_id: str, seat: int, key: str, value: Any, replace: bool = True) -> Any:
        """Set ``key`` of seat ``seat`` in the stored seat list of ``game_id``; without ``replace``
        a value already there is kept. Returns the value the seat holds after it."""
        held: list[Any] = []

        def update(db: sqlite3.Connection) -> None:
            row = db.execute("SELECT seats FROM games WHERE id=?", (game_id,)).fetchone()
            if row is None:
                raise RuntimeError(f"game {game_id} is not stored")
            seats = json.loads(row[0])
            if replace or seats[seat].get(key) is None:
                seats[seat][key] = value
                db.execute("UPDATE games SET seats=? WHERE id=?", (dumps(seats), game_id))
            held.append(seats[seat].get(key))

        self._write(update)
        return held[0]

    def bind_person(self, game_id: str, seat: int, person: str, key_only: bool = True) -> str:
        """Bind seat ``seat`` of ``game_id`` to ``person`` (its ``person`` and, with ``key_only``, its
        ``key_only``: from now on it answers to that person's key only), in one write, unless a person
        holds it already; returns who holds it."""
        held: list[str] = []

        def update(db: sqlite3.Connection) -> None:
            row = db.execute("SELECT seats FROM games WHERE id=?", (game_id,)).fetchone()
            if row is None:
                raise RuntimeError(f"game {game_id} is not stored")
            seats = json.loads(row[0])
            if seats[seat].get("person") is None:
                seats[seat]["person"] = person
                if key_only:
                    seats[seat]["key_only"] = True
                db.execute("UPDATE games SET seats=? WHERE id=?", (dumps(seats), game_id))
            held.append(seats[seat]["person"])

        self._write(update)
        return held[0]

    # ----------------------------------------------------------- ratings
    def rate(
        self,
        game_id: str,
        assess: Callable[[Callable[[str, int], Standing | None]], tuple[list[dict[str, Any]], list[SeatChange]]],
    ) -> list[dict[str, Any]] | None:
        """Rate finished game ``game_id`` once: in one transaction, unless it is rated already,
        ``assess(standing)`` (``standing(person, players)`` reads a person's rating now) gives each
        seat's outcome and the people's new ratings, which are written. Returns the game's
        outcome (the stored one for a game rated before; None for one finished before ratings)."""
        answer: list[Any] = []

        def run(db: sqlite3.Connection) -> None:
            done = ratings_store.outcome(db, game_id)
            if done is not ratings_store.NOT_RATED:
                answer.append(done)
                return
            result, changes = assess(lambda person, players: ratings_store.standing(db, person, players))
            ratings_store.save(db, game_id, result, changes, time.time())
            answer.append(result)

        self._write(run)
        return answer[0]

    def game_outcome(self, game_id: str) -> Any:
        """The rating outcome of ``game_id`` (a list per seat; None: finished before ratings were
        kept), or ``ratings_store.NOT_RATED``."""
        return self._reading(lambda db: ratings_store.outcome(db, game_id))

    def standings(self, person: str) -> dict[int, Standing]:
        """``person``'s rating at each table size they have one at."""
        return self._reading(lambda db: ratings_store.standings(db, person))

    def rating_history(self, person: str, players: int | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """``person``'s finished games with their ratings, the latest first."""
        return self._reading(lambda db: ratings_store.history(db, person, players, limit))

    def unrated_finished(self) -> list[str]:
        """Finished games not rated yet, oldest first."""
        return self._reading(ratings_store.unrated_finished)

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
        return None if not row else game_row(row[0])

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
        return [move_row(r) for r in rows]

    def move(self, game_id: str, index: int) -> MoveRow | None:
        """Move ``index`` of ``game_id`` (None if there is none)."""
        rows = self._read(
            "SELECT idx, seat, action, name, state FROM moves WHERE game_id=? AND idx=?", (game_id, index)
        )
        return move_row(rows[0]) if rows else None

    def seat_decisions(self, game_id: str) -> dict[int, int]:
        """How many moves each seat of ``game_id`` made (seats that made none are left out)."""
        rows = self._read("SELECT seat, COUNT(*) FROM moves WHERE game_id=? GROUP BY seat", (game_id,))
        return {seat: n for seat, n in rows}

    def left_with_people(self, before: float) -> list[tuple[str, int]]:
        """``(id, number of moves)`` of the unfinished games with no move since ``before`` (a
        ``time.time()`` value) where a seat is bound to a person, oldest first."""
        rows = self._read(
            "SELECT id, num_moves FROM games WHERE status='active' AND updated<? AND json_valid(seats)"
            " AND EXISTS (SELECT 1 FROM json_each(seats) WHERE json_extract(value, '$.person') IS NOT NULL)"
            " ORDER BY updated",
            (before,),
        )
        return [(r[0], r[1]) for r in rows]

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
    def _transaction(self) -> Transaction:
        return Transaction(self._db)

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run a query on this thread's read connection (the write connection for ``:memory:``)."""
        return self._reading(lambda db: db.execute(sql, params).fetchall())

    def _reading(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """``fn(connection)`` on this thread's read connection (the write connection for ``:memory:``)."""
        if self.path == ":memory:":
            with self._lock:
                return fn(self._db)
        entry = getattr(self._local, "db", None)
        if entry is None:
            reader = open_reader(self.path)
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
            return fn(reader)


_REMATCH = "(SELECT r.id FROM games r WHERE r.id = g.rematch)"
"""SQL: a game's rematch id while that game is stored (an expired rematch reads as none)."""


def _inserter(
    game_id: str, seats: list[dict[str, Any]], state: dict[str, Any], rng: dict[str, Any], status: str
) -> Callable[[sqlite3.Connection], None]:
    """A write inserting a new game whose initial and current state is ``state`` (dice generator ``rng``)."""
    now = time.time()
    text = dumps(state)
    rng_text = dumps(rng)
    row = (game_id, now, now, status, dumps(seats), text, text, rng_text, rng_text)

    def insert(db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO games (id, created, updated, status, seats, initial_state, state, rng,"
            " initial_rng, num_moves)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
            row,
        )

    return insert


__all__ = [
    "WRITE_TIMEOUT",
    "DamagedDatabaseError",
    "DatabaseInUseError",
    "GameStore",
    "RematchTakenError",
    "StoreBusyError",
]
