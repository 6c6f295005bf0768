"""The people's ratings in the games database: the SQL of its three rating tables (schema
version 4, :mod:`~.database`), on a connection the :class:`~.store.GameStore` lends.

* ``ratings``: one row per person and table size: Glicko-2's rating, deviation (RD) and
  volatility, and the number of rated games behind them.
* ``rating_history``: one row per finished game of a person (rated or not): the rating before
  and after it, the deviation after it, the change, the time, and a summary of the game
  (names, scores) that outlives the game's own rows.
* ``rated_games``: the games already rated (each seat's outcome as JSON), so a game is rated
  once however often it is asked for; ``outcome`` is NULL for the games that were finished
  before ratings were kept.

A person is an opaque id: the SHA-256 of the browser's person key (the web) or ``terminal``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from shelfie_env.arena.person_rating import shown
from shelfie_env.play.web.records import dumps


def person_id(key: str) -> str:
    """The id a person is stored under: the SHA-256 of the browser's secret person key."""
    return hashlib.sha256(b"person:" + key.encode()).hexdigest()


@dataclass(frozen=True)
class Standing:
    """A person's rating at one table size, as the ``ratings`` table keeps it."""

    rating: float
    rd: float
    volatility: float
    games: int


@dataclass(frozen=True)
class SeatChange:
    """What rating a finished game writes for one person's seat: ``after`` None when the seat is
    unrated (``reason`` says why), ``before`` the rating it started from (a new person's start)."""

    person: str
    players: int
    seat: int
    reason: str | None
    before: Standing | None
    after: Standing | None
    summary: dict[str, Any]


NOT_RATED = object()
""":func:`outcome`'s answer for a game that has not been rated yet."""


def outcome(db: sqlite3.Connection, game_id: str) -> Any:
    """The stored outcome of ``game_id`` (a list, or None for a game finished before ratings were
    kept), or :data:`NOT_RATED`."""
    row = db.execute("SELECT outcome FROM rated_games WHERE game_id=?", (game_id,)).fetchone()
    if row is None:
        return NOT_RATED
    return None if row[0] is None else json.loads(row[0])


def standing(db: sqlite3.Connection, person: str, players: int) -> Standing | None:
    """``person``'s rating at ``players`` (None: not rated there yet)."""
    row = db.execute(
        "SELECT rating, rd, volatility, games FROM ratings WHERE person=? AND players=?", (person, players)
    ).fetchone()
    return None if row is None else Standing(*row)


def standings(db: sqlite3.Connection, person: str) -> dict[int, Standing]:
    """``person``'s rating at every table size they have one at."""
    rows = db.execute(
        "SELECT players, rating, rd, volatility, games FROM ratings WHERE person=? ORDER BY players", (person,)
    ).fetchall()
    return {r[0]: Standing(*r[1:]) for r in rows}


def save(db: sqlite3.Connection, game_id: str, result: list[dict[str, Any]], changes: list[SeatChange],
         now: float) -> None:
    """Write a rated game: the people's new ratings, a history row per person, the game's outcome."""
    for c in changes:
        if c.after is not None:
            db.execute(
                "INSERT OR REPLACE INTO ratings (person, players, rating, rd, volatility, games, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (c.person, c.players, c.after.rating, c.after.rd, c.after.volatility, c.after.games, now),
            )
        shown = c.after or c.before
        change = None if c.after is None or c.before is None else c.after.rating - c.before.rating
        db.execute(
            "INSERT INTO rating_history (person, game_id, players, seat, rated, reason, before, after, rd,"
            " change, time, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (c.person, game_id, c.players, c.seat, int(c.after is not None), c.reason,
             None if c.before is None else c.before.rating, None if shown is None else shown.rating,
             None if shown is None else shown.rd, change, now, dumps(c.summary)),
        )
    db.execute("INSERT INTO rated_games (game_id, time, outcome) VALUES (?, ?, ?)", (game_id, now, dumps(result)))


def history(db: sqlite3.Connection, person: str, players: int | None, limit: int | None) -> list[dict[str, Any]]:
    """``person``'s finished games, the latest first (``players``: at that table size only)."""
    sql = ("SELECT game_id, players, seat, rated, reason, before, after, rd, change, time, summary"
           " FROM rating_history WHERE person=?")
    params: list[Any] = [person]
    if players is not None:
        sql += " AND players=?"
        params.append(players)
    sql += " ORDER BY time DESC, rowid DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    keys = ("game_id", "players", "seat", "rated", "reason", "before", "after", "rd", "change", "time")
    out = []
    for r in db.execute(sql, params).fetchall():
        entry = dict(zip(keys, r[:10]))
        entry["rated"] = bool(entry["rated"])
        for k in ("before", "after", "rd", "change"):  # as a finished game's view gives them
            if isinstance(entry[k], float):
                entry[k] = shown(entry[k])
        entry.update(json.loads(r[10]))
        out.append(entry)
    return out


def unrated_finished(db: sqlite3.Connection) -> list[str]:
    """Finished games that have not been rated yet (a server stopped between a game's last move
    and its rating), oldest first."""
    rows = db.execute(
        "SELECT id FROM games WHERE status='over' AND id NOT IN (SELECT game_id FROM rated_games) ORDER BY updated"
    ).fetchall()
    return [r[0] for r in rows]


__all__ = ["NOT_RATED", "SeatChange", "Standing", "history", "outcome", "person_id", "save", "standing",
           "standings", "unrated_finished"]
