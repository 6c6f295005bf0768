"""Response headers of every answer: a strict Content-Security-Policy and friends, and on API
answers ``Cache-Control: no-store`` and ``Server-Timing``."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response, and to API answers
    :data:`NO_STORE` and ``Server-Timing: app;dur=<ms>`` (from the request's arrival at the app
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
                timing = [_server_timing(start)] if api else []
                message["headers"] = list(message.get("headers", [])) + extra + timing
            await send(message)

        await self.app(scope, receive, with_headers)


def _server_timing(start: float) -> tuple[bytes, bytes]:
    """The ``Server-Timing`` header of an answer to a request that arrived at ``start``."""
    return (b"server-timing", b"app;dur=%.1f" % ((time.perf_counter() - start) * 1000))


__all__ = ["NO_STORE", "SECURITY_HEADERS", "SecurityHeaders"]
