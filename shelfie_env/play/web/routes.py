"""The web table's routes: the pages, and the handlers of the JSON API.

The handlers are plain functions: each takes the service and the limits it
shares with the others from ``request.app.state`` (``service``, ``reviews``,
``limits``), parses the request's body with its schema
(:mod:`~shelfie_env.play.web.schemas`) and runs the game logic in one of the
app's worker threads. Refusals are raised, and answered by
:mod:`~shelfie_env.play.web.errors_http`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from shelfie_env.bots.levels import TABLE_SIZES
from shelfie_env.game.actions import SYMBOLS
from shelfie_env.game.engine import MAX_PLAYERS
from shelfie_env.play.ladder_levels import FIRST_LEVEL, level_rows
from shelfie_env.play.web.bodies import parse_body
from shelfie_env.play.web.guard import RateLimiter
from shelfie_env.play.web.refusals import BadRequest, RateLimited
from shelfie_env.play.web.review import GameReviews, check_value
from shelfie_env.play.web.schemas import (
    MAX_NAME,
    HintBody,
    JoinBody,
    MoveBody,
    PersonBody,
    RematchBody,
    ResignBody,
    TableBody,
)
from shelfie_env.play.web.service import GameService

STATIC = Path(__file__).parent / "static"
DEFAULT_BOT = "td"
"""The bot the start page seats by default: the project's one default opponent."""
BOT_NOTES = {"td": "the shipped self-taught bot"}
"""What the start page says of a bot beside its name, in the terminal help's words."""
MAX_SINCE = 2**31
"""The largest ``since`` a view is asked for."""


@dataclass(frozen=True)
class ApiLimits:
    """What the handlers share beside the service: ``workers`` bounds the requests running game
    logic at once (it is CPU-bound Python, so a few suffice), ``games`` and ``hints`` are the
    per-address rates of new tables and hints, ``max_body`` the body size limit (for ``/api/meta``)."""

    workers: anyio.CapacityLimiter
    games: RateLimiter
    hints: RateLimiter
    max_body: int


def _service(request: Request) -> GameService:
    return request.app.state.service


def _limits(request: Request) -> ApiLimits:
    return request.app.state.limits


async def _run(request: Request, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in one of the app's worker threads (the event loop stays free for I/O)."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=_limits(request).workers)


def admit(limiter: RateLimiter, request: Request, what: str) -> None:
    """Refuse (:class:`RateLimited`) the client address behind ``request`` when it is over ``limiter``'s rate."""
    key = request.client.host if request.client else "unknown"
    wait = limiter.check(key)
    if wait is not None:
        retry = max(1, math.ceil(wait))
        raise RateLimited(f"too many {what} from your address; try again in {retry} s", retry_after=retry)


def since_param(request: Request) -> int:
    """The ``since`` query parameter: an integer from 0 (default 0)."""
    raw = request.query_params.get("since", "0")
    try:
        since = int(raw)
    except ValueError:
        raise BadRequest(f"'since' must be an integer, got {raw[:40]!r}", code="bad_since") from None
    if not 0 <= since <= MAX_SINCE:
        raise BadRequest("'since' must be >= 0", code="bad_since")
    return since


# ----------------------------------------------------------------- pages
def _page(name: str) -> Response:
    return FileResponse(STATIC / name, media_type="text/html")


async def start_page(request: Request) -> Response:
    return _page("index.html")


async def rules_page(request: Request) -> Response:
    return _page("rules.html")


async def table_page(request: Request) -> Response:
    return _page("table.html")


async def person_page(request: Request) -> Response:
    return _page("me.html")


# ------------------------------------------------------------------- API
async def meta(request: Request) -> Response:
    """``GET /api/meta``: the bots, the levels with their ratings per table size, whether hints
    exist, the limits a page needs."""
    service = _service(request)
    names = await _run(request, service.bot_names)
    tables = await _run(request, service.bot_tables)
    levels = await _run(request, lambda: {str(n): level_rows(n) for n in TABLE_SIZES})
    return JSONResponse(
        {
            "bots": names,
            "bot_tables": tables,
            "default_bot": DEFAULT_BOT,
            "bot_notes": {b: note for b, note in BOT_NOTES.items() if b in names},
            "levels": levels,
            "first_level": FIRST_LEVEL,
            "hint": service.hints_available(),
            "max_players": MAX_PLAYERS,
            "max_name": MAX_NAME,
            "symbols": list(SYMBOLS),
            "max_body": _limits(request).max_body,
            "rating_rules": service.rating_rules(),
        }
    )


async def create_game(request: Request) -> Response:
    """``POST /api/games``: a new table; its first view plus each person's token and link."""
    spec = await parse_body(request, TableBody)
    admit(_limits(request).games, request, "new tables")
    return JSONResponse(await _run(request, _service(request).create, spec), status_code=201)


async def get_game(request: Request) -> Response:
    """``GET /api/games/{id}?since=N``: the view, with the moves from index N on."""
    game_id, since = request.path_params["game_id"], since_param(request)
    return JSONResponse(await _run(request, _service(request).view, game_id, since))


async def post_action(request: Request) -> Response:
    """``POST /api/games/{id}/actions``: a seat's move; the view after it."""
    move = await parse_body(request, MoveBody)
    return JSONResponse(await _run(request, _service(request).act, request.path_params["game_id"], move))


async def post_resign(request: Request) -> Response:
    """``POST /api/games/{id}/resign``: a seat resigns; the view of the game it ended."""
    body = await parse_body(request, ResignBody)
    return JSONResponse(await _run(request, _service(request).resign, request.path_params["game_id"], body))


async def post_hint(request: Request) -> Response:
    """``POST /api/games/{id}/hint``: the best moves for the seat on turn."""
    body = await parse_body(request, HintBody)
    admit(_limits(request).hints, request, "hint requests")
    return JSONResponse(await _run(request, _service(request).hint, request.path_params["game_id"], body))


async def post_rematch(request: Request) -> Response:
    """``POST /api/games/{id}/rematch``: the rematch, 201 when this request opened it (which counts
    as a new table for the rate limit), else 200."""
    body = await parse_body(request, RematchBody)
    opening = functools.partial(admit, _limits(request).games, request, "new tables")
    game_id = request.path_params["game_id"]
    view, created = await _run(request, _service(request).rematch, game_id, body, opening)
    return JSONResponse(view, status_code=201 if created else 200)


async def get_rematch(request: Request) -> Response:
    """``GET /api/games/{id}/rematch``: whether the finished game has a rematch yet."""
    return JSONResponse(await _run(request, _service(request).rematch_status, request.path_params["game_id"]))


async def post_join(request: Request) -> Response:
    """``POST /api/games/{id}/join``: the person (their browser's key) playing a seat, for their rating."""
    body = await parse_body(request, JoinBody)
    return JSONResponse(await _run(request, _service(request).join, request.path_params["game_id"], body))


async def post_person(request: Request) -> Response:
    """``POST /api/person``: a person's ratings per table size and their latest games."""
    body = await parse_body(request, PersonBody)
    return JSONResponse(await _run(request, _service(request).person, body))


async def get_error_rating(request: Request) -> Response:
    """``GET /api/games/{id}/error-rating``: each player's error rate in ``td``'s review, as a rating."""
    reviews: GameReviews = request.app.state.reviews
    game_id = request.path_params["game_id"]
    if reviews.cached(game_id, "td") is None:
        admit(reviews.limiter, request, "game reviews")
    return JSONResponse(await _run(request, reviews.error_rating, game_id))


async def get_replay(request: Request) -> Response:
    """``GET /api/games/{id}/replay``: the replay JSON of a finished game, as a download."""
    game_id = request.path_params["game_id"]
    replay = await _run(request, _service(request).replay, game_id)
    return JSONResponse(replay, headers={"content-disposition": f'attachment; filename="shelfie-{game_id}.json"'})


async def get_review(request: Request) -> Response:
    """``GET /api/games/{id}/review?value=td``: the review of a finished game (new ones are rate limited)."""
    reviews: GameReviews = request.app.state.reviews
    game_id = request.path_params["game_id"]
    value = request.query_params.get("value", "td")
    check_value(value)
    review = reviews.cached(game_id, value)
    if review is None:
        admit(reviews.limiter, request, "game reviews")
        review = await _run(request, reviews.review, game_id, value)
    return JSONResponse(review)


ROUTES: list[BaseRoute] = [
    Route("/", start_page),
    Route("/rules", rules_page),
    Route("/g/{game_id}", table_page),
    Route("/me", person_page),
    Route("/api/meta", meta),
    Route("/api/games", create_game, methods=["POST"]),
    Route("/api/games/{game_id}", get_game),
    Route("/api/games/{game_id}/actions", post_action, methods=["POST"]),
    Route("/api/games/{game_id}/hint", post_hint, methods=["POST"]),
    Route("/api/games/{game_id}/resign", post_resign, methods=["POST"]),
    Route("/api/games/{game_id}/rematch", post_rematch, methods=["POST"]),
    Route("/api/games/{game_id}/rematch", get_rematch, methods=["GET"]),
    Route("/api/games/{game_id}/replay", get_replay),
    Route("/api/games/{game_id}/review", get_review),
    Route("/api/games/{game_id}/error-rating", get_error_rating),
    Route("/api/games/{game_id}/join", post_join, methods=["POST"]),
    Route("/api/person", post_person, methods=["POST"]),
    Mount("/static", StaticFiles(directory=STATIC), name="static"),
]
"""The app's routes."""


__all__ = ["BOT_NOTES", "DEFAULT_BOT", "ROUTES", "STATIC", "ApiLimits", "admit", "since_param"]
