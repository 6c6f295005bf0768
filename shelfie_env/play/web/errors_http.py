"""The HTTP face of refusals: the status of each :class:`~.refusals.Refused` class and the app's
exception handlers. Every error answer is a JSON body ``{"error": code, "message": text, ...}``."""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from shelfie_env.play.web.refusals import (
    BadRequest,
    BodyTooLarge,
    DamagedGame,
    GameStateConflict,
    IllegalMove,
    NotFound,
    NotYourSeat,
    RateLimited,
    Refused,
    StorageBusy,
    UnsupportedMediaType,
)
from shelfie_env.play.web.security import SECURITY_HEADERS

log = logging.getLogger("shelfie_env.play.web")

STATUS: dict[type[Refused], int] = {
    Refused: 400,
    BadRequest: 400,
    NotYourSeat: 403,
    NotFound: 404,
    GameStateConflict: 409,
    BodyTooLarge: 413,
    UnsupportedMediaType: 415,
    IllegalMove: 422,
    RateLimited: 429,
    DamagedGame: 500,
    StorageBusy: 503,
}
"""The status of each refusal class (a subclass has its nearest ancestor's)."""

ROUTING_CODES = {404: "not_found", 405: "method_not_allowed"}
"""The ``error`` of Starlette's own refusals (no such route, a method the route does not take)."""


def status_of(exc: Refused) -> int:
    """The HTTP status of ``exc``: that of the nearest of its classes in :data:`STATUS`."""
    return next(STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS)


def error_body(exc: Refused) -> dict[str, Any]:
    """The JSON body of the answer refusing a request with ``exc``."""
    return {"error": exc.code, "message": exc.message, **exc.details}


def refusal_response(exc: Refused) -> JSONResponse:
    """The answer to a refused request (with ``Retry-After`` when ``exc`` says when to try again)."""
    retry = exc.details.get("retry_after")
    headers = {"retry-after": str(retry)} if retry is not None else None
    return JSONResponse(error_body(exc), status_code=status_of(exc), headers=headers)


async def refused(request: Request, exc: Exception) -> Response:
    """Exception handler: a refusal raised by a route or the service."""
    assert isinstance(exc, Refused)
    return refusal_response(exc)


async def routing_error(request: Request, exc: Exception) -> Response:
    """Exception handler: Starlette's own refusals (404 no route, 405 method) as JSON."""
    assert isinstance(exc, HTTPException)
    code = ROUTING_CODES.get(exc.status_code, "http_error")
    return JSONResponse({"error": code, "message": str(exc.detail)}, status_code=exc.status_code)


async def server_error(request: Request, exc: Exception) -> Response:
    """Exception handler: anything unexpected, logged and answered 500 without its details (outside
    the middleware, so with the security headers of its own)."""
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    headers = {k.decode(): v.decode() for k, v in SECURITY_HEADERS}
    return JSONResponse(
        {"error": "internal_error", "message": "the server could not answer this request; it was logged"},
        status_code=500,
        headers=headers,
    )


HANDLERS = {Refused: refused, HTTPException: routing_error, Exception: server_error}
"""The app's exception handlers."""


__all__ = ["HANDLERS", "STATUS", "error_body", "refusal_response", "status_of"]
