"""Rematches: a finished game played again by the same people and bots, each one seat on.

A game has one rematch however many ask for it: the first request opens it, the
others get that one. The rematch keeps the people's names and tokens (a token
holds its person's seat in both games) and deals new dice.

It carries a person (their rating) only when that person opens or asks for it: the asker's
seat keeps its person; every other seat starts without one, and a seat a person had joined
(one that answers to their key only) is kept for them, played by nobody until they ask for
the rematch with their key. A seat's token alone finds an open rematch but opens none, and
takes no seat there, for a seat a person joined.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from shelfie_env.play.web.lobby import Lobby
from shelfie_env.play.web.records import GameRow
from shelfie_env.play.web.refusals import GameNotFound, GameNotOver, NotYourSeat, RematchGone
from shelfie_env.play.web.schemas import RematchBody
from shelfie_env.play.web.seats import GAME_ONLY, BotShelf, seat_holder, seat_links, seat_map, token_holder
from shelfie_env.play.web.sessions import MAX_ID, SessionTable, storage_busy
from shelfie_env.play.web.store import GameStore, RematchTakenError
from shelfie_env.play.web.views import Views, rematch_info


def admit_all() -> None:
    """An ``admit`` that admits every rematch."""


class Rematches:
    """Opens and finds the rematches of finished games."""

    def __init__(self, store: GameStore, sessions: SessionTable, views: Views, lobby: Lobby, shelf: BotShelf) -> None:
        self.store = store
        self.sessions = sessions
        self.views = views
        self.lobby = lobby
        self.shelf = shelf

    def rematch(
        self, game_id: str, body: RematchBody, admit: Callable[[], None] = admit_all
    ) -> tuple[dict[str, Any], bool]:
        """Start the rematch of finished game ``game_id``, or find the one already started.

        ``body`` names one of the game's people: seat and token, and for a seat a person joined their
        person key (a table of bots only needs none of them).
        ``admit()`` is called just before a rematch is opened (to refuse a client over its rate).
        Returns the rematch's first view plus ``rematch_of``, ``seat_map``, and ``tokens``/``links``
        of the asker's seat there; and whether this request opened it.
        """
        row = self.sessions.row(game_id)
        seat, proven = self._asker(row, body)
        if row.status != "over":
            raise GameNotOver("a rematch can be started once the game is over")
        if row.rematch is None and not proven:
            raise NotYourSeat(f"seat {seat} belongs to the player who joined it: only their key opens its rematch",
                              code="missing_person" if body.person is None else "other_person")
        opened = self._open(row, seat, admit) if row.rematch is None else None
        view = opened or self.views.game(row.rematch or self._rematch_id(game_id))
        if opened is None and proven and seat is not None:
            self._take_seat(view["game_id"], row.seats[seat], seat_map(len(row.seats))[seat])
        return _answer(view, game_id, len(row.seats), seat, body.token), opened is not None

    def status(self, game_id: str) -> dict[str, Any]:
        """``{"over", "rematch"}`` of ``game_id`` (one small read: pages of finished games poll it)."""
        found = self.store.rematch_of(game_id) if isinstance(game_id, str) and len(game_id) <= MAX_ID else None
        if found is None:
            raise GameNotFound(f"no game with id {game_id!r}")
        status, num_seats, rematch_id = found
        return {"over": status == "over", "rematch": rematch_info(rematch_id, num_seats)}

    @staticmethod
    def _asker(row: GameRow, body: RematchBody) -> tuple[int | None, bool]:
        """The asker's seat (None at a table of bots) and whether the asker proved to be its player
        (:func:`seat_holder`); the token alone of a seat a person joined only finds an open rematch."""
        people = any(s.get("type") == "human" for s in row.seats)
        if not people and body.seat is None:
            return None, True
        try:
            return seat_holder(row.seats, body.seat, body.token, body.person), True
        except NotYourSeat:
            return token_holder(row.seats, body.seat, body.token), False

    def _open(self, row: GameRow, asker: int | None, admit: Callable[[], None]) -> dict[str, Any] | None:
        """Open the rematch of finished game ``row`` (its first view); None when another request
        opened it meanwhile."""
        seats = self._seats(row.seats, asker)  # a bot that cannot play is refused before the rate is
        admit()
        try:
            return self.lobby.open(seats, functools.partial(self.store.create_rematch, row.id))
        except RematchTakenError:
            return None

    def _seats(self, seats: list[dict[str, Any]], asker: int | None) -> list[dict[str, Any]]:
        """The rematch's seats: the same people (names, token hashes) and bots, each one seat on;
        only the asker's seat keeps its person, a seat another person had joined is kept for them.
        What belonged to the finished game (who resigned or left, who asked for hints) stays there."""
        n = len(seats)
        moved: list[dict[str, Any]] = [{}] * n
        for old, new in enumerate(seat_map(n)):
            seat = {k: v for k, v in seats[old].items() if k not in GAME_ONLY}
            if old != asker:
                seat.pop("person", None)  # kept for its player (key_only) when they had joined it
            moved[new] = seat
        for i, s in enumerate(moved):
            if s.get("type") == "bot":
                self.shelf.check(i, s.get("bot"), n)
        return moved

    def _take_seat(self, rematch_id: str, old: dict[str, Any], seat: int) -> None:
        """Seat the player of ``old`` (their seat in the finished game) at their seat of the open
        rematch, when it has no person yet and has not moved."""
        person = old.get("person")
        if person is None:
            return
        with self.sessions.locked(rematch_id, gone_ok=True) as session:
            if session is None or session.seats[seat].get("person") is not None:
                return
            if self.store.seat_decisions(rematch_id).get(seat, 0):
                return  # played without its person meanwhile: it stays unrated
            key_only = bool(old.get("key_only"))
            with storage_busy("the rematch was found but your seat there not taken; ask again"):
                if self.store.bind_person(rematch_id, seat, person, key_only) != person:
                    return
            session.seats[seat]["person"] = person
            if key_only:
                session.seats[seat]["key_only"] = True

    def _rematch_id(self, game_id: str) -> str:
        found = self.store.rematch_of(game_id)
        if found is None or found[2] is None:  # deleted meanwhile: cannot happen to a game just linked
            raise RematchGone(f"game {game_id} has no rematch now; ask again")
        return found[2]


def _answer(view: dict[str, Any], of: str, num_seats: int, seat: int | None, token: object) -> dict[str, Any]:
    """The rematch's view with what the asker needs to take their seat there."""
    mapping = seat_map(num_seats)
    mine = {} if seat is None or not isinstance(token, str) else {str(mapping[seat]): token}
    return {**view, "rematch_of": of, "seat_map": mapping, "tokens": mine, "links": seat_links(view["game_id"], mine)}


__all__ = ["Rematches", "admit_all"]
