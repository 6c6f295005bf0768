"""The people at the web tables: who holds a seat (a browser's person key, bound to the seat it
opened or joined) and what the person page shows (their ratings and games).

A browser keeps one random *person key* in its local storage and sends it with the seat it
opens (``POST /api/games``) and with each seat it plays through an invite link
(``POST /api/games/{id}/join``); the store keeps only its SHA-256 (the person's id), in the
seat. A seat joined through its invite link answers to that key only from then on
(``key_only``): the invite token, which whoever opened the table also holds, no longer plays it
(the opener's own seat, whose token nobody else was given, keeps it). A seat is joined before
its first move. The ratings themselves are :mod:`shelfie_env.play.rated_games`'.
"""

from __future__ import annotations

from typing import Any

from shelfie_env.play.rated_games import (
    ABORT_DECISIONS,
    ESTABLISHED_GAMES,
    ESTABLISHED_RD,
    at_stake,
    person_report,
)
from shelfie_env.play.web.ratings_store import person_id
from shelfie_env.play.web.refusals import GameOver, GameStateConflict, Refused, SeatTaken
from shelfie_env.play.web.schemas import HintBody, JoinBody, PersonBody
from shelfie_env.play.web.seats import seat_holder, token_holder
from shelfie_env.play.web.sessions import SessionTable, storage_busy
from shelfie_env.play.web.store import GameStore


class People:
    """Binds people to the seats they play and reads their ratings."""

    def __init__(self, store: GameStore, sessions: SessionTable, inactive_s: float | None = None) -> None:
        """``inactive_s``: how long a rated game waits for the person on turn before it ends as
        their resignation (None: until it expires, never)."""
        self.store = store
        self.sessions = sessions
        self.inactive_s = inactive_s

    def join(self, game_id: str, body: JoinBody) -> dict[str, Any]:
        """Bind the person of ``body`` to the seat its token holds, in a game in play: ``{"seat",
        "joined"}`` (``joined`` false: the seat was already theirs). From then on the seat answers
        to that person's key only, unless it is the opener's own seat. Refused: the game is over, the seat is another person's or kept
        for the player of a rematch, the seat has moved already, or the person holds another seat
        of the table."""
        with self.sessions.locked(game_id) as session:
            if session is None:
                self.sessions.row(game_id)  # an unknown game is not found, a finished one over
                raise GameOver("the game is over: a player joins a seat while the game is in play")
            seat = token_holder(session.seats, body.seat, body.token)
            me = person_id(str(body.person))
            held = session.seats[seat].get("person")
            if held == me:
                return {"seat": seat, "joined": False}
            if held is not None:
                raise SeatTaken(f"seat {seat} is another player's")
            self._check_free(session.id, session.seats, seat, me)
            key_only = not session.seats[seat].get("opener")
            with storage_busy("the seat was not joined, try again"):
                held = self.store.bind_person(game_id, seat, me, key_only)
            if held != me:
                raise SeatTaken(f"seat {seat} is another player's")
            session.seats[seat]["person"] = me
            if key_only:
                session.seats[seat]["key_only"] = True
        return {"seat": seat, "joined": True}

    def _check_free(self, game_id: str, seats: list[dict[str, Any]], seat: int, me: str) -> None:
        """Refuse to bind ``me`` to ``seat`` unless the seat is free and unplayed and ``me`` holds no other seat."""
        if seats[seat].get("key_only"):
            raise SeatTaken(f"seat {seat} is kept for its player in the game before: they take it by asking "
                            "for the rematch there")
        other = next((i for i, s in enumerate(seats) if s.get("person") == me), None)
        if other is not None:
            raise SeatTaken(f"you already hold seat {other} at this table")
        if self.store.seat_decisions(game_id).get(seat, 0):
            raise SeatTaken(f"seat {seat} has moved already: a player takes a seat before its first move",
                            code="seat_played")

    def check_hint(self, game_id: str, body: HintBody) -> None:
        """Refuse the first hint of a person on turn past their first :data:`ABORT_DECISIONS` decisions
        in a game that would move their rating (:func:`at_stake`): a hint leaves the game unrated for
        them, so a later one would take a game they are losing out of the rating. Any other request
        is left for the hint itself to answer or refuse."""
        with self.sessions.locked(game_id, gone_ok=True) as session:
            if session is None or session.game.over:
                return
            try:
                seat = seat_holder(session.seats, body.seat, body.token, body.person)
            except Refused:
                return
            if seat != session.game.current or session.seats[seat].get("hinted"):
                return
            if not at_stake(self.store, session.seats, session.game.num_players, seat):
                return
            if self.store.seat_decisions(game_id).get(seat, 0) >= ABORT_DECISIONS:
                raise GameStateConflict(
                    f"this game counts for your rating: hints are given only before your {ABORT_DECISIONS}rd "
                    "decision (a hint then leaves the game unrated for you)",
                    code="rated_game",
                )

    def rules(self) -> dict[str, Any]:
        """What makes a game count for a rating, as the pages state it."""
        return {"inactive_s": self.inactive_s, "abort_decisions": ABORT_DECISIONS,
                "established_games": ESTABLISHED_GAMES, "established_rd": ESTABLISHED_RD}

    def report(self, body: PersonBody) -> dict[str, Any]:
        """The person's ratings per table size and their latest games (:func:`person_report`),
        with the rules that make a game count (:meth:`rules`)."""
        return {**person_report(self.store, person_id(str(body.person))), "rules": self.rules()}


__all__ = ["People"]
