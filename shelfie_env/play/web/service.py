"""Server-side game sessions: seats, tokens, bots and persistence (no HTTP here).

The server is authoritative: a client only ever sends an action id with its
seat token; :class:`GameService` checks the token, asks the engine whether the
action is legal, applies it and writes it to the
:class:`~shelfie_env.play.web.store.GameStore` before answering. The bots that
are due then play in the background (:class:`~shelfie_env.play.web.botpool.BotPool`),
each move stored before the next; readers see them as they come.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib
import json
import logging
import secrets
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shelfie_env import bots as bots_module
from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import MAX_PLAYERS, Game
from shelfie_env.play.web.botpool import BotPool, build
from shelfie_env.play.web.events import FRAMES, EntryCache, LiveLog, log_entries
from shelfie_env.play.web.lines import summary
from shelfie_env.play.web.store import (
    DamagedRowError,
    GameRow,
    GameStore,
    RematchTakenError,
    StoreBusyError,
    iter_json_lines,
)

log = logging.getLogger("shelfie_env.play.web")

MAX_NAME = 24
REPLAY_VERSION = 1


class WebError(Exception):
    """A request the server refuses: HTTP ``status``, a short ``code`` and a message."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.extra}


def _bad(message: str, code: str = "bad_request", **extra: Any) -> WebError:
    return WebError(400, code, message, **extra)


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def clean_name(raw: object, default: str) -> str:
    """A seat name: a string of at most :data:`MAX_NAME` printable characters (default if empty)."""
    if raw is None:
        return default
    if not isinstance(raw, str):
        raise _bad(f"a seat name must be a string, got {type(raw).__name__}", "bad_name")
    name = " ".join(raw.split())
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise _bad("a seat name may not contain control characters", "bad_name")
    if len(name) > MAX_NAME:
        raise _bad(f"a seat name may have at most {MAX_NAME} characters, got {len(name)}", "bad_name")
    return name or default


def hint_function() -> Callable[..., list[dict[str, Any]]] | None:
    """``shelfie_env.bots.planner.hint.hint`` when that module exists, else ``None``."""
    try:
        module = importlib.import_module("shelfie_env.bots.planner.hint")
    except ModuleNotFoundError as exc:
        if exc.name != "shelfie_env.bots.planner.hint":
            raise
        return None
    return getattr(module, "hint", None)


def result_of(game: Game, resigned: int | None = None) -> dict[str, Any]:
    """Scores, per-row/column breakdown and winner seats (ties share) of a finished game; of a
    game ended by seat ``resigned``'s resignation, the best scores among the other seats win."""
    scores = game.scores()
    others = [s for p, s in enumerate(scores) if p != resigned]
    best = max(others) if others else None
    return {
        "scores": scores,
        "breakdown": [game.table.breakdown(game.circled[p]) for p in range(game.num_players)],
        "winners": [p for p, s in enumerate(scores) if s == best and p != resigned],
    }


def resigned_seat(seats: list[dict[str, Any]]) -> int | None:
    """The seat whose resignation ended the game (None: nobody resigned)."""
    return next((i for i, s in enumerate(seats) if isinstance(s, dict) and s.get("resigned")), None)


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
        return [
            {"seat": i, "type": s["type"], "name": s["name"], "bot": s.get("bot")}
            for i, s in enumerate(self.seats)
        ]


def seat_link(game_id: str, seat: int, token: str) -> str:
    """The page link that plays ``seat`` of ``game_id`` with its token (the token stays in the fragment)."""
    return f"/g/{game_id}#seat={seat}&token={token}"


def seat_map(num_seats: int) -> list[int]:
    """For each seat of a game, its seat in the rematch: everyone moves one seat on, so the
    second player starts (the first seat is an edge worth about ten points of win rate)."""
    return [(seat - 1) % num_seats for seat in range(num_seats)]


def rematch_info(rematch_id: str | None, num_seats: int) -> dict[str, Any] | None:
    """A view's ``rematch``: the rematch's id and where each seat sits there (None: no rematch)."""
    return None if rematch_id is None else {"game_id": rematch_id, "seat_map": seat_map(num_seats)}


def _rng_state(rng: np.random.Generator) -> dict[str, Any]:
    return rng.bit_generator.state


def _rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return rng


class GameService:
    """Creates games, validates and applies moves, runs bots, persists everything.

    Bots play in the background: an answer to a person's move (or to a new
    table) comes at once, and the bots due after it play in the :class:`BotPool`
    (``bot_workers`` threads; ``bot_processes`` worker processes for the
    shipped bots' search). A bot that cannot move (it fails to build or to act,
    returns an illegal action, or its move cannot be stored) never has a move
    played for it: the game waits at its turn, the view says so in
    ``bot_error``, and the bot is tried again every ``bot_retry_s`` seconds.

    Games are loaded into memory when asked for (start-up loads only the games
    whose bot is due) and leave it after ``idle_s`` seconds without a request.
    """

    bot_retry_s = 2.0
    bots_only_pace_s = 0.25
    """Seconds between two moves at a table without a person (it is watched, not waited for),
    which also caps the share of the bot workers such tables take."""

    def __init__(
        self,
        store: GameStore,
        bot_factory: Callable[..., Any] | None = None,
        bot_workers: int = 2,
        bot_processes: int = 0,
        preload: tuple[tuple[str, int], ...] = (),
        idle_s: float = 600.0,
    ) -> None:
        self.store = store
        self._make_bot = bot_factory or bots_module.make
        self._sessions: dict[str, Session] = {}
        self._sessions_lock = threading.Lock()
        self._bots: dict[tuple[str, int], Any] = {}
        self._bot_locks: dict[tuple[str, int], threading.Lock] = {}
        self._bots_lock = threading.Lock()
        self.idle_s = idle_s
        self._history = EntryCache()
        """Log entries of stored moves that no longer change, for answers that list a long history."""
        self.pool = BotPool(
            lambda game_id: self._play_bots(game_id),  # looked up per call (tests replace it)
            workers=bot_workers,
            processes=bot_processes,
            build_bot=self._bot,  # the instance create() checked; each game plays a copy
            preload=preload,
        )

    def close(self) -> None:
        """Stop the bot workers (the store stays open; close it after)."""
        self.pool.stop()

    def preload(self, bots: tuple[tuple[str, int], ...]) -> None:
        """Build these ``(name, num_players)`` bots now (slow ones: model files), in this thread."""
        for name, num_players in bots:
            try:
                self._bot(name, num_players)
            except WebError as exc:
                log.warning("bot %s for %d players: %s", name, num_players, exc.message)

    # ------------------------------------------------------------ metadata
    @staticmethod
    def bot_tables() -> dict[str, list[int]]:
        """For every bot, the numbers of players it can play (the setup page offers only those)."""
        out = {}
        for name in bots_module.available():
            try:
                if bots_module.needs_tape(name):
                    continue  # reads the dice ahead: an arena bot, never a table's opponent
                out[name] = list(bots_module.table_sizes(name))
            except Exception:  # a registered bot whose factory cannot even be found
                log.exception("bot %s: its table sizes cannot be read", name)
        return out

    @staticmethod
    def bot_names() -> list[str]:
        return bots_module.table_bots()

    @staticmethod
    def hints_available() -> bool:
        return hint_function() is not None

    # ------------------------------------------------------------ creating
    def create(
        self, spec: object, seed: int | None = None, state: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Start a game from ``{"seats": [{"type": "human"|"bot", "name"?, "bot"?}, ...]}``.

        Returns the first view (with the bots' opening moves, if any) plus
        ``tokens`` and ``links``: one secret per human seat (shown only here).
        ``seed`` fixes the dice and ``state`` (a state dict, docs/rules.md) the starting
        position; both are for Python callers (tests, tools), not the HTTP API.
        """
        seats, tokens = self._new_seats(spec)
        view = self._open(seats, self.store.create_game, seed, state)
        view["tokens"] = {str(i): t for i, t in tokens.items()}
        view["links"] = {str(i): seat_link(view["game_id"], i, t) for i, t in tokens.items()}
        return view

    def _new_seats(self, spec: object) -> tuple[list[dict[str, Any]], dict[int, str]]:
        """The seats a table spec asks for, and a new token per human seat (refused with a 400)."""
        if not isinstance(spec, dict):
            raise _bad('the body must be a JSON object like {"seats": [...]}')
        unknown = set(spec) - {"seats"}
        if unknown:
            raise _bad(f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        seats_in = spec.get("seats")
        if not isinstance(seats_in, list) or not 1 <= len(seats_in) <= MAX_PLAYERS:
            raise _bad(f"'seats' must be a list of 1 to {MAX_PLAYERS} seats", "bad_seats")
        seats: list[dict[str, Any]] = []
        tokens: dict[int, str] = {}
        for i, s in enumerate(seats_in):
            if not isinstance(s, dict):
                raise _bad(f"seat {i}: must be an object", "bad_seats")
            extra = set(s) - {"type", "name", "bot"}
            if extra:
                raise _bad(f"seat {i}: unknown field(s) {', '.join(sorted(map(str, extra)))}", "bad_seats")
            kind = s.get("type")
            if kind == "human":
                name = clean_name(s.get("name"), f"Player {i + 1}")
                token = secrets.token_urlsafe(24)
                tokens[i] = token
                seats.append({"type": "human", "name": name, "bot": None, "token_hash": _hash_token(token)})
            elif kind == "bot":
                bot = s.get("bot")
                self._check_bot(i, bot, len(seats_in))
                name = clean_name(s.get("name"), f"{bot} bot")
                seats.append({"type": "bot", "name": name, "bot": bot, "token_hash": None})
            else:
                raise _bad(f"seat {i}: 'type' must be 'human' or 'bot', got {kind!r}", "bad_seats")
        return seats, tokens

    def _check_bot(self, seat: int, bot: object, num_players: int) -> None:
        """Refuse (400) a bot that is not offered or cannot be built for this table: now, not mid-game."""
        available = self.bot_names()
        if bot not in available:
            raise _bad(f"seat {seat}: unknown bot {bot!r}; available: {', '.join(available)}", "unknown_bot")
        assert isinstance(bot, str)
        self._bot(bot, num_players)

    def _open(
        self,
        seats: list[dict[str, Any]],
        save: Callable[[str, list[dict[str, Any]], dict[str, Any], dict[str, Any], str], None],
        seed: int | None = None,
        state: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Deal a new game for ``seats``, store it with ``save(id, seats, state, rng, status)`` and
        return its first view (its bots start playing)."""
        game_id = secrets.token_urlsafe(12)
        rng = np.random.default_rng(secrets.randbits(128) if seed is None else seed)
        if state is None:
            game = Game.new(len(seats), rng=rng)
        else:
            game = Game.from_dict(state, rng=rng)
            if game.num_players != len(seats):
                raise _bad(f"the state has {game.num_players} players but {len(seats)} seats were given")
        first = game.to_dict()
        session = Session(game_id, seats, game, rng, 0, LiveLog(0, first))
        try:
            save(game_id, seats, first, _rng_state(rng), "over" if game.over else "active")
        except StoreBusyError as exc:
            raise WebError(
                503,
                "storage_busy",
                "the database is busy; the table was not opened, try again",
                retry_after=1,
            ) from exc
        if not game.over:
            with self._sessions_lock:
                self._sessions[game_id] = session
        with session.lock:
            self._wake(session)
            return self._view(session, 0)

    # ------------------------------------------------------------- rematch
    def rematch(
        self, game_id: str, body: object, admit: Callable[[], None] = lambda: None
    ) -> tuple[dict[str, Any], bool]:
        """Start the rematch of finished game ``game_id``, or find the one already started.

        ``body`` is ``{"seat", "token"}`` of one of its people (a table of bots only needs
        neither). The rematch seats the same people and bots, with the same names and tokens,
        each one seat on (:func:`seat_map`: the first turn passes to the next player), and
        deals new dice. A game has one rematch however many ask for it: the first request
        opens it (``admit()`` is called just before, to refuse a client over its rate), the
        others get that one. Returns the rematch's first view plus ``rematch_of``,
        ``seat_map``, and ``tokens``/``links`` of the asker's seat there; and whether it
        was opened now.
        """
        if not isinstance(body, dict):
            raise _bad('the body must be a JSON object like {"seat": 0, "token": "..."}')
        unknown = set(body) - {"seat", "token"}
        if unknown:
            raise _bad(f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        row = self._row(game_id)
        people = any(s.get("type") == "human" for s in row.seats)
        seat = self._check_seat(row.seats, body) if people or "seat" in body else None
        if row.status != "over":
            raise WebError(409, "game_not_over", "a rematch can be started once the game is over")
        opened = self._open_rematch(row, admit) if row.rematch is None else None
        view = opened or self.view(row.rematch or self._rematch_id(game_id))
        return self._rematch_answer(
            view, game_id, len(row.seats), seat, body.get("token")
        ), opened is not None

    def _open_rematch(self, row: GameRow, admit: Callable[[], None]) -> dict[str, Any] | None:
        """Open the rematch of finished game ``row`` (its first view); None when another request
        opened it meanwhile."""
        seats = self._rematch_seats(row.seats)  # a bot that cannot play is refused before the rate is
        admit()
        try:
            return self._open(seats, functools.partial(self.store.create_rematch, row.id))
        except RematchTakenError:
            return None

    def rematch_status(self, game_id: str) -> dict[str, Any]:
        """``{"over", "rematch"}`` of ``game_id`` (one small read: pages of finished games poll it)."""
        found = self.store.rematch_of(game_id) if isinstance(game_id, str) and len(game_id) <= 64 else None
        if found is None:
            raise WebError(404, "unknown_game", f"no game with id {game_id!r}")
        status, num_seats, rematch_id = found
        return {"over": status == "over", "rematch": rematch_info(rematch_id, num_seats)}

    def _rematch_seats(self, seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rematch's seats: the same people (names, token hashes) and bots, each one seat on."""
        n = len(seats)
        moved: list[dict[str, Any]] = [{}] * n
        for old, new in enumerate(seat_map(n)):
            moved[new] = dict(seats[old])
        for i, s in enumerate(moved):
            if s.get("type") == "bot":
                self._check_bot(i, s.get("bot"), n)
        return moved

    def _rematch_id(self, game_id: str) -> str:
        found = self.store.rematch_of(game_id)
        if found is None or found[2] is None:  # deleted meanwhile: cannot happen to a game just linked
            raise WebError(409, "no_rematch", f"game {game_id} has no rematch now; ask again")
        return found[2]

    @staticmethod
    def _rematch_answer(
        view: dict[str, Any], of: str, num_seats: int, seat: int | None, token: object
    ) -> dict[str, Any]:
        """The rematch's view with what the asker needs to take their seat there."""
        mapping = seat_map(num_seats)
        mine = {} if seat is None or not isinstance(token, str) else {str(mapping[seat]): token}
        return {
            **view,
            "rematch_of": of,
            "seat_map": mapping,
            "tokens": mine,
            "links": {s: seat_link(view["game_id"], int(s), t) for s, t in mine.items()},
        }

    # ------------------------------------------------------------- reading
    def view(self, game_id: str, since: int = 0) -> dict[str, Any]:
        """The public view of a game: seats, state, legal moves and the moves from ``since`` on."""
        with self._locked(game_id) as session:
            if session is not None:
                self._wake(session)
                return self._view(session, since)
        return self._view_row(self._row(game_id), since)

    def replay(self, game_id: str) -> dict[str, Any]:
        """The replay of a finished game (format version :data:`REPLAY_VERSION`)."""
        row = self._row(game_id)
        if row.status != "over":
            raise WebError(
                409,
                "game_not_over",
                "replays are available once the game is over (played to the end or resigned)",
            )
        moves = self.store.moves(game_id)
        resigned = resigned_seat(row.seats)
        return {
            "version": REPLAY_VERSION,
            "game_id": game_id,
            "seats": [
                {"seat": i, "type": s["type"], "name": s["name"], "bot": s.get("bot")}
                for i, s in enumerate(row.seats)
            ],
            "initial_state": row.initial_state,
            "actions": [{"seat": m.seat, "action": m.action, "name": m.name} for m in moves],
            "states": [m.state for m in moves],
            "final_state": row.state,
            **({"resigned": resigned} if resigned is not None else {}),
        }

    # -------------------------------------------------------------- acting
    def act(self, game_id: str, body: object) -> dict[str, Any]:
        """Apply ``{"seat", "token", "action", "expect"[, "since"]}``; return the view (bots play after).

        ``expect`` (required) is the number of moves the client has seen, so the
        move is bound to one position: a stale client gets 409 ``stale``, and the
        same request sent again after it was applied (a retried POST) changes
        nothing and gets the view again, with ``"repeated": true``. ``since``
        (default: the index of this move) selects which moves the answer lists.
        """
        if not isinstance(body, dict):
            raise _bad('the body must be a JSON object like {"seat": 0, "token": "...", "action": 0}')
        unknown = set(body) - {"seat", "token", "action", "expect", "since"}
        if unknown:
            raise _bad(f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        action = _int_field(body, "action", required=True)
        expect = _int_field(body, "expect", required=True)
        since = _int_field(body, "since")
        if since is not None and since < 0:
            raise _bad("'since' must be >= 0", "bad_since")
        assert action is not None and expect is not None
        if expect < 0:
            raise _bad("'expect' must be >= 0", "bad_expect")
        with self._locked(game_id) as session:
            if session is None:
                row = self._row(game_id)  # 404 when unknown
                seat = self._check_seat(row.seats, body)
                if self._is_repeat(game_id, row.num_moves, seat, action, expect):
                    return {**self._view_row(row, expect if since is None else since), "repeated": True}
                raise WebError(409, "game_over", "the game is over")
            seat = self._check_seat(session.seats, body)
            session.touched = time.monotonic()
            if self._is_repeat(game_id, session.num_moves, seat, action, expect):
                return {**self._view(session, expect if since is None else since), "repeated": True}
            game = session.game
            if game.over:
                raise WebError(409, "game_over", "the game is over")
            if seat != game.current:
                raise WebError(
                    409,
                    "not_your_turn",
                    f"it is seat {game.current}'s turn, not seat {seat}'s",
                    current_player=game.current,
                )
            if expect != session.num_moves:
                raise WebError(
                    409,
                    "stale",
                    f"the game has {session.num_moves} moves, you expected {expect}; reload",
                    num_moves=session.num_moves,
                )
            if action not in game.legal_actions():
                raise WebError(
                    422,
                    "illegal_action",
                    f"illegal action {action}: {game.why_illegal(action)}",
                    action=action,
                    legal=list(game.legal_actions()),
                )
            first = session.num_moves
            try:
                self._apply(session, action)
            except StoreBusyError as exc:
                raise WebError(
                    503,
                    "storage_busy",
                    "the database is busy; the move was not played, send it again",
                    retry_after=1,
                ) from exc
            self._wake(session)
            return self._view(session, first if since is None else since)

    def resign(self, game_id: str, body: object) -> dict[str, Any]:
        """End the game by ``{"seat", "token"[, "since"]}``'s resignation; return the view.

        The seat finishes last and the others are ranked by their scores at that moment; the
        game is stored as over (its replay can be downloaded and reviewed). The same request
        sent again gets the view again, with ``"repeated": true``.
        """
        if not isinstance(body, dict):
            raise _bad('the body must be a JSON object like {"seat": 0, "token": "..."}')
        unknown = set(body) - {"seat", "token", "since"}
        if unknown:
            raise _bad(f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        since = _int_field(body, "since")
        if since is not None and since < 0:
            raise _bad("'since' must be >= 0", "bad_since")
        with self._locked(game_id) as session:
            if session is None:
                row = self._row(game_id)  # 404 when unknown
                seat = self._check_seat(row.seats, body)
                if resigned_seat(row.seats) == seat:
                    return {
                        **self._view_row(row, row.num_moves if since is None else since),
                        "repeated": True,
                    }
                raise WebError(409, "game_over", "the game is over")
            seat = self._check_seat(session.seats, body)
            seats = [dict(s) for s in session.seats]
            seats[seat]["resigned"] = True
            try:
                self.store.resign(session.id, session.num_moves, seats)
            except StoreBusyError as exc:
                raise WebError(
                    503,
                    "storage_busy",
                    "the database is busy; the game goes on, send it again",
                    retry_after=1,
                ) from exc
            session.evicted = True  # the game is over: later requests read it from the store
            with self._sessions_lock:
                if self._sessions.get(session.id) is session:
                    del self._sessions[session.id]
            num_moves = session.num_moves
        return self._view_row(self._row(game_id), num_moves if since is None else since)

    def hint(self, game_id: str, body: object) -> dict[str, Any]:
        """Advice for the seat on turn: ``{"hints": [{action, name, value, reason}, ...]}``."""
        fn = hint_function()
        if fn is None:
            raise WebError(
                404,
                "no_hints",
                "hints need the planner (shelfie_env.bots.planner.hint), which is not installed",
            )
        if not isinstance(body, dict):
            raise _bad('the body must be a JSON object like {"seat": 0, "token": "..."}')
        k = _int_field(body, "k")
        if k is None:
            k = 3
        if not 1 <= k <= 10:
            raise _bad("'k' must be 1..10")
        with self._locked(game_id) as session:
            if session is None:
                self._row(game_id)
                raise WebError(409, "game_over", "the game is over")
            seat = self._check_seat(session.seats, body)
            if session.game.over:
                raise WebError(409, "game_over", "the game is over")
            if seat != session.game.current:
                raise WebError(409, "not_your_turn", f"it is seat {session.game.current}'s turn")
            state = session.game.to_dict()
        hints = fn(state, k=k)
        return {"hints": [_json_hint(h) for h in hints]}

    # ------------------------------------------------------------- resuming
    def resume(self) -> int:
        """Queue the unfinished games whose bot is due (they play in the background); return how many.

        No other game is read: each is loaded when it is first asked for.
        """
        due = self.store.bot_due_ids()
        for game_id in due:
            self.pool.schedule(game_id, priority=1)
        return len(due)

    def housekeeping(self, expire_active_s: float | None, expire_over_s: float | None) -> int:
        """Delete games past their expiry (see :meth:`GameStore.expire`) and let idle sessions
        leave memory; return how many games were deleted."""
        now = time.time()
        deleted = self.store.expire(
            None if expire_active_s is None else now - expire_active_s,
            None if expire_over_s is None else now - expire_over_s,
        )
        limit = time.monotonic() - self.idle_s
        with self._sessions_lock:
            idle = [s for s in self._sessions.values() if s.touched < limit]
        for session in idle:
            if self.pool.pending(session.id) or not session.lock.acquire(blocking=False):
                continue
            try:
                if session.touched < limit:
                    session.evicted = True
                    with self._sessions_lock:
                        if self._sessions.get(session.id) is session:
                            del self._sessions[session.id]
            finally:
                session.lock.release()
        if deleted:
            log.info("deleted %d expired game(s)", deleted)
        return deleted

    def wait_for_bots(self, timeout: float = 30.0) -> bool:
        """Block until no bot move is due or being played (tests and tools); True if so."""
        return self.pool.wait_idle(timeout)

    # ------------------------------------------------------------ internals
    def _row(self, game_id: str) -> GameRow:
        try:
            row = self.store.get_game(game_id) if isinstance(game_id, str) and len(game_id) <= 64 else None
        except DamagedRowError as exc:
            raise WebError(500, "damaged_game", f"game {game_id} cannot be loaded: {exc}") from exc
        if row is None:
            raise WebError(404, "unknown_game", f"no game with id {game_id!r}")
        return row

    def _session(self, game_id: str) -> Session | None:
        """The live session of an unfinished game (None if the game is over; 404 if unknown)."""
        with self._sessions_lock:
            session = self._sessions.get(game_id)
        if session is not None:
            return session
        row = self._row(game_id)
        if row.status == "over":
            return None
        try:
            loaded = self._load_session(row)
        except ValueError as exc:
            raise WebError(500, "damaged_game", f"game {game_id} cannot be loaded: {exc}") from exc
        with self._sessions_lock:
            return self._sessions.setdefault(game_id, loaded)

    @contextmanager
    def _locked(self, game_id: str, gone_ok: bool = False) -> Iterator[Session | None]:
        """The live session of ``game_id`` with its lock held (None if the game is over; 404 if
        unknown, or None too with ``gone_ok``)."""
        while True:
            try:
                session = self._session(game_id)
            except WebError:
                if not gone_ok:
                    raise
                session = None
            if session is None:
                yield None
                return
            with session.lock:
                if not session.evicted:
                    session.touched = time.monotonic()
                    yield session
                    return

    @staticmethod
    def _load_session(row: GameRow) -> Session:
        """The live session of a stored game; ``ValueError`` names what is damaged."""
        try:
            rng = _rng_from_state(row.rng)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"its dice generator record is invalid ({type(exc).__name__}: {exc})") from None
        game = Game.from_dict(row.state, rng=rng)
        seats = row.seats
        if (
            not isinstance(seats, list)
            or len(seats) != game.num_players
            or not all(
                isinstance(s, dict)
                and s.get("type") in ("human", "bot")
                and (s["type"] == "human" or s.get("bot"))
                for s in seats
            )
        ):
            raise ValueError(f"its seat list does not describe {game.num_players} seats")
        if not isinstance(row.num_moves, int) or row.num_moves < 0:
            raise ValueError("its move count is invalid")
        return Session(row.id, seats, game, rng, row.num_moves, LiveLog(row.num_moves, row.state))

    @staticmethod
    def _check_seat(seats: list[dict[str, Any]], body: dict[str, Any]) -> int:
        seat = _int_field(body, "seat", required=True)
        assert seat is not None
        if not 0 <= seat < len(seats):
            raise _bad(f"'seat' must be 0..{len(seats) - 1}, got {seat}", "bad_seat")
        token = body.get("token")
        if token is None or token == "":
            raise WebError(403, "missing_token", f"a move for seat {seat} needs that seat's token")
        expected = seats[seat].get("token_hash")
        if (
            not isinstance(token, str)
            or expected is None
            or not hmac.compare_digest(_hash_token(token), expected)
        ):
            raise WebError(403, "bad_token", f"this token does not hold seat {seat}")
        return seat

    def _is_repeat(self, game_id: str, num_moves: int, seat: int, action: int, expect: int) -> bool:
        """Whether move ``expect`` was already played, by ``seat``, as ``action`` (the request is a repeat)."""
        if expect >= num_moves:
            return False
        done = self.store.move(game_id, expect)
        return done is not None and done.seat == seat and done.action == action

    def _bot(self, name: str, num_players: int) -> Any:
        """An instance of bot ``name`` for ``num_players``-player games, to check that it can be built
        (built once; building one bot never waits on another's build)."""
        key = (name, num_players)
        with self._bots_lock:
            bot = self._bots.get(key)
            if bot is not None:
                return bot
            lock = self._bot_locks.setdefault(key, threading.Lock())
        with lock:
            with self._bots_lock:
                bot = self._bots.get(key)
            if bot is None:
                try:
                    bot = self._build_bot(name, num_players)
                except Exception as exc:  # a bot that cannot be built is the request's problem
                    raise _bad(
                        f"bot {name!r} cannot play a {num_players}-player game here: {exc}", "bot_unavailable"
                    ) from exc
                with self._bots_lock:
                    self._bots[key] = bot
            return bot

    def _build_bot(self, name: str, num_players: int) -> Any:
        """Build bot ``name`` for a ``num_players``-player table.

        A bot whose factory takes ``num_players`` (the learned ``ppo`` bot: one model
        per table size) is built for this table; a model trained for another size is refused.
        """
        if bots_module.needs_tape(name):
            raise ValueError("it reads the dice ahead and plays only arena games on common dice")
        return build(name, num_players, self._make_bot)

    def _apply(self, session: Session, action: int, name: str | None = None) -> None:
        """Step the game and persist the move; on a storage error the game is rolled back."""
        game = session.game
        seat = game.current
        backup = game.clone()
        rng_backup = _rng_state(session.rng)
        game.step(action)
        move = {"index": session.num_moves, "seat": seat, "action": action, "name": name or action_name(action),
                "state": game.to_dict()}  # fmt: skip
        try:
            self.store.record_move(
                session.id,
                move["index"],
                seat,
                action,
                move["name"],
                move["state"],
                _rng_state(session.rng),
                "over" if game.over else "active",
            )
        except Exception:
            session.rng.bit_generator.state = rng_backup
            session.game = backup
            raise
        session.num_moves += 1
        session.log.add(move, game)
        if game.over:
            with self._sessions_lock:
                self._sessions.pop(session.id, None)

    def _wake(self, session: Session) -> None:
        """Queue the game's bots if one is on turn (a failed bot once its retry time has come)."""
        game = session.game
        if game.over or session.seats[game.current]["type"] != "bot" or self.pool.queued(session.id):
            return
        delay = max(0.0, session.bot_retry_at - time.monotonic()) if session.bot_error else 0.0
        self.pool.schedule(session.id, delay=delay, priority=1 if session.bots_only else 0)

    def _play_bots(self, game_id: str) -> float | None:
        """Play the game's bots while a bot seat is on turn, each move stored before the next
        (a :class:`BotPool` worker runs this); None when done, else seconds until a retry.

        The bot thinks without the game's lock (readers are not held up) and its move is applied
        only if the game has not moved meanwhile. On a failure nothing is played in its place:
        ``session.bot_error`` says why and the move is tried again after :attr:`bot_retry_s`.
        """
        while True:
            try:
                with self._locked(game_id) as session:
                    if session is None:
                        return None
                    game = session.game
                    if game.over or session.seats[game.current]["type"] != "bot":
                        return None
                    wait = session.bot_retry_at - time.monotonic()
                    if session.bot_error is not None and wait > 0:
                        return wait
                    seat, count = game.current, session.num_moves
                    bot_name = session.seats[seat]["bot"]
                    state = game.to_dict()
            except WebError as exc:  # unknown or damaged game: nothing to play
                log.error("game %s: its bots cannot play: %s", game_id, exc.message)
                return None
            error: BaseException | None = None
            try:
                action = self.pool.compute(game_id, seat, bot_name, game.num_players, state)
            except Exception as exc:  # e.g. its model file went away
                action, error = -1, exc
            with self._locked(game_id, gone_ok=True) as session:  # it may have expired meanwhile
                if session is None or session.num_moves != count or session.game.current != seat:
                    continue
                try:
                    if error is not None:
                        raise error
                    if action not in session.game.legal_actions():
                        raise ValueError(
                            f"returned illegal action {action}: {session.game.why_illegal(action)}"
                        )
                    self._apply(session, action)  # a storage error rolls the move back
                except Exception as exc:
                    log.error("bot %s (seat %d) could not move in game %s: %r", bot_name, seat, game_id, exc)
                    stored = isinstance(exc, sqlite3.Error)
                    what = "its move could not be stored" if stored else "it failed to move"
                    session.bot_error = {
                        "seat": seat,
                        "bot": bot_name,
                        "message": f"bot {bot_name!r} (seat {seat}) has not moved: {what}; it is tried again shortly",
                    }
                    session.bot_retry_at = time.monotonic() + self.bot_retry_s
                    return self.bot_retry_s
                session.bot_error = None
                if session.bots_only and self.bots_only_pace_s > 0 and not session.game.over:
                    self.pool.schedule(game_id, delay=self.bots_only_pace_s, priority=1)
                    return None  # the next move of a table of bots comes a little later

    def _view(self, session: Session, since: int) -> dict[str, Any]:
        """The view of a live game: its head is kept per move count, its latest moves by its log."""
        if since < 0:
            raise _bad("'since' must be >= 0")
        if session.head is None or session.head[0] != session.num_moves:
            head = self._head(session.id, session.public_seats(), session.game, session.log.state)
            session.head = (session.num_moves, head)
        if since >= session.num_moves:
            moves: list[dict[str, Any]] = []
        elif session.log.covers(since):
            moves = session.log.entries(since)
        elif session.log.held >= FRAMES:  # the answer's last moves are all held
            start = session.log.start
            moves = self._history.get(
                (session.id, since, start), lambda: self._stored_entries(session.id, since, start, frames=0)
            ) + session.log.entries(start)
        else:
            moves = self._stored_entries(session.id, since)
        return {**session.head[1], "num_moves": session.num_moves, "moves": moves, "bot_error": session.bot_error,
                "rematch": None}  # fmt: skip

    def _view_row(self, row: GameRow, since: int) -> dict[str, Any]:
        try:
            game = Game.from_dict(row.state)
        except ValueError as exc:
            raise WebError(500, "damaged_game", f"game {row.id} cannot be loaded: {exc}") from exc
        seats = [
            {"seat": i, "type": s["type"], "name": s["name"], "bot": s.get("bot")}
            for i, s in enumerate(row.seats)
        ]
        if since < 0:
            raise _bad("'since' must be >= 0")
        if since >= row.num_moves:
            moves: list[dict[str, Any]] = []
        elif game.over:  # its log no longer changes
            moves = self._history.get(
                (row.id, since, row.num_moves), lambda: self._stored_entries(row.id, since)
            )
        else:
            moves = self._stored_entries(row.id, since)
        head = self._head(row.id, seats, game, game.to_dict(), resigned_seat(row.seats))
        return {**head, "num_moves": row.num_moves, "moves": moves,
                "bot_error": None, "rematch": rematch_info(row.rematch, len(seats))}  # fmt: skip

    def _stored_entries(
        self, game_id: str, since: int, upto: int | None = None, frames: int = FRAMES
    ) -> list[dict[str, Any]]:
        """The log entries of the stored moves from ``since`` on (before ``upto``), each with the
        events read off the states before and after it, the last ``frames`` with line summaries
        (events.py)."""
        rows = [
            r
            for r in iter_json_lines(self.store.moves(game_id, max(since - 1, 0)))
            if upto is None or r["index"] < upto
        ]
        return log_entries(
            rows, since, lambda: getattr(self.store.get_game(game_id), "initial_state", None), frames
        )

    @staticmethod
    def _head(
        game_id: str,
        seats: list[dict[str, Any]],
        game: Game,
        state: dict[str, Any],
        resigned: int | None = None,
    ) -> dict[str, Any]:
        """The parts of a view that do not depend on which moves it lists (``resigned``: the seat
        whose resignation ended the game)."""
        over = game.over or resigned is not None
        return {
            "game_id": game_id,
            "seats": seats,
            "state": state,
            "legal": [] if over else [{"action": a, "name": action_name(a)} for a in game.legal_actions()],
            "over": over,
            "resigned": resigned,
            "result": result_of(game, resigned) if over else None,
            **summary(game),  # per-seat row/column progress and the last round (lines.py)
        }


def _plain(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples become lists), for comparing with stored values."""
    return json.loads(json.dumps(obj))


def check_replay(store: GameStore, game_id: str) -> list[str]:
    """Replay stored game ``game_id`` move by move; what does not match (empty: it all does).

    From the initial state and the dice generator's state at the start, every move must be
    legal for the seat on turn and give the stored state after it, with the same dice; the
    last state and generator state must be the game's current ones. Games stored before the
    generator's initial state was kept are checked without the dice (legal moves, same shelves).
    """
    row = store.get_game(game_id)
    if row is None:
        return ["no such game"]
    moves = store.moves(game_id)
    if [m.index for m in moves] != list(range(row.num_moves)):
        return [f"the moves are not numbered 0..{row.num_moves - 1}"]
    start = store.initial_rng(game_id)
    rng = _rng_from_state(start) if start is not None else np.random.default_rng(0)
    game = Game.from_dict(row.initial_state, rng=rng)
    for m in moves:
        if start is None:
            game = Game.from_dict(game.to_dict(), rng=0)
        if m.seat != game.current:
            return [f"move {m.index}: seat {m.seat} played but seat {game.current} was on turn"]
        if m.action not in game.legal_actions():
            return [f"move {m.index}: action {m.action} is illegal ({game.why_illegal(m.action)})"]
        game.step(m.action)
        after = _plain(game.to_dict())
        if start is not None and after != m.state:
            return [f"move {m.index}: replaying it gives another state (dice or shelves) than the stored one"]
        if start is None:
            if after["boards"] != m.state["boards"]:
                return [f"move {m.index}: replaying it gives other shelves than the stored ones"]
            game = Game.from_dict(m.state, rng=0)
    problems = []
    if start is not None and _plain(game.to_dict()) != row.state:
        problems.append("the game's current state is not the last move's")
    if start is not None and _plain(_rng_state(rng)) != _plain(row.rng):
        problems.append("the stored dice generator is not where the moves leave it")
    resigned = resigned_seat(row.seats) if isinstance(row.seats, list) else None
    if resigned is not None and (row.status != "over" or game.over):
        problems.append(f"seat {resigned} resigned, but the game is stored as {row.status!r} after moves that "
                        f"{'end' if game.over else 'do not end'} it")  # fmt: skip
    elif resigned is None and (row.status == "over") != game.over:
        problems.append(
            f"the game is stored as {row.status!r} but its moves {'end' if game.over else 'do not end'} it"
        )
    return problems


_INT_LIMIT = 2**31


def _int_field(body: dict[str, Any], key: str, required: bool = False) -> int | None:
    value = body.get(key)
    if value is None:
        if required:
            raise _bad(f"missing field {key!r}", f"missing_{key}")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"{key!r} must be an integer, got {value!r}"[:200], f"bad_{key}")
    if not -_INT_LIMIT <= value <= _INT_LIMIT:
        raise _bad(f"{key!r} is out of range", f"bad_{key}")
    return value


def _json_hint(h: Any) -> dict[str, Any]:
    """A hint entry with plain JSON types."""
    action = int(h["action"])
    return {
        "action": action,
        "name": str(h.get("name") or action_name(action)),
        "value": float(h["value"]) if h.get("value") is not None else None,
        "reason": str(h.get("reason", "")),
    }
