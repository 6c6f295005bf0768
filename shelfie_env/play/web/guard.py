"""Limits for a table open on a network: request-receive timeout and per-client rates.

* :func:`guarded_h11` — uvicorn's h11 protocol with a deadline for receiving
  each request: a client that has not sent its whole request (headers and body)
  within ``request_timeout`` seconds of its first byte (or of connecting) is
  disconnected. uvicorn itself only times out idle keep-alive connections, so a
  client sending part of a request and stalling would otherwise hold its socket
  (and, for a body, a request task) for ever.
* :class:`RateLimiter` — a token bucket per client address (``N`` per minute,
  bursts up to ``burst``), answered with 429 and ``Retry-After`` by the app.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import Any

REQUEST_TIMEOUT = 10.0
"""Default seconds a client has to send a whole request."""


def guarded_h11(request_timeout: float = REQUEST_TIMEOUT) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's ``H11Protocol`` closing connections whose request takes longer
    than ``request_timeout`` seconds to arrive (pass it as ``uvicorn.Config(http=...)``)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        """H11Protocol with a receive deadline per request."""

        timeout = request_timeout

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._deadline: asyncio.TimerHandle | None = None
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            state = self.conn.their_state
            if state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
                self._arm()  # a request has begun (or goes on): it must be complete by the deadline
            else:
                self._disarm()

        def on_response_complete(self) -> None:
            self._disarm()  # between requests the keep-alive timeout applies
            super().on_response_complete()

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(self.timeout, self._expired)

        def _disarm(self) -> None:
            handle = getattr(self, "_deadline", None)
            if handle is not None:
                handle.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
                self.logger.info(
                    "closing a connection whose request took over %.1f s to arrive", self.timeout
                )
                self.transport.close()  # connection_lost tells a waiting request task it is gone

    return GuardedH11Protocol


class RateLimiter:
    """At most ``per_minute`` events per key and minute, in bursts of up to ``burst`` (token bucket).

    ``per_minute <= 0`` disables the limit. At most ``max_keys`` keys are tracked
    (full buckets are forgotten first), so many addresses cannot grow it without bound.
    """

    def __init__(self, per_minute: float, burst: int | None = None, max_keys: int = 10_000) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst if burst is not None else max(1, math.ceil(per_minute)))
        self.max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def check(self, key: str, now: float | None = None) -> float | None:
        """Take one token for ``key``: None if allowed, else the seconds until one is available."""
        if not self.enabled:
            return None
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return (1.0 - tokens) / self.rate
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > self.max_keys:
                self._prune(now)
            return None

    def _prune(self, now: float) -> None:
        full = [k for k, (t, last) in self._buckets.items() if t + (now - last) * self.rate >= self.burst]
        for k in full:
            del self._buckets[k]
        while len(self._buckets) > self.max_keys:  # all busy: forget the oldest
            del self._buckets[min(self._buckets, key=lambda k: self._buckets[k][1])]
