"""The games in play, held in memory as :class:`Session` objects (their moves live in the store).

A game is loaded when it is first asked for and leaves memory after
``idle_s`` seconds without a request (:meth:`SessionTable.evict_idle`), or
when it ends. :meth:`SessionTable.play` steps a session's game and stores the
move before anyone sees it; a game that ends is handed to :attr:`SessionTable.on_over` (the
service rates it there).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import Game
from shelfie_env.play.web.events import LiveLog
from shelfie_env.play.web.records import DamagedRowError, GameRow
from shelfie_env.play.web.refusals import DamagedGame, GameNotFound, Refused, StorageBusy
from shelfie_env.play.web.seats import public_seats
from shelfie_env.play.web.store import GameStore, StoreBusyError

MAX_ID = 64
"""The longest game id looked up (ids are 16 characters)."""

log = logging.getLogger("shelfie_env.play.web")


@dataclass
class Session:
    """A live game held in memory (its moves live in the store)."""

    id: str
    seats: list[dict[str, Any]]
    game: Game
    rng: np.random.Generator
    num_moves: int
    log: LiveLog
    """The latest moves with their events, built as they are played (views list them from here)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    bot_error: dict[str, Any] | None = None
    """Why the bot on turn has not moved (``seat``, ``bot``, ``message``); retried later."""
    bot_retry_at: float = 0.0
    """``time.monotonic()`` before which a failed bot is not tried again."""
    moved_at: float = field(default_factory=time.time)
    """``time.time()`` of the game's last move (of its start before the first)."""
    touched: float = field(default_factory=time.monotonic)
    """When a request or a bot last used the session (idle sessions leave memory)."""
    evicted: bool = False
    """Set (under ``lock``) when the session left memory; its holder must load the game again."""
    head: tuple[int, dict[str, Any]] | None = None
    """The view's parts that change only with a move (state, legal moves, line summaries), with
    the move count they are for."""

    @property
    def bots_only(self) -> bool:
        return all(s["type"] == "bot" for s in self.seats)

    def public_seats(self) -> list[dict[str, Any]]:
        return public_seats(self.seats)


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """The state of a dice generator, as the store keeps it."""
    return rng.bit_generator.state


def rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    """The dice generator of a stored state."""
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return rng


@contextmanager
def storage_busy(what: str) -> Iterator[None]:
    """Turn a database locked elsewhere into :class:`StorageBusy`, saying ``what`` did not happen."""
    try:
        yield
    except StoreBusyError as exc:
        raise StorageBusy(f"the database is busy; {what}", retry_after=1) from exc


def load_session(row: GameRow) -> Session:
    """The live session of a stored game; ``ValueError`` names what is damaged."""
    try:
        rng = rng_from_state(row.rng)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"its dice generator record is invalid ({type(exc).__name__}: {exc})") from None
    game = Game.from_dict(row.state, rng=rng)
    if not _seats_fit(row.seats, game.num_players):
        raise ValueError(f"its seat list does not describe {game.num_players} seats")
    if not isinstance(row.num_moves, int) or row.num_moves < 0:
        raise ValueError("its move count is invalid")
    return Session(row.id, row.seats, game, rng, row.num_moves, LiveLog(row.num_moves, row.state),
                   moved_at=row.updated if isinstance(row.updated, (int, float)) else time.time())


def _seats_fit(seats: object, num_players: int) -> bool:
    """Whether a stored seat list describes ``num_players`` people and bots."""
    return (
        isinstance(seats, list)
        and len(seats) == num_players
        and all(
            isinstance(s, dict) and s.get("type") in ("human", "bot") and (s["type"] == "human" or s.get("bot"))
            for s in seats
        )
    )


class SessionTable:
    """The sessions of the games in play, by game id, over the store they are loaded from."""

    def __init__(self, store: GameStore, idle_s: float = 600.0) -> None:
        self.store = store
        self.idle_s = idle_s
        """Seconds without a request after which a session leaves memory."""
        self.live: dict[str, Session] = {}
        self.lock = threading.Lock()
        """Guards :attr:`live` (each session has a lock of its own for its game)."""
        self.on_over: Callable[[str], object] = lambda game_id: None
        """Called with the id of each game once its end (last move or resignation) is stored."""

    def finished(self, game_id: str) -> None:
        """Tell :attr:`on_over` that ``game_id`` is over; its failure is logged (the service catches
        up on the finished games it finds unrated at its next start)."""
        try:
            self.on_over(game_id)
        except Exception:
            log.exception("game %s: what follows its end failed", game_id)

    def row(self, game_id: str) -> GameRow:
        """The stored game ``game_id`` (:class:`GameNotFound`, :class:`DamagedGame`)."""
        try:
            row = self.store.get_game(game_id) if isinstance(game_id, str) and len(game_id) <= MAX_ID else None
        except DamagedRowError as exc:
            raise DamagedGame(f"game {game_id} cannot be loaded: {exc}") from exc
        if row is None:
            raise GameNotFound(f"no game with id {game_id!r}")
        return row

    def get(self, game_id: str) -> Session | None:
        """The session of an unfinished game, loaded if need be (None if the game is over)."""
        with self.lock:
            session = self.live.get(game_id)
        if session is not None:
            return session
        row = self.row(game_id)
        if row.status == "over":
            return None
        try:
            loaded = load_session(row)
        except ValueError as exc:
            raise DamagedGame(f"game {game_id} cannot be loaded: {exc}") from exc
        with self.lock:
            return self.live.setdefault(game_id, loaded)

    @contextmanager
    def locked(self, game_id: str, gone_ok: bool = False) -> Iterator[Session | None]:
        """The session of ``game_id`` with its lock held (None if the game is over; a refusal if it
        is unknown or damaged, or None too with ``gone_ok``)."""
        while True:
            session = self._find(game_id, gone_ok)
            if session is None:
                yield None
                return
            with session.lock:
                if not session.evicted:
                    session.touched = time.monotonic()
                    yield session
                    return

    def _find(self, game_id: str, gone_ok: bool) -> Session | None:
        try:
            return self.get(game_id)
        except Refused:
            if not gone_ok:
                raise
            return None

    def add(self, session: Session) -> None:
        """Hold ``session`` in memory."""
        with self.lock:
            self.live[session.id] = session

    def drop(self, session: Session) -> None:
        """Let ``session`` leave memory (if it is the one held for its game)."""
        with self.lock:
            if self.live.get(session.id) is session:
                del self.live[session.id]

    def play(self, session: Session, action: int, name: str | None = None) -> None:
        """Step the game (its lock held) and store the move; on a storage error the game is rolled back."""
        game = session.game
        seat = game.current
        backup, rng_backup = game.clone(), rng_state(session.rng)
        game.step(action)
        move = {"index": session.num_moves, "seat": seat, "action": action, "name": name or action_name(action),
                "state": game.to_dict()}  # fmt: skip
        now = time.time()  # the move's time in memory and in the store alike, so a restart reads the same deadline
        try:
            self.store.record_move(session.id, move["index"], seat, action, move["name"], move["state"],
                                   rng_state(session.rng), "over" if game.over else "active", now)  # fmt: skip
        except Exception:
            session.rng.bit_generator.state = rng_backup
            session.game = backup
            raise
        session.num_moves += 1
        session.moved_at = now
        session.log.add(move, game)
        if game.over:  # rated before it leaves memory: a reader waiting for it sees its ratings
            self.finished(session.id)
            self.drop(session)

    def evict_idle(self, busy: Callable[[str], bool]) -> None:
        """Let the sessions idle for :attr:`idle_s` leave memory, but not one whose game is ``busy``
        (its bots are due) or whose lock is held."""
        limit = time.monotonic() - self.idle_s
        with self.lock:
            idle = [s for s in self.live.values() if s.touched < limit]
        for session in idle:
            if busy(session.id) or not session.lock.acquire(blocking=False):
                continue
            try:
                if session.touched < limit:
                    session.evicted = True
                    self.drop(session)
            finally:
                session.lock.release()


__all__ = ["Session", "SessionTable", "load_session", "rng_from_state", "rng_state", "storage_busy"]
