"""New tables: seats from a table spec, a game dealt, stored and put in play (its bots woken)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import numpy as np

from shelfie_env.game.engine import Game
from shelfie_env.play.web.events import LiveLog
from shelfie_env.play.web.refusals import BadRequest
from shelfie_env.play.web.schemas import TableBody
from shelfie_env.play.web.seats import BotShelf, new_seats, seat_links
from shelfie_env.play.web.sessions import Session, SessionTable, rng_state, storage_busy
from shelfie_env.play.web.store import GameStore
from shelfie_env.play.web.views import Views

SaveGame = Callable[[str, list[dict[str, Any]], dict[str, Any], dict[str, Any], str], None]
"""Stores a new game: ``save(game_id, seats, state, rng state, status)``."""


class Lobby:
    """Opens tables: from a table spec (:meth:`create`), or with given seats (:meth:`open`, the rematch's way)."""

    def __init__(
        self,
        store: GameStore,
        sessions: SessionTable,
        views: Views,
        shelf: BotShelf,
        wake: Callable[[Session], None],
    ) -> None:
        self.store = store
        self.sessions = sessions
        self.views = views
        self.shelf = shelf
        self.wake = wake

    def create(self, spec: TableBody, seed: int | None = None, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """Start a game with the seats of ``spec``.

        Returns the first view (with the bots' opening moves, if any) plus ``tokens`` and
        ``links``: one secret per human seat (shown only here). ``seed`` fixes the dice and
        ``state`` (a state dict, docs/rules.md) the starting position; both are for Python
        callers (tests, tools), not the HTTP API.
        """
        seats, tokens = new_seats(spec, self.shelf)
        view = self.open(seats, self.store.create_game, seed, state)
        view["tokens"] = {str(i): t for i, t in tokens.items()}
        view["links"] = seat_links(view["game_id"], view["tokens"])
        return view

    def open(
        self,
        seats: list[dict[str, Any]],
        save: SaveGame,
        seed: int | None = None,
        state: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Deal a new game for ``seats``, store it with ``save`` and return its first view (its bots
        start playing)."""
        game_id = secrets.token_urlsafe(12)
        game, rng = _deal(len(seats), seed, state)
        first = game.to_dict()
        session = Session(game_id, seats, game, rng, 0, LiveLog(0, first))
        with storage_busy("the table was not opened, try again"):
            save(game_id, seats, first, rng_state(rng), "over" if game.over else "active")
        if game.over:  # a table opened at a finished position (a Python caller's)
            self.sessions.finished(game_id)
        else:
            self.sessions.add(session)
        with session.lock:
            self.wake(session)
            return self.views.live(session, 0)


def _deal(num_seats: int, seed: int | None, state: dict[str, Any] | None) -> tuple[Game, np.random.Generator]:
    """A new game for ``num_seats`` (from ``state`` if given) and its dice generator (from ``seed``)."""
    rng = np.random.default_rng(secrets.randbits(128) if seed is None else seed)
    if state is None:
        return Game.new(num_seats, rng=rng), rng
    game = Game.from_dict(state, rng=rng)
    if game.num_players != num_seats:
        raise BadRequest(f"the state has {game.num_players} players but {num_seats} seats were given")
    return game, rng


__all__ = ["Lobby"]
