"""A person's requests at a table: actions, resignations and hints, each checked against the
seat's token (a seat a person joined: their person key) and the game's position (the bots' moves
are :mod:`.botturns`). A seat that asks for a hint is marked ``hinted`` in the stored seat list:
its game is not rated for that person. A rated game left too long is ended by :meth:`Moves.leave`
as the resignation of the seat on turn."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from shelfie_env.game.actions import action_name
from shelfie_env.play.solo_hints import solo_hint_answer
from shelfie_env.play.web.refusals import GameOver, HintsUnavailable, IllegalMove, NotYourTurn, StaleMove
from shelfie_env.play.web.schemas import HintBody, MoveBody, ResignBody
from shelfie_env.play.web.seats import seat_holder
from shelfie_env.play.web.sessions import Session, SessionTable, storage_busy
from shelfie_env.play.web.views import Views, resigned_seat

HINT_MODULE = "shelfie_env.bots.planner.hint"


def hint_function() -> Callable[..., list[dict[str, Any]]] | None:
    """``hint`` of :data:`HINT_MODULE` when that module exists, else ``None``."""
    try:
        module = importlib.import_module(HINT_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != HINT_MODULE:
            raise
        return None
    return getattr(module, "hint", None)


def _json_hint(h: Any) -> dict[str, Any]:
    """A hint entry with plain JSON types."""
    action = int(h["action"])
    return {
        "action": action,
        "name": str(h.get("name") or action_name(action)),
        "value": float(h["value"]) if h.get("value") is not None else None,
        "reason": str(h.get("reason", "")),
    }


class Moves:
    """Plays, resigns and advises for people's seats; a move is stored before it is answered and
    then the bots due after it are woken (``wake``)."""

    def __init__(self, sessions: SessionTable, views: Views, wake: Callable[[Session], None]) -> None:
        self.sessions = sessions
        self.views = views
        self.wake = wake

    @staticmethod
    def hints_available() -> bool:
        return hint_function() is not None

    # -------------------------------------------------------------- actions
    def act(self, game_id: str, move: MoveBody) -> dict[str, Any]:
        """Play ``move`` and return the view (bots play after).

        ``expect`` binds the move to one position: a stale client is refused
        (:class:`StaleMove`), and the same move sent again after it was played (a
        retried POST) changes nothing and gets the view again, with ``"repeated": true``.
        ``since`` (default: the index of this move) selects which moves the answer lists.
        """
        with self.sessions.locked(game_id) as session:
            if session is None:
                return self._act_after_end(game_id, move)
            return self._act_live(session, move)

    def _act_after_end(self, game_id: str, move: MoveBody) -> dict[str, Any]:
        """A move sent to a game that is over: its view again if the move was its last, else refused."""
        row = self.sessions.row(game_id)
        seat = seat_holder(row.seats, move.seat, move.token, move.person)
        if self._is_repeat(game_id, row.num_moves, seat, move):
            return {**self.views.stored(row, _repeat_since(move)), "repeated": True}
        raise GameOver("the game is over")

    def _act_live(self, session: Session, move: MoveBody) -> dict[str, Any]:
        seat = seat_holder(session.seats, move.seat, move.token, move.person)
        if self._is_repeat(session.id, session.num_moves, seat, move):
            return {**self.views.live(session, _repeat_since(move)), "repeated": True}
        _check_playable(session, seat, move)
        first = session.num_moves
        with storage_busy("the move was not played, send it again"):
            self.sessions.play(session, move.action)
        self.wake(session)
        return self.views.live(session, first if move.since is None else move.since)

    def _is_repeat(self, game_id: str, num_moves: int, seat: int, move: MoveBody) -> bool:
        """Whether move number ``expect`` was already played, by ``seat``, as this action (a repeat)."""
        if move.expect >= num_moves:
            return False
        done = self.sessions.store.move(game_id, move.expect)
        return done is not None and done.seat == seat and done.action == move.action

    # --------------------------------------------------------- resignations
    def resign(self, game_id: str, body: ResignBody) -> dict[str, Any]:
        """End the game by the seat's resignation; return the view.

        The seat finishes last and the others are ranked by their scores at that moment; the
        game is stored as over (its replay can be downloaded and reviewed). The same request
        sent again gets the view again, with ``"repeated": true``.
        """
        with self.sessions.locked(game_id) as session:
            if session is None:
                return self._resign_after_end(game_id, body)
            num_moves = self._resign_live(session, body)
        return self.views.stored(self.sessions.row(game_id), num_moves if body.since is None else body.since)

    def _resign_after_end(self, game_id: str, body: ResignBody) -> dict[str, Any]:
        """A resignation sent to a game that is over: its view again if this seat's resignation ended it."""
        row = self.sessions.row(game_id)
        seat = seat_holder(row.seats, body.seat, body.token, body.person)
        if resigned_seat(row.seats) != seat:
            raise GameOver("the game is over")
        return {**self.views.stored(row, row.num_moves if body.since is None else body.since), "repeated": True}

    def _resign_live(self, session: Session, body: ResignBody) -> int:
        """Store the resignation (the game leaves memory); the number of moves it ended after."""
        seat = seat_holder(session.seats, body.seat, body.token, body.person)
        self._end(session, seat, "the game goes on, send it again")
        return session.num_moves

    def leave(self, game_id: str, num_moves: int) -> bool:
        """End game ``game_id``, left after its ``num_moves`` moves, as the resignation of the person
        on turn (marked ``left``); False when it moved meanwhile, is over, or a bot is on turn."""
        with self.sessions.locked(game_id, gone_ok=True) as session:
            if session is None or session.num_moves != num_moves or session.game.over:
                return False
            seat = session.game.current
            if session.seats[seat].get("type") != "human":
                return False
            self._end(session, seat, "the game was not ended", left=True)
        return True

    def _end(self, session: Session, seat: int, busy: str, left: bool = False) -> None:
        """Store ``seat``'s resignation (its lock held), rate the game and let it leave memory."""
        seats = [dict(s) for s in session.seats]
        seats[seat]["resigned"] = True
        if left:
            seats[seat]["left"] = True
        with storage_busy(busy):
            self.sessions.store.resign(session.id, session.num_moves, seats)
        self.sessions.finished(session.id)  # rated before any reader finds it over
        session.evicted = True  # the game is over: later requests read it from the store
        self.sessions.drop(session)

    # ---------------------------------------------------------------- hints
    def hint(self, game_id: str, body: HintBody) -> dict[str, Any]:
        """Advice for the seat on turn: ``{"hints": [{action, name, value, reason}, ...]}``; in a solo
        game exact (:mod:`shelfie_env.play.solo_hints`): ``{"hints": [{..., "loss"}, ...], "exact": true}``."""
        advise = hint_function()
        if advise is None:
            raise HintsUnavailable("hints need the planner (shelfie_env.bots.planner.hint), which is not installed")
        state = self._hint_position(game_id, body)
        if state["num_players"] == 1:
            return solo_hint_answer(state, body.k)
        return {"hints": [_json_hint(h) for h in advise(state, k=body.k)]}

    def _hint_position(self, game_id: str, body: HintBody) -> dict[str, Any]:
        """The state the seat asks advice in (it must be on turn in a game in play)."""
        with self.sessions.locked(game_id) as session:
            if session is None:
                self.sessions.row(game_id)  # an unknown game is not found, a finished one over
                raise GameOver("the game is over")
            seat = seat_holder(session.seats, body.seat, body.token, body.person)
            if session.game.over:
                raise GameOver("the game is over")
            if seat != session.game.current:
                raise NotYourTurn(f"it is seat {session.game.current}'s turn")
            self._mark_hinted(session, seat)
            return session.game.to_dict()

    def _mark_hinted(self, session: Session, seat: int) -> None:
        """Store that ``seat`` asked for a hint (its lock held): the game is then unrated for its person."""
        if session.seats[seat].get("hinted"):
            return
        with storage_busy("no hint was given, ask again"):
            self.sessions.store.set_seat_field(session.id, seat, "hinted", True)
        session.seats[seat]["hinted"] = True


def _repeat_since(move: MoveBody) -> int:
    """Where the answer to a repeated move starts its list: ``since``, else the move itself."""
    return move.expect if move.since is None else move.since


def _check_playable(session: Session, seat: int, move: MoveBody) -> None:
    """Refuse a move the position does not allow: the game is over, another seat is on turn, the
    client saw another position, or the engine refuses the action."""
    game = session.game
    if game.over:
        raise GameOver("the game is over")
    if seat != game.current:
        raise NotYourTurn(
            f"it is seat {game.current}'s turn, not seat {seat}'s", current_player=game.current
        )
    if move.expect != session.num_moves:
        raise StaleMove(
            f"the game has {session.num_moves} moves, you expected {move.expect}; reload",
            num_moves=session.num_moves,
        )
    if move.action not in game.legal_actions():
        raise IllegalMove(
            f"illegal action {move.action}: {game.why_illegal(move.action)}",
            action=move.action,
            legal=list(game.legal_actions()),
        )


__all__ = ["HINT_MODULE", "Moves", "hint_function"]
