"""Reviews of finished games for ``GET /api/games/{id}/review`` (:mod:`shelfie_env.arena.analysis.review`)
and, from ``td``'s review, each player's error rate as a rating for ``GET /api/games/{id}/error-rating``
(:mod:`shelfie_env.play.error_rating`).

Computed on demand with ``td``'s (or, with ``?value=planner``, the planner's)
exact search, and kept: a finished game never changes, so each game is reviewed
once per value function. Computing a review costs about a second of CPU, so new
reviews are limited per client address (answers from the cache are not). A solo game's review
is exact, in expected final points (:mod:`shelfie_env.arena.analysis.solo_review`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from shelfie_env.arena.analysis.review import review_game
from shelfie_env.play import ladder_levels
from shelfie_env.play.error_rating import JUDGE, error_ratings
from shelfie_env.play.replay import seat_names
from shelfie_env.play.web.guard import RateLimiter
from shelfie_env.play.web.refusals import BadRequest, DamagedGame, GameNotOver
from shelfie_env.play.web.service import GameService

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
        """The review of finished game ``game_id`` by ``value`` (refused: an unknown value, an
        unknown game, a game not over); a solo game's review is exact whatever ``value`` says."""
        check_value(value)
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

    def error_rating(self, game_id: str) -> dict[str, Any]:
        """Each player's regret per decision in ``td``'s review of finished game ``game_id``, the
        rating it corresponds to and the level suggested for the next game: the level nearest
        the person's rating after the game where they were rated, else nearest that estimate."""
        review = self.review(game_id, JUDGE)
        rated = error_ratings(review, JUDGE)
        outcome = self.service.views.ratings(game_id) or []
        for row in rated["players"]:
            mine = next((o for o in outcome if o["seat"] == row["seat"] and o.get("rated")), None)
            row["suggested_from"] = "error rate" if row["suggested_level"] else None
            if mine is not None:
                level = ladder_levels.nearest(mine["rating"], review["num_players"])
                row.update(suggested_level=level, suggested_from="rating",
                           suggested_label=ladder_levels.level_label(level, review["num_players"]))
        return {"game_id": game_id, **rated}

    def _compute(self, game_id: str, value: str) -> dict[str, Any]:
        try:
            replay = self.service.replay(game_id)
        except GameNotOver:
            raise GameNotOver("a game can be reviewed once it is over (played to the end or resigned)") from None
        players = len(replay["seats"])
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
            raise DamagedGame(f"game {game_id} cannot be reviewed: {exc}") from exc
        review["game_id"] = game_id
        return review


def check_value(value: str) -> None:
    """Refuse a value function the reviews do not offer."""
    if value not in REVIEW_VALUES:
        raise BadRequest(f"'value' must be one of {', '.join(REVIEW_VALUES)}, got {value[:40]!r}", code="bad_value")


__all__ = ["REVIEW_VALUES", "REVIEWS_PER_MINUTE", "GameReviews", "check_value"]
