"""What a client reads of a game: its *view* (seats, state, legal moves, line summaries, the
moves from an index on, the result and each seat's rating once it is over, and while a game
that can move a rating is in play, by when the person on turn must move) and, once it is
over, its replay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shelfie_env.game.actions import action_name
from shelfie_env.game.engine import Game
from shelfie_env.play.rated_games import ABORT_DECISIONS, could_rate
from shelfie_env.play.web.events import FRAMES, EntryCache, log_entries
from shelfie_env.play.web.lines import summary
from shelfie_env.play.web.ratings_store import NOT_RATED
from shelfie_env.play.web.records import GameRow, iter_json_lines
from shelfie_env.play.web.refusals import BadRequest, DamagedGame, GameNotOver
from shelfie_env.play.web.seats import public_seats, seat_map
from shelfie_env.play.web.sessions import Session, SessionTable
from shelfie_env.play.web.store import GameStore

REPLAY_VERSION = 1


def result_of(game: Game, resigned: int | None = None) -> dict[str, Any]:
    """Scores, per-row/column breakdown and winner seats (ties share) of a finished game; of a
    game ended by seat ``resigned``'s resignation, the best scores among the other seats win."""
    scores = game.scores()
    others = [s for p, s in enumerate(scores) if p != resigned]
    best = max(others) if others else None
    return {
        "scores": scores,
        "breakdown": [game.table.breakdown(game.circled[p]) for p in range(game.num_players)],
        "winners": [p for p, s in enumerate(scores) if s == best and p != resigned],
    }


def resigned_seat(seats: list[dict[str, Any]]) -> int | None:
    """The seat whose resignation ended the game (None: nobody resigned)."""
    return next((i for i, s in enumerate(seats) if isinstance(s, dict) and s.get("resigned")), None)


def rematch_info(rematch_id: str | None, num_seats: int) -> dict[str, Any] | None:
    """A view's ``rematch``: the rematch's id and where each seat sits there (None: no rematch)."""
    return None if rematch_id is None else {"game_id": rematch_id, "seat_map": seat_map(num_seats)}


def _check_since(since: int) -> None:
    if since < 0:
        raise BadRequest("'since' must be >= 0", code="bad_since")


class Views:
    """Builds the views of games: of a game in play from its session (its head kept per move
    count, its latest moves from its log), of any other from its stored row; log entries that
    no longer change are kept for the next answer that lists them.

    Reading a game in play also wakes its bots (``wake``): a game loaded on request plays on.
    """

    def __init__(
        self, store: GameStore, sessions: SessionTable, wake: Callable[[Session], None], inactive_s: float | None = None
    ) -> None:
        """``inactive_s``: how long a game that can move a rating waits for the person on turn
        before it ends as their resignation (None: no limit)."""
        self.store = store
        self.sessions = sessions
        self.wake = wake
        self.inactive_s = inactive_s
        self._history = EntryCache()

    def game(self, game_id: str, since: int = 0) -> dict[str, Any]:
        """The view of ``game_id`` with the moves from ``since`` on."""
        with self.sessions.locked(game_id) as session:
            if session is not None:
                self.wake(session)
                return self.live(session, since)
        return self.stored(self.sessions.row(game_id), since)

    def live(self, session: Session, since: int) -> dict[str, Any]:
        """The view of a game in play (its lock held)."""
        _check_since(since)
        if session.head is None or session.head[0] != session.num_moves:
            head = self.head(session.id, session.public_seats(), session.game, session.log.state)
            session.head = (session.num_moves, head)
        over = session.game.over
        ratings = self.ratings(session.id) if over else None
        inactivity = None if over else self.inactivity(session.seats, session.game, session.moved_at)
        return {**session.head[1], "num_moves": session.num_moves, "moves": self._live_moves(session, since),
                "bot_error": session.bot_error, "rematch": None, "ratings": ratings, "left": False,
                "inactivity": inactivity}  # fmt: skip

    def inactivity(self, seats: list[dict[str, Any]], game: Game, moved_at: float) -> dict[str, Any] | None:
        """For a game in play that can move a rating (:func:`could_rate`) and has an inactivity
        limit: ``limit_s``, ``abort_decisions``, the person on turn (``seat``, None for a bot) and
        when their move is due (``move_by``, a Unix time); None for any other game."""
        if self.inactive_s is None or not could_rate(seats, game.num_players):
            return None
        seat = game.current if seats[game.current].get("type") == "human" else None
        return {"limit_s": self.inactive_s, "abort_decisions": ABORT_DECISIONS, "seat": seat,
                "move_by": None if seat is None else moved_at + self.inactive_s}

    def _live_moves(self, session: Session, since: int) -> list[dict[str, Any]]:
        """The log entries of a game in play from ``since`` on: held by its log, or read from the store."""
        log = session.log
        if since >= session.num_moves:
            return []
        if log.covers(since):
            return log.entries(since)
        if log.held >= FRAMES:  # the answer's last moves are all held
            older = self._history.get(
                (session.id, since, log.start), lambda: self.stored_entries(session.id, since, log.start, frames=0)
            )
            return older + log.entries(log.start)
        return self.stored_entries(session.id, since)

    def stored(self, row: GameRow, since: int) -> dict[str, Any]:
        """The view of a stored game (one that is over, or not in memory)."""
        try:
            game = Game.from_dict(row.state)
        except ValueError as exc:
            raise DamagedGame(f"game {row.id} cannot be loaded: {exc}") from exc
        _check_since(since)
        resigned = resigned_seat(row.seats)
        head = self.head(row.id, public_seats(row.seats), game, game.to_dict(), resigned)
        over = head["over"]
        return {**head, "num_moves": row.num_moves, "moves": self._stored_moves(row, game, since),
                "bot_error": None, "rematch": rematch_info(row.rematch, len(row.seats)),
                "ratings": self.ratings(row.id) if over else None,
                "left": resigned is not None and bool(row.seats[resigned].get("left")),
                "inactivity": None if over else self.inactivity(row.seats, game, row.updated)}  # fmt: skip

    def ratings(self, game_id: str) -> list[dict[str, Any]] | None:
        """Each seat's rating outcome of a finished game (:mod:`shelfie_env.play.rated_games`): for a
        rated person ``rating``, ``rd`` and ``change``, else ``rated: false`` and a ``reason``; None
        for a game not rated (yet, or finished before ratings were kept)."""
        found = self.store.game_outcome(game_id)
        return None if found is NOT_RATED else found

    def _stored_moves(self, row: GameRow, game: Game, since: int) -> list[dict[str, Any]]:
        """The log entries of a stored game from ``since`` on (a finished game's are kept)."""
        if since >= row.num_moves:
            return []
        if game.over:  # its log no longer changes
            return self._history.get((row.id, since, row.num_moves), lambda: self.stored_entries(row.id, since))
        return self.stored_entries(row.id, since)

    def stored_entries(
        self, game_id: str, since: int, upto: int | None = None, frames: int = FRAMES
    ) -> list[dict[str, Any]]:
        """The log entries of the stored moves from ``since`` on (before ``upto``), each with the
        events read off the states before and after it, the last ``frames`` with line summaries
        (events.py)."""
        rows = [
            r
            for r in iter_json_lines(self.store.moves(game_id, max(since - 1, 0)))
            if upto is None or r["index"] < upto
        ]
        return log_entries(
            rows, since, lambda: getattr(self.store.get_game(game_id), "initial_state", None), frames
        )

    @staticmethod
    def head(
        game_id: str,
        seats: list[dict[str, Any]],
        game: Game,
        state: dict[str, Any],
        resigned: int | None = None,
    ) -> dict[str, Any]:
        """The parts of a view that do not depend on which moves it lists (``resigned``: the seat
        whose resignation ended the game)."""
        over = game.over or resigned is not None
        return {
            "game_id": game_id,
            "seats": seats,
            "state": state,
            "legal": [] if over else [{"action": a, "name": action_name(a)} for a in game.legal_actions()],
            "over": over,
            "resigned": resigned,
            "result": result_of(game, resigned) if over else None,
            **summary(game),  # per-seat row/column progress and the last round (lines.py)
        }

    def replay(self, row: GameRow) -> dict[str, Any]:
        """The replay of a finished game (format version :data:`REPLAY_VERSION`)."""
        if row.status != "over":
            raise GameNotOver("replays are available once the game is over (played to the end or resigned)")
        moves = self.store.moves(row.id)
        resigned = resigned_seat(row.seats)
        return {
            "version": REPLAY_VERSION,
            "game_id": row.id,
            "seats": public_seats(row.seats),
            "initial_state": row.initial_state,
            "actions": [{"seat": m.seat, "action": m.action, "name": m.name} for m in moves],
            "states": [m.state for m in moves],
            "final_state": row.state,
            **({"resigned": resigned} if resigned is not None else {}),
        }


__all__ = ["REPLAY_VERSION", "Views", "rematch_info", "resigned_seat", "result_of"]
