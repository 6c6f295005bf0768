"""Request bodies: their size limit (an ASGI middleware) and the JSON a route reads.

A route reads a body only when it is sent as ``application/json`` (a page on
another site can post forms and ``text/plain`` without asking; JSON it cannot),
holds at most :data:`MAX_BODY` bytes, is nested at most :data:`MAX_DEPTH`
levels and holds only valid Unicode strings; then a schema
(:mod:`~shelfie_env.play.web.schemas`) parses it.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shelfie_env.play.json_nesting import nesting_exceeds
from shelfie_env.play.web.errors_http import refusal_response
from shelfie_env.play.web.refusals import BadJson, BadRequest, BodyTooLarge, Refused, UnsupportedMediaType
from shelfie_env.play.web.schemas import Body, parse

MAX_BODY = 16 * 1024
"""Default: the largest request body in bytes (413 above it)."""
MAX_DEPTH = 8
"""Deepest nesting of objects and arrays a request body may have (the API needs 3)."""

B = TypeVar("B", bound=Body)


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``limit`` bytes with 413 (before the app sees them)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self._check_length(scope)
            body = await self._read(receive)
        except Refused as exc:
            await refusal_response(exc)(scope, receive, send)
            return
        if body is None:  # the client went away
            return
        await self.app(scope, _replay(body, receive), send)

    def _check_length(self, scope: Scope) -> None:
        """Refuse a declared ``Content-Length`` that is not a number or is over the limit."""
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is None:
            return
        try:
            declared = int(length)
        except ValueError:
            raise BadRequest("invalid Content-Length header") from None
        if declared > self.limit:
            raise self._too_large()

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, counted while it streams in (None: the client disconnected)."""
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > self.limit:
                raise self._too_large()
            more = message.get("more_body", False)
        return body

    def _too_large(self) -> BodyTooLarge:
        return BodyTooLarge(f"request bodies are limited to {self.limit} bytes")


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then the client's later messages."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def parse_body(request: Request, model: type[B]) -> B:
    """The request's JSON body parsed by ``model`` (:class:`BadRequest` names what is wrong)."""
    return parse(model, await read_json(request))


async def read_json(request: Request) -> Any:
    """The request's body decoded from JSON, refused (415, 400 ``bad_json``) as the module says."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise UnsupportedMediaType("send the body as application/json")
    raw = await request.body()
    if not raw:
        raise BadJson("the request needs a JSON body")
    if nesting_exceeds(raw, MAX_DEPTH):
        raise BadJson(f"the body is nested deeper than {MAX_DEPTH} levels")
    body = _decode(raw)
    _check_json(body, 0)
    return body


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadJson(f"the body is not valid JSON: {exc}") from None
    except ValueError:  # an integer literal beyond Python's digit limit
        raise BadJson("the body holds a number too long to read") from None


def _check_json(value: Any, depth: int) -> None:
    """Refuse nesting beyond :data:`MAX_DEPTH` and strings that are not valid Unicode (lone surrogates)."""
    if depth > MAX_DEPTH:
        raise BadJson(f"the body is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_json(k, depth + 1)
            _check_json(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_json(v, depth + 1)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadJson("the body holds a string with an unpaired surrogate") from None


__all__ = ["MAX_BODY", "MAX_DEPTH", "BodyLimit", "parse_body", "read_json"]
