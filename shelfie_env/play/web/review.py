"""``GET /api/games/{id}/review``: the review of a finished game (:mod:`shelfie_env.arena.analysis.review`).

Computed on demand with ``td``'s (or, with ``?value=planner``, the planner's)
exact search, and kept: a finished game never changes, so each game is reviewed
once per value function. Computing a review costs about a second of CPU, so new
reviews are limited per client address (answers from the cache are not).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from shelfie_env.arena.analysis.review import review_game
from shelfie_env.play.replay import seat_names
from shelfie_env.play.web.guard import RateLimiter
from shelfie_env.play.web.service import GameService, WebError

REVIEWS_PER_MINUTE = 6.0
"""New reviews (not yet cached) one client address may ask for per minute."""
REVIEW_VALUES = ("td", "planner")
"""Value functions the endpoint offers (``?value=``; default ``td``)."""
CACHED_REVIEWS = 512
"""Reviews kept in memory (the least recently asked for are dropped first)."""


class GameReviews:
    """Reviews of finished games, computed once per game and value function and kept."""

    def __init__(
        self, service: GameService, per_minute: float = REVIEWS_PER_MINUTE, size: int = CACHED_REVIEWS
    ) -> None:
        self.service = service
        self.limiter = RateLimiter(per_minute)
        self.size = size
        self._cache: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    def cached(self, game_id: str, value: str) -> dict[str, Any] | None:
        with self._lock:
            review = self._cache.get((game_id, value))
            if review is not None:
                self._cache.move_to_end((game_id, value))
            return review

    def review(self, game_id: str, value: str = "td") -> dict[str, Any]:
        """The review of finished game ``game_id`` (404 unknown, 409 not over or solo)."""
        key = (game_id, value)
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one computation per game, however many ask at once
            review = self.cached(game_id, value)
            if review is None:
                review = self._compute(game_id, value)
                with self._lock:
                    self._cache[key] = review
                    while len(self._cache) > self.size:
                        self._cache.popitem(last=False)
        with self._lock:
            self._locks.pop(key, None)
        return review

    def _compute(self, game_id: str, value: str) -> dict[str, Any]:
        try:
            replay = self.service.replay(game_id)  # 404 unknown_game, 409 game_not_over
        except WebError as exc:
            if exc.code != "game_not_over":
                raise
            raise WebError(
                409, "game_not_over", "a game can be reviewed once it is over (played to the end or resigned)"
            ) from None
        players = len(replay["seats"])
        if players < 2:
            raise WebError(409, "solo_game", "a solo game has no review: luck is measured against rivals")
        try:
            review = review_game(
                replay["initial_state"],
                [a["action"] for a in replay["actions"]],
                replay["states"],
                value=value,
                names=seat_names(replay, players),
                resigned=replay.get("resigned"),
            )
        except ValueError as exc:
            raise WebError(500, "damaged_game", f"game {game_id} cannot be reviewed: {exc}") from exc
        review["game_id"] = game_id
        return review

    def endpoint(
        self,
        run: Callable[..., Awaitable[Any]],
        limited: Callable[[RateLimiter, Request, str], None],
    ) -> Callable[[Request], Awaitable[Response]]:
        """The route's handler: ``run`` runs a function in the app's worker threads, ``limited``
        raises 429 for a client over a limiter's rate."""

        async def get_review(request: Request) -> Response:
            game_id = request.path_params["game_id"]
            value = request.query_params.get("value", "td")
            if value not in REVIEW_VALUES:
                raise WebError(
                    400, "bad_value", f"'value' must be one of {', '.join(REVIEW_VALUES)}, got {value[:40]!r}"
                )
            review = self.cached(game_id, value)
            if review is None:
                limited(self.limiter, request, "game reviews")
                review = await run(self.review, game_id, value)
            return JSONResponse(review)

        return get_review


__all__ = ["REVIEWS_PER_MINUTE", "GameReviews"]
