"""The games service: opens tables, plays and reads games, and runs the bots and the
housekeeping in the background. No HTTP here: a refusal is a :mod:`~.refusals` exception.

The server is authoritative: a client only ever sends an action id with its seat
token; the service checks the token, asks the engine whether the action is
legal, applies it and writes it to the :class:`~.store.GameStore` before
answering. The bots that are due then play in the background, each move stored
before the next; readers see them as they come.

:class:`GameService` wires the pieces and is what callers use:
:class:`~.sessions.SessionTable` (games in memory), :class:`~.views.Views`,
:class:`~.seats.BotShelf` (bots built and checked), :class:`~.lobby.Lobby`
(new tables), :class:`~.moves.Moves` (people's moves, resignations, hints),
:class:`~.botturns.BotTurns` with its :class:`~.botpool.BotPool` (bots' moves),
:class:`~.rematch.Rematches`, :class:`~.people.People` (who holds a seat, their ratings) and
:class:`~.housekeeping.Housekeeper`. A game that ends is rated at once
(:func:`shelfie_env.play.rated_games.rate_game`); one the server stopped before rating is rated
at the next start.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from shelfie_env import bots as bots_module
from shelfie_env.play.rated_games import rate_game, rate_unrated
from shelfie_env.play.web.audit import check_replay
from shelfie_env.play.web.botpool import BotPool
from shelfie_env.play.web.botturns import BotTurns
from shelfie_env.play.web.housekeeping import KEEP_ALL, Expiry, Housekeeper
from shelfie_env.play.web.lobby import Lobby
from shelfie_env.play.web.moves import Moves
from shelfie_env.play.web.people import People
from shelfie_env.play.web.rematch import Rematches, admit_all
from shelfie_env.play.web.schemas import (
    HintBody,
    JoinBody,
    MoveBody,
    PersonBody,
    RematchBody,
    ResignBody,
    TableBody,
    parse,
)
from shelfie_env.play.web.seats import BotShelf
from shelfie_env.play.web.sessions import SessionTable
from shelfie_env.play.web.store import GameStore
from shelfie_env.play.web.views import Views

log = logging.getLogger("shelfie_env.play.web")

BotList = tuple[tuple[str, int], ...]
"""``(bot name, number of players)`` pairs."""


class GameService:
    """Creates games, validates and applies moves, runs bots, persists everything.

    Bots play in the background: an answer to a person's move (or to a new table) comes at
    once, and the bots due after it play in the :class:`BotPool` (``bot_workers`` threads;
    ``bot_processes`` worker processes, each building the ``preload`` bots, for the shipped
    bots' search). Games are loaded into memory when asked for (start-up queues only the
    games whose bot is due) and leave it after ``idle_s`` seconds without a request;
    ``expiry`` says when games are deleted, and when a rated game left by the person on turn
    ends as their resignation. ``warm`` bots are built in the background at
    start-up, so the first table with one does not wait for it.

    Background work runs between :meth:`start` (the app's lifespan calls it; so does the first
    call that needs the bots, for a host without lifespan or a Python caller) and :meth:`close`.
    Bodies are :mod:`~.schemas` models; Python callers may pass the JSON object itself.
    """

    def __init__(
        self,
        store: GameStore,
        bot_factory: Callable[..., Any] | None = None,
        bot_workers: int = 2,
        bot_processes: int = 0,
        preload: BotList = (),
        idle_s: float = 600.0,
        *,
        warm: BotList = (),
        expiry: Expiry = KEEP_ALL,
    ) -> None:
        self.store = store
        self.shelf = BotShelf(bot_factory or bots_module.make)
        self.sessions = SessionTable(store, idle_s)
        self.sessions.on_over = lambda game_id: rate_game(store, game_id)
        self.pool = BotPool(
            lambda game_id: self._play_bots(game_id),  # looked up per call (tests replace it)
            workers=bot_workers,
            processes=bot_processes,
            build_bot=self.shelf.get,  # the instance create() checked; each game plays a copy
            preload=preload,
        )
        self.turns = BotTurns(self.sessions, self.pool)
        self.views = Views(store, self.sessions, self.turns.wake, expiry.left_s)
        self.lobby = Lobby(store, self.sessions, self.views, self.shelf, self.turns.wake)
        self.moves = Moves(self.sessions, self.views, self.turns.wake)
        self.rematches = Rematches(store, self.sessions, self.views, self.lobby, self.shelf)
        self.people = People(store, self.sessions, expiry.left_s)
        self.housekeeper = Housekeeper(store, self.sessions, self.pool.pending, expiry, leave=self.moves.leave)
        self._warm = warm
        self._lifecycle = threading.Lock()
        self._started = False
        self._closed = False

    # ----------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Start the background work, once: the bot workers, the unfinished games whose bot is
        due, the housekeeping and the building of the ``warm`` bots (nothing after :meth:`close`)."""
        with self._lifecycle:
            if self._started or self._closed:
                return
            self._started = True
        self.pool.start()
        self._rate_unrated()
        resumed = self.turns.resume()
        if resumed:
            log.info("%d unfinished game(s) have a bot to move: they play on", resumed)
        self.housekeeper.start()
        if self._warm:
            threading.Thread(target=self.preload, args=(self._warm,), name="shelfie-preload", daemon=True).start()

    def _rate_unrated(self) -> None:
        """Rate the finished games a stopped server left unrated (a failure waits for the next start)."""
        try:
            rated = rate_unrated(self.store)
        except Exception:
            log.exception("the finished games left unrated could not be rated")
            return
        if rated:
            log.info("rated %d finished game(s) left unrated", rated)

    def close(self) -> None:
        """Stop the background work (the store stays open; close it after)."""
        with self._lifecycle:
            self._closed = True
        self.housekeeper.stop()
        self.pool.stop()

    def preload(self, bots: BotList) -> None:
        """Build these ``(name, num_players)`` bots in this thread (slow ones: model files)."""
        self.shelf.preload(bots)

    @property
    def bots_only_pace_s(self) -> float:
        """Seconds between two moves at a table of bots only (:attr:`BotTurns.bots_only_pace_s`)."""
        return self.turns.bots_only_pace_s

    @bots_only_pace_s.setter
    def bots_only_pace_s(self, seconds: float) -> None:
        self.turns.bots_only_pace_s = seconds

    @property
    def idle_s(self) -> float:
        """Seconds without a request after which a game leaves memory."""
        return self.sessions.idle_s

    @idle_s.setter
    def idle_s(self, seconds: float) -> None:
        self.sessions.idle_s = seconds

    # ------------------------------------------------------------ metadata
    @staticmethod
    def bot_tables() -> dict[str, list[int]]:
        """For every bot, the numbers of players it can play (the setup page offers only those)."""
        return BotShelf.tables()

    @staticmethod
    def bot_names() -> list[str]:
        """The bots a seat may take."""
        return BotShelf.offered()

    @staticmethod
    def hints_available() -> bool:
        return Moves.hints_available()

    # ------------------------------------------------------------- tables
    def create(
        self, spec: TableBody | dict[str, Any], seed: int | None = None, state: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Start a game (:meth:`Lobby.create`): its first view plus each person's token and link."""
        self.start()
        return self.lobby.create(parse(TableBody, spec), seed, state)

    def rematch(
        self, game_id: str, body: RematchBody | dict[str, Any], admit: Callable[[], None] = admit_all
    ) -> tuple[dict[str, Any], bool]:
        """Open or find the rematch of a finished game (:meth:`Rematches.rematch`)."""
        self.start()
        return self.rematches.rematch(game_id, parse(RematchBody, body), admit)

    def rematch_status(self, game_id: str) -> dict[str, Any]:
        """``{"over", "rematch"}`` of ``game_id``."""
        return self.rematches.status(game_id)

    # ------------------------------------------------------------- reading
    def view(self, game_id: str, since: int = 0) -> dict[str, Any]:
        """The public view of a game: seats, state, legal moves and the moves from ``since`` on."""
        self.start()
        return self.views.game(game_id, since)

    def replay(self, game_id: str) -> dict[str, Any]:
        """The replay of a finished game."""
        return self.views.replay(self.sessions.row(game_id))

    # -------------------------------------------------------------- acting
    def act(self, game_id: str, move: MoveBody | dict[str, Any]) -> dict[str, Any]:
        """Play a seat's move and return the view (:meth:`Moves.act`; bots play after)."""
        self.start()
        return self.moves.act(game_id, parse(MoveBody, move))

    def resign(self, game_id: str, body: ResignBody | dict[str, Any]) -> dict[str, Any]:
        """End the game by a seat's resignation (:meth:`Moves.resign`)."""
        return self.moves.resign(game_id, parse(ResignBody, body))

    def hint(self, game_id: str, body: HintBody | dict[str, Any]) -> dict[str, Any]:
        """Advice for the seat on turn (:meth:`Moves.hint`; refused past a person's first decisions in
        a game that would move their rating, :meth:`People.check_hint`)."""
        asked = parse(HintBody, body)
        self.people.check_hint(game_id, asked)
        return self.moves.hint(game_id, asked)

    # --------------------------------------------------------------- people
    def join(self, game_id: str, body: JoinBody | dict[str, Any]) -> dict[str, Any]:
        """Bind a person to the seat they play (:meth:`People.join`)."""
        return self.people.join(game_id, parse(JoinBody, body))

    def person(self, body: PersonBody | dict[str, Any]) -> dict[str, Any]:
        """A person's ratings and games (:meth:`People.report`)."""
        return self.people.report(parse(PersonBody, body))

    def rating_rules(self) -> dict[str, Any]:
        """What makes a game count for a rating (:meth:`People.rules`)."""
        return self.people.rules()

    # ------------------------------------------------------- background work
    def resume(self) -> int:
        """Queue the unfinished games whose bot is due; return how many."""
        self.start()
        return self.turns.resume()

    def housekeeping(self, expire_active_s: float | None, expire_over_s: float | None) -> int:
        """Delete games past these expiries and let idle games leave memory (:meth:`Housekeeper.sweep`)."""
        return self.housekeeper.sweep(expire_active_s, expire_over_s)

    def wait_for_bots(self, timeout: float = 30.0) -> bool:
        """Block until no bot move is due or being played (tests and tools); True if so."""
        self.start()
        return self.pool.wait_idle(timeout)

    def _play_bots(self, game_id: str) -> float | None:
        """The pool's work: play the due bots of ``game_id`` (:meth:`BotTurns.play`)."""
        return self.turns.play(game_id)


__all__ = ["GameService", "check_replay"]
