"""Rematches: a finished game played again by the same people and bots, each one seat on.

A game has one rematch however many ask for it: the first request opens it, the
others get that one. The rematch keeps the people's names and tokens (a token
holds its person's seat in both games) and deals new dice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from shelfie_env.play.web.lobby import Lobby
from shelfie_env.play.web.records import GameRow
from shelfie_env.play.web.refusals import GameNotFound, GameNotOver, RematchGone
from shelfie_env.play.web.schemas import RematchBody
from shelfie_env.play.web.seats import GAME_ONLY, BotShelf, seat_holder, seat_links, seat_map
from shelfie_env.play.web.sessions import MAX_ID, SessionTable
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

        ``body`` names one of the game's people (a table of bots only needs neither field).
        ``admit()`` is called just before a rematch is opened (to refuse a client over its rate).
        Returns the rematch's first view plus ``rematch_of``, ``seat_map``, and ``tokens``/``links``
        of the asker's seat there; and whether this request opened it.
        """
        row = self.sessions.row(game_id)
        seat = self._asker(row, body)
        if row.status != "over":
            raise GameNotOver("a rematch can be started once the game is over")
        opened = self._open(row, admit) if row.rematch is None else None
        view = opened or self.views.game(row.rematch or self._rematch_id(game_id))
        return _answer(view, game_id, len(row.seats), seat, body.token), opened is not None

    def status(self, game_id: str) -> dict[str, Any]:
        """``{"over", "rematch"}`` of ``game_id`` (one small read: pages of finished games poll it)."""
        found = self.store.rematch_of(game_id) if isinstance(game_id, str) and len(game_id) <= MAX_ID else None
        if found is None:
            raise GameNotFound(f"no game with id {game_id!r}")
        status, num_seats, rematch_id = found
        return {"over": status == "over", "rematch": rematch_info(rematch_id, num_seats)}

    @staticmethod
    def _asker(row: GameRow, body: RematchBody) -> int | None:
        """The asker's seat: checked against its token at a table with people (None at a table of bots)."""
        people = any(s.get("type") == "human" for s in row.seats)
        return seat_holder(row.seats, body.seat, body.token) if people or body.seat is not None else None

    def _open(self, row: GameRow, admit: Callable[[], None]) -> dict[str, Any] | None:
        """Open the rematch of finished game ``row`` (its first view); None when another request
        opened it meanwhile."""
        seats = self._seats(row.seats)  # a bot that cannot play is refused before the rate is
        admit()
        try:
            return self.lobby.open(seats, functools.partial(self.store.create_rematch, row.id))
        except RematchTakenError:
            return None

    def _seats(self, seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rematch's seats: the same people (names, token hashes, identities) and bots, each one
        seat on; what belonged to the finished game (who resigned, who asked for hints) stays there."""
        n = len(seats)
        moved: list[dict[str, Any]] = [{}] * n
        for old, new in enumerate(seat_map(n)):
            moved[new] = {k: v for k, v in seats[old].items() if k not in GAME_ONLY}
        for i, s in enumerate(moved):
            if s.get("type") == "bot":
                self.shelf.check(i, s.get("bot"), n)
        return moved

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
