"""``shelfie play``'s ratings: a finished game against the levels is stored in the web table's
database (its default file, or ``--db``) and rated there (:mod:`shelfie_env.play.rated_games`),
as the terminal's one person, :data:`~shelfie_env.play.rated_games.TERMINAL_PERSON`.

The store is opened before the game (a file that is not a database, or one a newer shelfie
wrote, is refused in one line before anything is played) and closed after it. Tools open it
beside a running ``shelfie serve`` (no exclusive lock), so both may use the same file.
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shelfie_env.game.actions import action_name
from shelfie_env.play.rated_games import TERMINAL_PERSON, rate_game
from shelfie_env.play.web.database import default_db_path
from shelfie_env.play.web.store import GameStore


def open_store(path: str | Path | None) -> GameStore:
    """The ratings store at ``path`` (default: the web table's database); ``ValueError`` in one
    line when it cannot be opened (not a database, a newer schema, a folder that cannot be made)."""
    where = Path(path) if path is not None else default_db_path()
    try:
        return GameStore(where, exclusive=False)
    except (OSError, sqlite3.Error, RuntimeError) as exc:
        raise ValueError(f"cannot use the ratings store {where}: {exc}") from None


def seat_records(tg: Any) -> list[dict[str, Any]]:
    """The stored seats of a terminal game: the person (rated as the terminal's person) and the bots."""
    out = []
    for i, seat in enumerate(tg.seats):
        if seat.bot is None:
            out.append({"type": "human", "name": tg.person_name or f"player {i + 1}", "bot": None,
                        "token_hash": None, "person": TERMINAL_PERSON, **({"hinted": True} if tg.hinted else {})})
        else:
            out.append({"type": "bot", "name": f"{seat.bot_name} bot", "bot": seat.bot_name, "token_hash": None})
    return out


def outcome_line(mine: dict[str, Any] | None, where: str) -> str:
    """What the person is told after a game was stored: the new rating with its uncertainty and
    change, or why the game is unrated."""
    if mine is None:
        return f"The game is kept in {where}."
    if not mine.get("rated"):
        return f"Unrated: {mine['reason']}. The game is kept in {where}."
    return (f"Your rating at {mine['players']} players: {mine['rating']:.0f} ± {mine['rd']:.0f} "
            f"({mine['change']:+.0f}) after {mine['games']} rated game{'s' if mine['games'] != 1 else ''}; "
            f"'shelfie rating' lists them (kept in {where}).")


@dataclass
class Keeper:
    """Stores and rates a finished terminal game (:meth:`keep`) in an open store."""

    store: GameStore

    @classmethod
    def open(cls, path: str | Path | None) -> Keeper:
        return cls(open_store(path))

    def keep(self, tg: Any) -> str:
        """Store the finished game of ``tg`` (a :class:`~shelfie_env.play.terminal.TerminalGame`),
        rate it and say how it went; a store that fails is said, and the game is then not kept."""
        game_id = secrets.token_urlsafe(12)
        moves = [(seat, action, action_name(action), state) for (seat, action), state in zip(tg.moves, tg.states)]
        end = getattr(getattr(tg.game.rng, "bit_generator", None), "state", None) or {}
        try:
            self.store.add_finished_game(game_id, seat_records(tg), (tg.start, tg.start_rng or {}), moves, end)
            outcome = rate_game(self.store, game_id) or []
        except (sqlite3.Error, RuntimeError) as exc:
            return f"The game could not be kept in {self.store.path}: {exc}"
        mine = next((o for o in outcome if o["seat"] == tg.human), None)
        return outcome_line(mine, self.store.path)

    def close(self) -> None:
        self.store.close()


__all__ = ["Keeper", "open_store", "outcome_line", "seat_records"]
