"""Why the web table refuses a request: one exception class per reason, free of HTTP.

Each refusal carries a ``code`` (the ``error`` a client reads), a ``message``
for people and ``details``: extra fields of the answer (``legal`` of an illegal
move, ``retry_after`` of a busy database). :mod:`~shelfie_env.play.web.errors_http`
gives each class its HTTP status.
"""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    """A request the web table refuses; ``code`` overrides the class's own when given."""

    code = "refused"

    def __init__(self, message: str, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details


class BadRequest(Refused):
    """A malformed request: a body or field that is not what the route takes, an unknown bot."""

    code = "bad_request"


class BadJson(BadRequest):
    """A body that is not JSON the server reads: invalid, nested too deep, an unpaired surrogate."""

    code = "bad_json"


class UnsupportedMediaType(Refused):
    """A body not sent as ``application/json``."""

    code = "unsupported_media_type"


class BodyTooLarge(Refused):
    """A body over the server's size limit."""

    code = "body_too_large"


class NotYourSeat(Refused):
    """No token, or a token that does not hold the seat (``missing_token``, ``bad_token``)."""

    code = "bad_token"


class NotFound(Refused):
    """Something asked for that the server does not have."""

    code = "not_found"


class GameNotFound(NotFound):
    """No game with that id."""

    code = "unknown_game"


class HintsUnavailable(NotFound):
    """Hints asked for while the planner that gives them is not installed."""

    code = "no_hints"


class GameStateConflict(Refused):
    """A request the game's present state does not allow."""

    code = "conflict"


class NotYourTurn(GameStateConflict):
    """A move or hint for a seat that is not on turn."""

    code = "not_your_turn"


class StaleMove(GameStateConflict):
    """A move chosen in a position the game has left (its ``expect`` is not the move count)."""

    code = "stale"


class GameOver(GameStateConflict):
    """A move, resignation or hint for a game that is over."""

    code = "game_over"


class GameNotOver(GameStateConflict):
    """A replay, review or rematch of a game still in play."""

    code = "game_not_over"


class SeatTaken(GameStateConflict):
    """A person joining a seat another player holds, or a second seat of the same table."""

    code = "seat_taken"


class RematchGone(GameStateConflict):
    """A rematch deleted while it was asked for."""

    code = "no_rematch"


class IllegalMove(Refused):
    """An action the engine refuses in the game's position."""

    code = "illegal_action"


class RateLimited(Refused):
    """A client address over its rate; ``retry_after`` says in how many seconds to try again."""

    code = "rate_limited"


class DamagedGame(Refused):
    """A stored game that cannot be read."""

    code = "damaged_game"


class StorageBusy(Refused):
    """The database was locked elsewhere for too long: nothing was written."""

    code = "storage_busy"


__all__ = [
    "BadJson",
    "BadRequest",
    "BodyTooLarge",
    "DamagedGame",
    "GameNotFound",
    "GameNotOver",
    "GameOver",
    "GameStateConflict",
    "HintsUnavailable",
    "IllegalMove",
    "NotFound",
    "NotYourSeat",
    "NotYourTurn",
    "RateLimited",
    "Refused",
    "RematchGone",
    "SeatTaken",
    "StaleMove",
    "StorageBusy",
    "UnsupportedMediaType",
]
