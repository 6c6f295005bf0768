"""The people at the web tables: who holds a seat (a browser's person key, bound to the seat it
opened or joined) and what the person page shows (their ratings and games).

A browser keeps one random *person key* in its local storage and sends it with the seat it
opens (``POST /api/games``) and with each seat it plays through an invite link
(``POST /api/games/{id}/join``); the store keeps only its SHA-256 (the person's id), in the
seat. The ratings themselves are :mod:`shelfie_env.play.rated_games`'.
"""

from __future__ import annotations

from typing import Any

from shelfie_env.play.rated_games import person_report
from shelfie_env.play.web.ratings_store import person_id
from shelfie_env.play.web.refusals import GameOver, SeatTaken
from shelfie_env.play.web.schemas import JoinBody, PersonBody
from shelfie_env.play.web.seats import seat_holder
from shelfie_env.play.web.sessions import SessionTable, storage_busy
from shelfie_env.play.web.store import GameStore


class People:
    """Binds people to the seats they play and reads their ratings."""

    def __init__(self, store: GameStore, sessions: SessionTable) -> None:
        self.store = store
        self.sessions = sessions

    def join(self, game_id: str, body: JoinBody) -> dict[str, Any]:
        """Bind the person of ``body`` to the seat its token holds, in a game in play: ``{"seat",
        "joined"}`` (``joined`` false: the seat was already theirs). Refused: the game is over, the
        seat is another person's, or the person holds another seat of the table."""
        with self.sessions.locked(game_id) as session:
            if session is None:
                self.sessions.row(game_id)  # an unknown game is not found, a finished one over
                raise GameOver("the game is over: a player joins a seat while the game is in play")
            seat = seat_holder(session.seats, body.seat, body.token)
            me = person_id(str(body.person))
            held = session.seats[seat].get("person")
            if held == me:
                return {"seat": seat, "joined": False}
            if held is not None:
                raise SeatTaken(f"seat {seat} is another player's")
            other = next((i for i, s in enumerate(session.seats) if s.get("person") == me), None)
            if other is not None:
                raise SeatTaken(f"you already hold seat {other} at this table")
            with storage_busy("the seat was not joined, try again"):
                self.store.set_seat_field(game_id, seat, "person", me, replace=False)
            session.seats[seat]["person"] = me
        return {"seat": seat, "joined": True}

    def report(self, body: PersonBody) -> dict[str, Any]:
        """The person's ratings per table size and their latest games (:func:`person_report`)."""
        return person_report(self.store, person_id(str(body.person)))


__all__ = ["People"]
