"""The bots' moves in games in play, played off the request path by a :class:`~.botpool.BotPool`.

A bot that cannot move (it fails to build or to act, returns an illegal action,
or its move cannot be stored) never has a move played for it: the game waits
at its turn, the view says so in ``bot_error``, and the bot is tried again
every :attr:`BotTurns.retry_s` seconds.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Literal

from shelfie_env.play.web.botpool import BotPool
from shelfie_env.play.web.refusals import Refused
from shelfie_env.play.web.sessions import Session, SessionTable

log = logging.getLogger("shelfie_env.play.web")

AGAIN: Literal["again"] = "again"
"""A bot moved: the next seat may be a bot's too."""


@dataclass(frozen=True)
class BotTurn:
    """A bot's decision due in a game: who is to move, after how many moves, in which state."""

    seat: int
    count: int
    bot: str
    num_players: int
    state: dict[str, Any]


class BotTurns:
    """Wakes the bots of games in play and plays their moves, each stored before the next."""

    retry_s = 2.0
    """Seconds before a bot that could not move is tried again."""
    bots_only_pace_s = 0.25
    """Seconds between two moves at a table without a person (it is watched, not waited for),
    which also caps the share of the bot workers such tables take."""

    def __init__(self, sessions: SessionTable, pool: BotPool) -> None:
        self.sessions = sessions
        self.pool = pool

    def wake(self, session: Session) -> None:
        """Queue the game's bots if one is on turn (a failed bot once its retry time has come)."""
        game = session.game
        if game.over or session.seats[game.current]["type"] != "bot" or self.pool.queued(session.id):
            return
        delay = max(0.0, session.bot_retry_at - time.monotonic()) if session.bot_error else 0.0
        self.pool.schedule(session.id, delay=delay, priority=1 if session.bots_only else 0)

    def resume(self) -> int:
        """Queue the unfinished games whose bot is due (no other game is read); return how many."""
        due = self.sessions.store.bot_due_ids()
        for game_id in due:
            self.pool.schedule(game_id, priority=1)
        return len(due)

    def play(self, game_id: str) -> float | None:
        """Play the game's bots while a bot seat is on turn, each move stored before the next (a
        :class:`BotPool` worker runs this); None when done, else seconds until a retry.

        The bot thinks without the game's lock (readers are not held up) and its move is applied
        only if the game has not moved meanwhile.
        """
        while True:
            outcome = self._one_move(game_id)
            if outcome != AGAIN:
                return outcome

    def _one_move(self, game_id: str) -> float | None | Literal["again"]:
        due = self._due(game_id)
        if not isinstance(due, BotTurn):
            return due
        action, error = self._think(game_id, due)
        with self.sessions.locked(game_id, gone_ok=True) as session:  # it may have expired meanwhile
            if session is None or session.num_moves != due.count or session.game.current != due.seat:
                return AGAIN  # the game moved on (or left memory): look at it again
            return self._settle(session, due, action, error)

    def _due(self, game_id: str) -> BotTurn | float | None:
        """The bot's decision due in the game (None: no bot on turn; seconds: a failed bot waits)."""
        try:
            with self.sessions.locked(game_id) as session:
                return None if session is None else self._turn_of(session)
        except Refused as exc:  # unknown or damaged game: nothing to play
            log.error("game %s: its bots cannot play: %s", game_id, exc.message)
            return None

    @staticmethod
    def _turn_of(session: Session) -> BotTurn | float | None:
        game = session.game
        if game.over or session.seats[game.current]["type"] != "bot":
            return None
        wait = session.bot_retry_at - time.monotonic()
        if session.bot_error is not None and wait > 0:
            return wait
        bot = session.seats[game.current]["bot"]
        return BotTurn(game.current, session.num_moves, bot, game.num_players, game.to_dict())

    def _think(self, game_id: str, turn: BotTurn) -> tuple[int, Exception | None]:
        """The bot's action, or the error that kept it from choosing one (e.g. its model file went away)."""
        try:
            return self.pool.compute(game_id, turn.seat, turn.bot, turn.num_players, turn.state), None
        except Exception as exc:
            return -1, exc

    def _settle(
        self, session: Session, turn: BotTurn, action: int, error: Exception | None
    ) -> float | None | Literal["again"]:
        """Play the bot's action (its lock held), or record why it cannot be played."""
        try:
            self._apply(session, action, error)
        except Exception as exc:
            return self._failed(session, turn, exc)
        session.bot_error = None
        if session.bots_only and self.bots_only_pace_s > 0 and not session.game.over:
            self.pool.schedule(session.id, delay=self.bots_only_pace_s, priority=1)
            return None  # the next move of a table of bots comes a little later
        return AGAIN

    def _apply(self, session: Session, action: int, error: Exception | None) -> None:
        """Store the bot's legal ``action`` (a storage error rolls it back); raise ``error`` if it has none."""
        if error is not None:
            raise error
        if action not in session.game.legal_actions():
            raise ValueError(f"returned illegal action {action}: {session.game.why_illegal(action)}")
        self.sessions.play(session, action)

    def _failed(self, session: Session, turn: BotTurn, exc: Exception) -> float:
        """Record in the session why the bot has not moved; seconds until it is tried again."""
        log.error("bot %s (seat %d) could not move in game %s: %r", turn.bot, turn.seat, session.id, exc)
        what = "its move could not be stored" if isinstance(exc, sqlite3.Error) else "it failed to move"
        session.bot_error = {
            "seat": turn.seat,
            "bot": turn.bot,
            "message": f"bot {turn.bot!r} (seat {turn.seat}) has not moved: {what}; it is tried again shortly",
        }
        session.bot_retry_at = time.monotonic() + self.retry_s
        return self.retry_s


__all__ = ["BotTurn", "BotTurns"]
