"""The web table: a Starlette app serving the page and a small JSON API.

``create_app(db_path=...)`` opens (or creates) the SQLite database and returns
the ASGI app; its lifespan starts the games service's background work (the
unfinished games whose bot is due play on; every other game is loaded when
asked for) and stops it at shutdown.

API (all JSON; errors are ``{"error": code, "message": text}`` with a 4xx status):

=======  ===============================  ==============================================
GET      /api/meta                        bot names, levels and ratings, hints?, limits
POST     /api/games                       ``{"seats": [...]}`` -> first view + tokens/links
GET      /api/games/{id}?since=N          public view, with the moves from index N
POST     /api/games/{id}/actions          ``{"seat", "token", "action", "expect"}``
POST     /api/games/{id}/hint             ``{"seat", "token"[, "k"]}`` -> top moves
POST     /api/games/{id}/resign           ``{"seat", "token"}`` -> the view of the game it ended
POST     /api/games/{id}/rematch          ``{"seat", "token"}`` -> the rematch (opened once)
GET      /api/games/{id}/rematch          whether the finished game has a rematch yet
GET      /api/games/{id}/replay           replay JSON of a finished game
GET      /api/games/{id}/review           luck, regrets and mistakes of a finished game
GET      /api/games/{id}/error-rating     each player's error rate as a rating, the next level
POST     /api/games/{id}/join             ``{"seat", "token", "person"}``: who plays the seat
POST     /api/person                      ``{"person"}`` -> the person's ratings and games
=======  ===============================  ==============================================

The routes are :mod:`~shelfie_env.play.web.routes`, the bodies they take
:mod:`~shelfie_env.play.web.schemas`, the status of each refusal
:mod:`~shelfie_env.play.web.errors_http`.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware

from shelfie_env import bots as bots_module
from shelfie_env.play.web.bodies import MAX_BODY, BodyLimit
from shelfie_env.play.web.database import default_db_path
from shelfie_env.play.web.errors_http import HANDLERS
from shelfie_env.play.web.guard import RateLimiter
from shelfie_env.play.web.housekeeping import INACTIVE_S, Expiry
from shelfie_env.play.web.review import GameReviews
from shelfie_env.play.web.routes import ROUTES, ApiLimits
from shelfie_env.play.web.security import SecurityHeaders
from shelfie_env.play.web.service import GameService
from shelfie_env.play.web.store import WRITE_TIMEOUT, GameStore

GAMES_PER_MINUTE = 10.0
"""Default: new tables one client address may open per minute (in bursts of as many)."""
HINTS_PER_MINUTE = 30.0
"""Default: hint requests one client address may send per minute."""
EXPIRE_DAYS = 30.0
"""Default: an unfinished game with no move for this many days is deleted."""
DAY_S = 86400.0
HOUR_S = 3600.0
INACTIVE_HOURS = INACTIVE_S / HOUR_S
"""Default: a game that can move a rating, with no move for this many hours, ends as the
resignation of the person on turn."""

log = logging.getLogger("shelfie_env.play.web")


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


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Start the games service's background work with the server, and stop it after."""
    service: GameService = app.state.service
    await anyio.to_thread.run_sync(service.start)
    try:
        yield
    finally:
        await anyio.to_thread.run_sync(service.close)


def _days(days: float | None) -> float | None:
    return None if days is None else days * DAY_S


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
    inactive_hours: float | None = INACTIVE_HOURS,
    write_timeout: float = WRITE_TIMEOUT,
    preload: bool = True,
    bot_table_pace: float | None = None,
) -> Starlette:
    """The ASGI app for the games stored at ``db_path`` (default :func:`default_db_path`).

    ``max_body`` caps request bodies (413 above it); ``worker_threads`` is how many
    requests run game logic at the same time (it is CPU-bound Python, so a few suffice).
    Bots play in ``bot_workers`` background threads, their search in ``bot_processes``
    worker processes (0: in those threads). Each client address may open
    ``games_per_minute`` tables and ask ``hints_per_minute`` hints (0: no limit; 429 above).
    Unfinished games without a move for ``expire_days`` days and finished games older
    than ``keep_finished_days`` are deleted (None keeps them); an unfinished game that can move
    a rating is ended instead, as the resignation of the person on turn, after ``inactive_hours``
    without a move (or at its expiry, if sooner; None: only then). ``write_timeout`` bounds
    a write's wait for a database locked elsewhere. ``preload`` builds the learned bots
    in the background at start-up, so the first table with one does not wait for it.
    ``bot_table_pace`` is the pause between moves at a table of bots only (default
    :attr:`~shelfie_env.play.web.botturns.BotTurns.bots_only_pace_s`).

    Nothing runs in the background until the app's lifespan starts (or, for a host that
    runs no lifespan, until the first request that needs the bots).
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
        warm=slow_bots,
        expiry=Expiry(active_s=_days(expire_days), over_s=_days(keep_finished_days),
                      inactive_s=None if inactive_hours is None else inactive_hours * HOUR_S),
    )
    if bot_table_pace is not None:
        service.bots_only_pace_s = bot_table_pace
    app = Starlette(
        routes=ROUTES,
        middleware=[Middleware(SecurityHeaders), Middleware(BodyLimit, limit=max_body)],
        exception_handlers=HANDLERS,
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.store = store
    app.state.reviews = GameReviews(service)
    # Game logic is CPU-bound Python: a few worker threads keep the event loop free for I/O
    # without dozens of threads fighting over the GIL (which made the latency tail long).
    app.state.limits = ApiLimits(
        workers=anyio.CapacityLimiter(worker_threads),
        games=RateLimiter(games_per_minute),
        hints=RateLimiter(hints_per_minute),
        max_body=max_body,
    )
    return app


__all__ = ["EXPIRE_DAYS", "GAMES_PER_MINUTE", "HINTS_PER_MINUTE", "INACTIVE_HOURS", "MAX_BODY", "create_app",
           "default_db_path"]
