"""Server-side game sessions: seats, tokens, bots and persistence (no HTTP here).

The server is authoritative: a client only ever sends an action id with its
seat token; :class:`GameService` checks the token, asks the engine whether the
action is legal, applies it, lets the bots that are due play, and writes every
move to the :class:`~shelfie_env.play.web.store.GameStore` before answering.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import inspect
import logging
import secrets
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shelfie_env import bots as bots_module
from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import MAX_PLAYERS, Game
from shelfie_env.play.web.events import log_entries
from shelfie_env.play.web.lines import summary
from shelfie_env.play.web.store import DamagedRowError, GameRow, GameStore, iter_json_lines

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


def result_of(game: Game) -> dict[str, Any]:
    """Scores, per-row/column breakdown and winner seats (ties share) of a finished game."""
    scores = game.scores()
    best = max(scores)
    return {
        "scores": scores,
        "breakdown": [game.table.breakdown(game.circled[p]) for p in range(game.num_players)],
        "winners": [p for p, s in enumerate(scores) if s == best],
    }


@dataclass
class Session:
    """A live game held in memory (its moves live in the store)."""

    id: str
    seats: list[dict[str, Any]]
    game: Game
    rng: np.random.Generator
    num_moves: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    bot_error: dict[str, Any] | None = None
    """Why the bot on turn has not moved (``seat``, ``bot``, ``message``); retried later."""
    bot_retry_at: float = 0.0
    """``time.monotonic()`` before which a failed bot is not tried again."""

    def public_seats(self) -> list[dict[str, Any]]:
        return [
            {"seat": i, "type": s["type"], "name": s["name"], "bot": s.get("bot")}
            for i, s in enumerate(self.seats)
        ]


def _rng_state(rng: np.random.Generator) -> dict[str, Any]:
    return rng.bit_generator.state


def _rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return rng


class GameService:
    """Creates games, validates and applies moves, runs bots, persists everything.

    A bot that cannot move (it fails to build or to act, returns an illegal
    action, or its move cannot be stored) never has a move played for it: the
    game waits at its turn, the view says so in ``bot_error``, and the bot is
    tried again by the next request for the game, at most every
    ``bot_retry_s`` seconds.
    """

    bot_retry_s = 2.0

    def __init__(self, store: GameStore, bot_factory: Callable[..., Any] | None = None) -> None:
        self.store = store
        self._make_bot = bot_factory or bots_module.make
        self._sessions: dict[str, Session] = {}
        self._sessions_lock = threading.Lock()
        self._bots: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
        self._bots_lock = threading.Lock()

    # ------------------------------------------------------------ metadata
    @staticmethod
    def bot_tables() -> dict[str, list[int]]:
        """For every bot, the numbers of players it can play (the setup page offers only those)."""
        out = {}
        for name in bots_module.available():
            try:
                out[name] = list(bots_module.table_sizes(name))
            except Exception:  # a registered bot whose factory cannot even be found
                log.exception("bot %s: its table sizes cannot be read", name)
        return out

    @staticmethod
    def bot_names() -> list[str]:
        return bots_module.available()

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
        if not isinstance(spec, dict):
            raise _bad('the body must be a JSON object like {"seats": [...]}')
        unknown = set(spec) - {"seats"}
        if unknown:
            raise _bad(f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        seats_in = spec.get("seats")
        if not isinstance(seats_in, list) or not 1 <= len(seats_in) <= MAX_PLAYERS:
            raise _bad(f"'seats' must be a list of 1 to {MAX_PLAYERS} seats", "bad_seats")
        available = self.bot_names()
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
                if bot not in available:
                    raise _bad(
                        f"seat {i}: unknown bot {bot!r}; available: {', '.join(available)}", "unknown_bot"
                    )
                self._bot(bot, len(seats_in))  # fail now, not mid-game, if it cannot be built
                name = clean_name(s.get("name"), f"{bot} bot")
                seats.append({"type": "bot", "name": name, "bot": bot, "token_hash": None})
            else:
                raise _bad(f"seat {i}: 'type' must be 'human' or 'bot', got {kind!r}", "bad_seats")
        game_id = secrets.token_urlsafe(12)
        rng = np.random.default_rng(secrets.randbits(128) if seed is None else seed)
        if state is None:
            game = Game.new(len(seats), rng=rng)
        else:
            game = Game.from_dict(state, rng=rng)
            if game.num_players != len(seats):
                raise _bad(f"the state has {game.num_players} players but {len(seats)} seats were given")
        session = Session(game_id, seats, game, rng, 0)
        self.store.create_game(
            game_id, seats, game.to_dict(), _rng_state(rng), "over" if game.over else "active"
        )
        if not game.over:
            with self._sessions_lock:
                self._sessions[game_id] = session
        with session.lock:
            self._run_bots(session)
            view = self._view(session, 0)
        view["tokens"] = {str(i): t for i, t in tokens.items()}
        view["links"] = {str(i): f"/g/{game_id}#seat={i}&token={t}" for i, t in tokens.items()}
        return view

    # ------------------------------------------------------------- reading
    def view(self, game_id: str, since: int = 0) -> dict[str, Any]:
        """The public view of a game: seats, state, legal moves and the moves from ``since`` on."""
        session = self._session(game_id)
        if session is None:
            row = self._row(game_id)
            return self._view_row(row, since)
        with session.lock:
            self._retry_bots(session)
            return self._view(session, since)

    def replay(self, game_id: str) -> dict[str, Any]:
        """The replay of a finished game (format version :data:`REPLAY_VERSION`)."""
        row = self._row(game_id)
        if row.status != "over":
            raise WebError(409, "game_not_over", "replays are available once the game is over")
        moves = self.store.moves(game_id)
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
        }

    # -------------------------------------------------------------- acting
    def act(self, game_id: str, body: object) -> dict[str, Any]:
        """Apply ``{"seat", "token", "action"[, "expect", "since"]}``; bots then play; return the view.

        ``expect`` (optional) is the number of moves the client has seen: a
        stale client gets 409 instead of moving twice. ``since`` (default: the
        index of this move) selects which moves the answer lists.
        """
        if not isinstance(body, dict):
            raise _bad('the body must be a JSON object like {"seat": 0, "token": "...", "action": 0}')
        unknown = set(body) - {"seat", "token", "action", "expect", "since"}
        if unknown:
            raise _bad(f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        action = _int_field(body, "action", required=True)
        expect = _int_field(body, "expect")
        since = _int_field(body, "since")
        if since is not None and since < 0:
            raise _bad("'since' must be >= 0", "bad_since")
        session = self._session(game_id)
        if session is None:
            self._row(game_id)  # 404 when unknown
            raise WebError(409, "game_over", "the game is over")
        with session.lock:
            seat = self._check_seat(session, body)
            self._retry_bots(session)
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
            if expect is not None and expect != session.num_moves:
                raise WebError(
                    409,
                    "stale",
                    f"the game has {session.num_moves} moves, you expected {expect}; reload",
                    num_moves=session.num_moves,
                )
            assert action is not None
            if action not in game.legal_actions():
                raise WebError(
                    422,
                    "illegal_action",
                    f"illegal action {action}: {game.why_illegal(action)}",
                    action=action,
                    legal=list(game.legal_actions()),
                )
            first = session.num_moves
            self._apply(session, action)
            self._run_bots(session)
            return self._view(session, first if since is None else since)

    def hint(self, game_id: str, body: object) -> dict[str, Any]:
        """Advice for the seat on turn: ``{"hints": [{action, name, value, reason}, ...]}``."""
        fn = hint_function()
        if fn is None:
            raise WebError(
                404, "no_hints", "hints need the planner (shelfie_env.bots.planner.hint), which is not installed"
            )
        if not isinstance(body, dict):
            raise _bad('the body must be a JSON object like {"seat": 0, "token": "..."}')
        k = _int_field(body, "k")
        if k is None:
            k = 3
        if not 1 <= k <= 10:
            raise _bad("'k' must be 1..10")
        session = self._session(game_id)
        if session is None:
            self._row(game_id)
            raise WebError(409, "game_over", "the game is over")
        with session.lock:
            seat = self._check_seat(session, body)
            if session.game.over:
                raise WebError(409, "game_over", "the game is over")
            if seat != session.game.current:
                raise WebError(409, "not_your_turn", f"it is seat {session.game.current}'s turn")
            state = session.game.to_dict()
        hints = fn(state, k=k)
        return {"hints": [_json_hint(h) for h in hints]}

    # ------------------------------------------------------------- resuming
    def resume(self) -> int:
        """Load every unfinished game and let the bots that are due play; return how many games."""
        resumed = 0
        for game_id in self.store.active_game_ids():
            try:
                row = self.store.get_game(game_id)
                if row is None:
                    continue
                session = self._load_session(row)
            except ValueError as exc:  # a damaged row must not keep the server (and the other games) down
                log.error("game %s cannot be resumed: %s", game_id, exc)
                continue
            with self._sessions_lock:
                session = self._sessions.setdefault(row.id, session)
            with session.lock:
                self._run_bots(session)
            resumed += 1
        return resumed

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

    @staticmethod
    def _load_session(row: GameRow) -> Session:
        """The live session of a stored game; ``ValueError`` names what is damaged."""
        try:
            rng = _rng_from_state(row.rng)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"its dice generator record is invalid ({type(exc).__name__}: {exc})") from None
        game = Game.from_dict(row.state, rng=rng)
        seats = row.seats
        if not isinstance(seats, list) or len(seats) != game.num_players or not all(
            isinstance(s, dict) and s.get("type") in ("human", "bot") and (s["type"] == "human" or s.get("bot"))
            for s in seats
        ):
            raise ValueError(f"its seat list does not describe {game.num_players} seats")
        if not isinstance(row.num_moves, int) or row.num_moves < 0:
            raise ValueError("its move count is invalid")
        return Session(row.id, seats, game, rng, row.num_moves)

    @staticmethod
    def _check_seat(session: Session, body: dict[str, Any]) -> int:
        seat = _int_field(body, "seat", required=True)
        assert seat is not None
        if not 0 <= seat < len(session.seats):
            raise _bad(f"'seat' must be 0..{len(session.seats) - 1}, got {seat}", "bad_seat")
        token = body.get("token")
        if token is None or token == "":
            raise WebError(403, "missing_token", f"a move for seat {seat} needs that seat's token")
        expected = session.seats[seat].get("token_hash")
        if (
            not isinstance(token, str)
            or expected is None
            or not hmac.compare_digest(_hash_token(token), expected)
        ):
            raise WebError(403, "bad_token", f"this token does not hold seat {seat}")
        return seat

    def _bot(self, name: str, num_players: int) -> tuple[Any, threading.Lock]:
        """The shared instance of bot ``name`` for ``num_players``-player games (built once)."""
        key = (name, num_players)
        with self._bots_lock:
            entry = self._bots.get(key)
            if entry is None:
                try:
                    bot = self._build_bot(name, num_players)
                except Exception as exc:  # a bot that cannot be built is the request's problem
                    raise _bad(
                        f"bot {name!r} cannot play a {num_players}-player game here: {exc}", "bot_unavailable"
                    ) from exc
                entry = self._bots[key] = (bot, threading.Lock())
            return entry

    def _build_bot(self, name: str, num_players: int) -> Any:
        """Build bot ``name`` for a ``num_players``-player table.

        A bot whose factory takes ``num_players`` (the learned ``ppo`` bot: one model
        per table size) is built for this table; a model trained for another size is refused.
        """
        if "num_players" not in inspect.signature(bots_module.factory(name)).parameters:
            return self._make_bot(name)
        bot = self._make_bot(name, num_players=num_players)
        trained_for = getattr(bot, "num_players", num_players)
        if trained_for != num_players:
            raise ValueError(f"its model is for {trained_for}-player games")
        return bot

    def _apply(self, session: Session, action: int, name: str | None = None) -> None:
        """Step the game and persist the move; on a storage error the game is rolled back."""
        game = session.game
        seat = game.current
        backup = game.clone()
        rng_backup = _rng_state(session.rng)
        game.step(action)
        try:
            self.store.record_move(
                session.id,
                session.num_moves,
                seat,
                action,
                name or action_name(action),
                game.to_dict(),
                _rng_state(session.rng),
                "over" if game.over else "active",
            )
        except Exception:
            session.rng.bit_generator.state = rng_backup
            session.game = backup
            raise
        session.num_moves += 1
        if game.over:
            with self._sessions_lock:
                self._sessions.pop(session.id, None)

    def _run_bots(self, session: Session) -> None:
        """Let bots play while a bot seat is on turn (each move stored before the next).

        On a failure the loop stops with ``session.bot_error`` set; nothing is played in the bot's place.
        """
        game = session.game
        while not game.over and session.seats[game.current]["type"] == "bot":
            seat = game.current
            bot_name = session.seats[seat]["bot"]
            # The bot sees a copy with its own dice, so it can neither change the game nor draw its dice.
            view = game.clone(rng=np.random.default_rng(0))
            try:
                bot, lock = self._bot(bot_name, game.num_players)  # fails if e.g. its model file went away
                with lock:
                    action = bots_module.act_on_game(bot, view)
                if action not in game.legal_actions():
                    raise ValueError(f"returned illegal action {action}: {game.why_illegal(action)}")
                self._apply(session, action)  # a storage error rolls the move back
            except Exception as exc:
                log.exception("bot %s (seat %d) could not move in game %s", bot_name, seat, session.id)
                what = "its move could not be stored" if isinstance(exc, sqlite3.Error) else "it failed to move"
                session.bot_error = {
                    "seat": seat,
                    "bot": bot_name,
                    "message": f"bot {bot_name!r} (seat {seat}) has not moved: {what}; it is tried again shortly",
                }
                session.bot_retry_at = time.monotonic() + self.bot_retry_s
                return
            session.bot_error = None
            game = session.game

    def _retry_bots(self, session: Session) -> None:
        """Give a bot that failed another try, once its retry time has come."""
        if session.bot_error is not None and time.monotonic() >= session.bot_retry_at:
            self._run_bots(session)

    def _view(self, session: Session, since: int) -> dict[str, Any]:
        game = session.game
        view = self._assemble(session.id, session.public_seats(), game, session.num_moves, since)
        view["bot_error"] = session.bot_error
        return view

    def _view_row(self, row: GameRow, since: int) -> dict[str, Any]:
        try:
            game = Game.from_dict(row.state)
        except ValueError as exc:
            raise WebError(500, "damaged_game", f"game {row.id} cannot be loaded: {exc}") from exc
        seats = [
            {"seat": i, "type": s["type"], "name": s["name"], "bot": s.get("bot")}
            for i, s in enumerate(row.seats)
        ]
        return self._assemble(row.id, seats, game, row.num_moves, since)

    def _assemble(
        self, game_id: str, seats: list[dict[str, Any]], game: Game, num_moves: int, since: int
    ) -> dict[str, Any]:
        if since < 0:
            raise _bad("'since' must be >= 0")
        moves = (  # each with the events read off the states before and after it (events.py)
            log_entries(
                list(iter_json_lines(self.store.moves(game_id, max(since - 1, 0)))),
                since,
                lambda: getattr(self.store.get_game(game_id), "initial_state", None),
            )
            if since < num_moves
            else []
        )
        legal = [{"action": a, "name": action_name(a)} for a in game.legal_actions()]
        return {
            "game_id": game_id,
            "seats": seats,
            "state": game.to_dict(),
            "num_moves": num_moves,
            "moves": moves,
            "legal": legal,
            "over": game.over,
            "result": result_of(game) if game.over else None,
            "bot_error": None,
            **summary(game),  # per-seat row/column progress and the last round (lines.py)
        }


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
