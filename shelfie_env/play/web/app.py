"""The web table: a Starlette app serving the page and a small JSON API.

``create_app(db_path=...)`` opens (or creates) the SQLite database, queues the
unfinished games whose bot is due (they play on in the background; every other
game is loaded when asked for) and returns the ASGI app.

API (all JSON; errors are ``{"error": code, "message": text}`` with a 4xx status):

=======  ===============================  ==============================================
GET      /api/meta                        bot names, whether hints exist, limits
POST     /api/games                       ``{"seats": [...]}`` -> first view + tokens/links
GET      /api/games/{id}?since=N          public view, with the moves from index N
POST     /api/games/{id}/actions          ``{"seat", "token", "action", "expect"}``
POST     /api/games/{id}/hint             ``{"seat", "token"[, "k"]}`` -> top moves
POST     /api/games/{id}/rematch          ``{"seat", "token"}`` -> the rematch (opened once)
GET      /api/games/{id}/rematch          whether the finished game has a rematch yet
GET      /api/games/{id}/replay           replay JSON of a finished game
GET      /api/games/{id}/review           luck, regrets and mistakes of a finished game
=======  ===============================  ==============================================
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import math
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shelfie_env import bots as bots_module
from shelfie_env.game.actions import SYMBOLS
from shelfie_env.game.engine import MAX_PLAYERS
from shelfie_env.play.json_nesting import nesting_exceeds
from shelfie_env.play.web.guard import RateLimiter
from shelfie_env.play.web.review import GameReviews
from shelfie_env.play.web.service import MAX_NAME, GameService, WebError
from shelfie_env.play.web.store import WRITE_TIMEOUT, GameStore, StoreBusyError

STATIC = Path(__file__).parent / "static"
MAX_BODY = 16 * 1024
GAMES_PER_MINUTE = 10.0
"""Default: new tables one client address may open per minute (in bursts of as many)."""
HINTS_PER_MINUTE = 30.0
"""Default: hint requests one client address may send per minute."""
EXPIRE_DAYS = 30.0
"""Default: an unfinished game with no move for this many days is deleted."""
DEFAULT_BOT = "td"
"""The bot the start page seats by default: the project's one default opponent."""
BOT_NOTES = {"td": "the shipped self-taught bot"}
"""What the start page says of a bot beside its name, in the terminal help's words."""
HOUSEKEEPING_S = 600.0
"""How often expired games are deleted and idle games leave memory."""


def default_db_path() -> Path:
    """Where ``shelfie serve`` keeps its games unless ``--db`` says otherwise: the user's data
    directory (``$XDG_DATA_HOME``, else ``~/.local/share``; ``%LOCALAPPDATA%`` on Windows),
    ``shelfie-env/games.sqlite3``, so no database lands in the working directory."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "shelfie-env" / "games.sqlite3"


log = logging.getLogger("shelfie_env.play.web")

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
NO_STORE = [(b"cache-control", b"no-store")]
"""API answers (tokens, live games) are never cached."""


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``limit`` bytes with 413 (before the app sees them)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _send_json(
                    send, 400, {"error": "bad_request", "message": "invalid Content-Length header"}
                )
                return
            if declared > self.limit:
                await self._too_large(send)
                return
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self._too_large(send)
                return
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await _send_json(
            send,
            413,
            {"error": "body_too_large", "message": f"request bodies are limited to {self.limit} bytes"},
        )


class SecurityHeaders:
    """ASGI middleware adding a strict Content-Security-Policy and friends to every response,
    and to API answers ``Server-Timing: app;dur=<ms>`` (from the request's arrival at the app
    to its answer: what a load test compares with the time its client saw)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        api = scope["path"].startswith("/api/")
        extra = SECURITY_HEADERS + (NO_STORE if api else [])
        start = time.perf_counter()

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                timing = (
                    [(b"server-timing", b"app;dur=%.1f" % ((time.perf_counter() - start) * 1000))]
                    if api
                    else []
                )
                message["headers"] = list(message.get("headers", [])) + extra + timing
            await send(message)

        await self.app(scope, receive, with_headers)


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


MAX_DEPTH = 8
"""Deepest nesting of objects and arrays a request body may have (the API needs 3)."""


async def _json_body(request: Request) -> Any:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        # A page on another site can post forms and text/plain without asking; JSON it cannot.
        raise WebError(415, "unsupported_media_type", "send the body as application/json")
    raw = await request.body()
    if not raw:
        raise WebError(400, "bad_json", "the request needs a JSON body")
    if nesting_exceeds(raw, MAX_DEPTH):
        raise WebError(400, "bad_json", f"the body is nested deeper than {MAX_DEPTH} levels")
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WebError(400, "bad_json", f"the body is not valid JSON: {exc}") from None
    except ValueError:  # an integer literal beyond Python's digit limit
        raise WebError(400, "bad_json", "the body holds a number too long to read") from None
    _check_json(body, 0)
    return body


def _check_json(value: Any, depth: int) -> None:
    """Refuse nesting beyond :data:`MAX_DEPTH` and strings that are not valid Unicode (lone surrogates)."""
    if depth > MAX_DEPTH:
        raise WebError(400, "bad_json", f"the body is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise WebError(400, "bad_json", "the body holds a string with an unpaired surrogate") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_json(k, depth + 1)
            _check_json(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_json(v, depth + 1)


def _since(request: Request) -> int:
    raw = request.query_params.get("since", "0")
    try:
        since = int(raw)
    except ValueError:
        raise WebError(400, "bad_since", f"'since' must be an integer, got {raw[:40]!r}") from None
    if not 0 <= since <= 2**31:
        raise WebError(400, "bad_since", "'since' must be >= 0")
    return since


def learned_bots() -> tuple[tuple[str, int], ...]:
    """``(name, num_players)`` of every bot with a model per table size (slow to build: preloaded)."""
    out = []
    for name in bots_module.available():
        try:
            if "num_players" in inspect.signature(bots_module.factory(name)).parameters:
                out += [(name, n) for n in bots_module.table_sizes(name)]
        except Exception:  # a bot whose factory cannot be found fails when a table asks for it
            log.exception("bot %s: its table sizes cannot be read", name)
    return tuple(out)


def _limited(limiter: RateLimiter, request: Request, what: str) -> None:
    """Raise 429 when the client address behind ``request`` is over ``limiter``'s rate."""
    key = request.client.host if request.client else "unknown"
    wait = limiter.check(key)
    if wait is not None:
        retry = max(1, math.ceil(wait))
        raise WebError(
            429,
            "rate_limited",
            f"too many {what} from your address; try again in {retry} s",
            retry_after=retry,
        )


def create_app(
    db_path: str | Path | None = None,
    max_body: int = MAX_BODY,
    worker_threads: int = 8,
    *,
    bot_workers: int = 2,
    bot_processes: int = 0,
    games_per_minute: float = GAMES_PER_MINUTE,
    hints_per_minute: float = HINTS_PER_MINUTE,
    expire_days: float | None = EXPIRE_DAYS,
    keep_finished_days: float | None = None,
    write_timeout: float = WRITE_TIMEOUT,
    preload: bool = True,
    bot_table_pace: float | None = None,
) -> Starlette:
    """The ASGI app for the games stored at ``db_path`` (default :func:`default_db_path`;
    unfinished games whose bot is due play on at once, in the background).

    ``max_body`` caps request bodies (413 above it); ``worker_threads`` is how many
    requests run game logic at the same time (it is CPU-bound Python, so a few suffice).
    Bots play in ``bot_workers`` background threads, their search in ``bot_processes``
    worker processes (0: in those threads). Each client address may open
    ``games_per_minute`` tables and ask ``hints_per_minute`` hints (0: no limit; 429 above).
    Unfinished games without a move for ``expire_days`` days and finished games older
    than ``keep_finished_days`` are deleted (None keeps them). ``write_timeout`` bounds
    a write's wait for a database locked elsewhere. ``preload`` builds the learned bots
    in the background at start-up, so the first table with one does not wait for it.
    ``bot_table_pace`` is the pause between moves at a table of bots only (default
    :attr:`GameService.bots_only_pace_s`).
    """
    if db_path is None:
        db_path = default_db_path()
        db_path.parent.mkdir(parents=True, exist_ok=True)
    store = GameStore(db_path, write_timeout=write_timeout)
    slow_bots = learned_bots() if preload else ()
    service = GameService(
        store,
        bot_workers=bot_workers,
        bot_processes=bot_processes,
        preload=slow_bots + (("planner", 2),) if bot_processes else (),
    )
    if bot_table_pace is not None:
        service.bots_only_pace_s = bot_table_pace
    game_limit = RateLimiter(games_per_minute)
    hint_limit = RateLimiter(hints_per_minute)
    reviews = GameReviews(service)
    # Game logic is CPU-bound Python: a few worker threads keep the event loop free for I/O
    # without dozens of threads fighting over the GIL (which made the latency tail long).
    limiter = anyio.CapacityLimiter(worker_threads)

    async def run_in_threadpool(fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=limiter)

    resumed = service.resume()
    if resumed:
        log.info("%d unfinished game(s) from %s have a bot to move: they play on", resumed, db_path)
    stopping = threading.Event()
    day = 86400.0

    def housekeeping() -> None:
        while True:
            try:
                service.housekeeping(
                    None if expire_days is None else expire_days * day,
                    None if keep_finished_days is None else keep_finished_days * day,
                )
            except StoreBusyError as exc:  # a database locked elsewhere: next time
                log.warning("housekeeping postponed: %s", exc)
            except Exception:
                log.exception("housekeeping failed")
            if stopping.wait(HOUSEKEEPING_S):
                return

    threading.Thread(target=housekeeping, name="shelfie-housekeeping", daemon=True).start()
    if slow_bots:
        threading.Thread(
            target=service.preload, args=(slow_bots,), name="shelfie-preload", daemon=True
        ).start()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        stopping.set()
        await anyio.to_thread.run_sync(service.close)

    def page(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return FileResponse(STATIC / name, media_type="text/html")

        return endpoint

    async def meta(request: Request) -> Response:
        names = await run_in_threadpool(service.bot_names)
        tables = await run_in_threadpool(service.bot_tables)
        return JSONResponse(
            {
                "bots": names,
                "bot_tables": tables,
                "default_bot": DEFAULT_BOT,
                "bot_notes": {b: note for b, note in BOT_NOTES.items() if b in names},
                "hint": service.hints_available(),
                "max_players": MAX_PLAYERS,
                "max_name": MAX_NAME,
                "symbols": list(SYMBOLS),
                "max_body": max_body,
            }
        )

    async def create_game(request: Request) -> Response:
        body = await _json_body(request)
        _limited(game_limit, request, "new tables")
        view = await run_in_threadpool(service.create, body)
        return JSONResponse(view, status_code=201)

    async def get_game(request: Request) -> Response:
        view = await run_in_threadpool(service.view, request.path_params["game_id"], _since(request))
        return JSONResponse(view)

    async def post_action(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        body = await _json_body(request)
        view = await run_in_threadpool(service.act, game_id, body)
        return JSONResponse(view)

    async def post_resign(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        body = await _json_body(request)
        return JSONResponse(await run_in_threadpool(service.resign, game_id, body))

    async def post_hint(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        body = await _json_body(request)
        _limited(hint_limit, request, "hint requests")
        return JSONResponse(await run_in_threadpool(service.hint, game_id, body))

    async def post_rematch(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        body = await _json_body(request)
        admit = functools.partial(_limited, game_limit, request, "new tables")  # only when one is opened
        view, created = await run_in_threadpool(service.rematch, game_id, body, admit)
        return JSONResponse(view, status_code=201 if created else 200)

    async def get_rematch(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(service.rematch_status, request.path_params["game_id"]))

    async def get_replay(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        replay = await run_in_threadpool(service.replay, game_id)
        return JSONResponse(
            replay, headers={"content-disposition": f'attachment; filename="shelfie-{game_id}.json"'}
        )

    async def web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        retry = exc.extra.get("retry_after")
        headers = {"retry-after": str(retry)} if retry is not None else None
        return JSONResponse(exc.to_json(), status_code=exc.status, headers=headers)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        headers = {k.decode(): v.decode() for k, v in SECURITY_HEADERS}
        return JSONResponse(
            {"error": "internal_error", "message": "the server could not answer this request; it was logged"},
            status_code=500,
            headers=headers,
        )

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse({"error": code, "message": str(exc.detail)}, status_code=exc.status_code)

    routes = [
        Route("/", page("index.html")),
        Route("/rules", page("rules.html")),
        Route("/g/{game_id}", page("table.html")),
        Route("/api/meta", meta),
        Route("/api/games", create_game, methods=["POST"]),
        Route("/api/games/{game_id}", get_game),
        Route("/api/games/{game_id}/actions", post_action, methods=["POST"]),
        Route("/api/games/{game_id}/hint", post_hint, methods=["POST"]),
        Route("/api/games/{game_id}/resign", post_resign, methods=["POST"]),
        Route("/api/games/{game_id}/rematch", post_rematch, methods=["POST"]),
        Route("/api/games/{game_id}/rematch", get_rematch, methods=["GET"]),
        Route("/api/games/{game_id}/replay", get_replay),
        Route("/api/games/{game_id}/review", reviews.endpoint(run_in_threadpool, _limited)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders), Middleware(BodyLimit, limit=max_body)],
        exception_handlers={WebError: web_error, HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.reviews = reviews
    app.state.store = store
    return app
