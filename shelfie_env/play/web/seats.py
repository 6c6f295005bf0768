"""The seats of a table: people, each with a secret token, and bots built and checked before a
game starts (:class:`BotShelf`)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
from collections.abc import Callable
from typing import Any

from shelfie_env import bots as bots_module
from shelfie_env.bots.levels import find_level
from shelfie_env.play.web.botpool import build
from shelfie_env.play.web.ratings_store import person_id
from shelfie_env.play.web.refusals import BadRequest, NotYourSeat
from shelfie_env.play.web.schemas import SeatSpec, TableBody

log = logging.getLogger("shelfie_env.play.web")


def hash_token(token: str) -> str:
    """What the store keeps of a seat's token."""
    return hashlib.sha256(token.encode()).hexdigest()


def seat_link(game_id: str, seat: int, token: str) -> str:
    """The page link that plays ``seat`` of ``game_id`` with its token (the token stays in the fragment)."""
    return f"/g/{game_id}#seat={seat}&token={token}"


def seat_links(game_id: str, tokens: dict[str, str]) -> dict[str, str]:
    """The page link of each seat in ``tokens`` (seat, as a string -> token)."""
    return {s: seat_link(game_id, int(s), t) for s, t in tokens.items()}


GAME_ONLY = ("resigned", "left", "hinted")
"""Seat fields that belong to one game (a rematch starts without them)."""


def seat_map(num_seats: int) -> list[int]:
    """For each seat of a game, its seat in the rematch: everyone moves one seat on, so the
    second player starts (the first seat is an edge worth about ten points of win rate)."""
    return [(seat - 1) % num_seats for seat in range(num_seats)]


def public_seats(seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The seats as a view shows them: no token hashes."""
    return [{"seat": i, "type": s["type"], "name": s["name"], "bot": s.get("bot")} for i, s in enumerate(seats)]


def token_holder(seats: list[dict[str, Any]], seat: int | None, token: object) -> int:
    """``seat``, once ``token`` is found to be its token (a seat missing or not at the table is a
    :class:`BadRequest`; a token missing or another seat's, :class:`NotYourSeat`)."""
    if seat is None:
        raise BadRequest("missing field 'seat'", code="missing_seat")
    if not 0 <= seat < len(seats):
        raise BadRequest(f"'seat' must be 0..{len(seats) - 1}, got {seat}", code="bad_seat")
    if token is None or token == "":
        raise NotYourSeat(f"a move for seat {seat} needs that seat's token", code="missing_token")
    expected = seats[seat].get("token_hash")
    if not isinstance(token, str) or expected is None or not hmac.compare_digest(hash_token(token), expected):
        raise NotYourSeat(f"this token does not hold seat {seat}", code="bad_token")
    return seat


def seat_holder(seats: list[dict[str, Any]], seat: int | None, token: object, person: str | None = None) -> int:
    """``seat``, once the request is found to hold it: a seat a person joined through its invite
    link (``key_only``) by that person's key (``person``; the invite token, which whoever opened
    the table holds too, no longer counts), any other by its token (:func:`token_holder`)."""
    if seat is not None and 0 <= seat < len(seats) and seats[seat].get("key_only"):
        held = seats[seat].get("person")
        if person is None:
            raise NotYourSeat(f"seat {seat} is played with the person key of the player who took it",
                              code="missing_person")
        if held is None or not hmac.compare_digest(person_id(person), held):
            raise NotYourSeat(f"seat {seat} belongs to another player", code="other_person")
        return seat
    return token_holder(seats, seat, token)


class BotShelf:
    """The bots a table can seat, each built once per table size (which checks that it can play
    there); building one bot never waits on another's build."""

    def __init__(self, make_bot: Callable[..., Any] = bots_module.make) -> None:
        self._make_bot = make_bot
        self._bots: dict[tuple[str, int], Any] = {}
        self._locks: dict[tuple[str, int], threading.Lock] = {}
        self._lock = threading.Lock()

    @staticmethod
    def offered() -> list[str]:
        """The bots a seat may take."""
        return bots_module.table_bots()

    @staticmethod
    def tables() -> dict[str, list[int]]:
        """For every bot, the numbers of players it can play (the setup page offers only those)."""
        out = {}
        for name in bots_module.available():
            try:
                if bots_module.needs_tape(name):
                    continue  # reads the dice ahead: an arena bot, never a table's opponent
                out[name] = list(bots_module.table_sizes(name))
            except Exception:  # a registered bot whose factory cannot even be found
                log.exception("bot %s: its table sizes cannot be read", name)
        return out

    def check(self, seat: int, bot: object, num_players: int) -> None:
        """Refuse a bot that is not offered or cannot be built for this table: before the game, not mid-game."""
        available = self.offered()
        if isinstance(bot, str) and bot.startswith("level-") and bot not in available:
            try:
                find_level(bot)
            except ValueError as exc:  # level-0, level-7, level-banana: the message lists the levels
                raise BadRequest(f"seat {seat}: {exc}", code="unknown_bot") from None
        if not isinstance(bot, str) or bot not in available:
            raise BadRequest(
                f"seat {seat}: unknown bot {bot!r}; available: {', '.join(available)}", code="unknown_bot"
            )
        self.get(bot, num_players)

    def get(self, name: str, num_players: int) -> Any:
        """Bot ``name`` for ``num_players``-player games, built on first use (:class:`BadRequest`
        ``bot_unavailable`` when it cannot be)."""
        key = (name, num_players)
        with self._lock:
            bot = self._bots.get(key)
            if bot is not None:
                return bot
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                bot = self._bots.get(key)
            if bot is None:
                bot = self._build(name, num_players)
                with self._lock:
                    self._bots[key] = bot
            return bot

    def preload(self, bots: tuple[tuple[str, int], ...]) -> None:
        """Build these ``(name, num_players)`` bots in this thread (slow ones: model files)."""
        for name, num_players in bots:
            try:
                self.get(name, num_players)
            except BadRequest as exc:
                log.warning("bot %s for %d players: %s", name, num_players, exc.message)

    def _build(self, name: str, num_players: int) -> Any:
        """Build bot ``name`` for a ``num_players``-player table (a learned bot: the model for that size)."""
        try:
            if bots_module.needs_tape(name):
                raise ValueError("it reads the dice ahead and plays only arena games on common dice")
            return build(name, num_players, self._make_bot)
        except Exception as exc:  # a bot that cannot be built is the request's problem
            raise BadRequest(
                f"bot {name!r} cannot play a {num_players}-player game here: {exc}", code="bot_unavailable"
            ) from exc


def new_seats(spec: TableBody, shelf: BotShelf) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The seats ``spec`` asks for, and a new token for each person's seat; the first person seat
    is the opener's own (``opener``: joining it keeps its token valid, see :func:`seat_holder`)."""
    seats: list[dict[str, Any]] = []
    tokens: dict[int, str] = {}
    for i, seat in enumerate(spec.seats):
        if seat.type == "human":
            tokens[i] = secrets.token_urlsafe(24)
            seats.append(_person(i, seat, tokens[i]))
            if len(tokens) == 1:
                seats[-1]["opener"] = True  # its token is the opener's own; the others are invitations
        else:
            shelf.check(i, seat.bot, len(spec.seats))
            seats.append({"type": "bot", "name": seat.name or f"{seat.bot} bot", "bot": seat.bot, "token_hash": None})
    return seats, tokens


def _person(index: int, seat: SeatSpec, token: str) -> dict[str, Any]:
    """The stored seat of a person: name, the hash of the seat's token and, when the seat was
    opened with a person key, the person's id (their games are rated)."""
    stored = {"type": "human", "name": seat.name or f"Player {index + 1}", "bot": None,
              "token_hash": hash_token(token)}
    if seat.person:
        stored["person"] = person_id(seat.person)
    return stored


__all__ = ["GAME_ONLY", "BotShelf", "hash_token", "new_seats", "public_seats", "seat_holder", "seat_link",
           "seat_links", "seat_map", "token_holder"]
