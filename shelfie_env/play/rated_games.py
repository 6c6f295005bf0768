"""People's ratings from their finished games, for the web table and ``shelfie play`` alike.

A person's rating is Glicko-2 (:mod:`shelfie_env.arena.person_rating`) on the ladder's scale
(``greedy`` = 1500), one rating per table size. Each finished game is one rating period: the
person's pairwise results against every rated rival at the table (higher final score 1, the
same ½, lower 0; a seat that resigned is behind everyone), where a rated rival is

* a level (``level-1`` … ``level-6``): a fixed anchor at its shipped rating and uncertainty,
  never updated;
* another person who is *established* at the table size (:func:`established`: at least
  :data:`ESTABLISHED_GAMES` rated games and an RD of at most :data:`ESTABLISHED_RD`): at their
  rating before the game (both people are updated). A person who is not established yet counts
  for nobody, so ratings cannot be farmed from throw-away person keys.

Other bots, people without an identity and the person themself in another seat do not count.
A person who asked for a hint in the game is not rated in it (the others are). A game that a
seat resigned (or left: :mod:`shelfie_env.play.web.housekeeping` ends a game left too long as
its resignation) before its :data:`ABORT_DECISIONS`-th decision is *aborted*, unrated for
everyone, when another person with an identity sits at the table; against levels alone it
counts as a loss (a level waits for nobody and is never updated). Every finished game of a known
person is recorded in the store's rating history, rated or not, with the reason.

:func:`rate_game` rates a stored game once (the store refuses a second time); the web calls it
when a game ends and for any finished game it finds unrated at start-up, ``shelfie play`` after
storing its game.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shelfie_env.arena.person_rating import (
    START,
    START_RD,
    START_VOLATILITY,
    PersonRating,
    Result,
    shown,
    update,
)
from shelfie_env.game.engine import Game
from shelfie_env.play import ladder_levels
from shelfie_env.play.web.ratings_store import NOT_RATED, SeatChange, Standing, person_id
from shelfie_env.play.web.records import GameRow
from shelfie_env.play.web.store import GameStore

TERMINAL_PERSON = "terminal"
"""The one person ``shelfie play`` rates: whoever plays in this machine's terminal."""
HINTS_USED = "hints were used"
NO_IDENTITY = "this seat was played without a player identity"
SOLO = "a solo game has no rivals"
TWICE = "the same player holds more than one seat"
NO_RIVAL = "no rated rival: ratings come from games against the levels and other people"
BOT = "a bot"
ABORT_DECISIONS = 3
"""A seat that resigns or leaves before this many decisions (rerolls, stops, circles, cross-outs,
ends of turn: about its first turn) aborts the game when another person sits at the table."""
ESTABLISHED_GAMES = 10
"""Rated games at a table size before a person counts as a rival there."""
ESTABLISHED_RD = 110.0
"""The largest rating deviation with which a person counts as a rival."""
ABORTED = (f"aborted: a player resigned or left before their {ABORT_DECISIONS}rd decision, "
           "so the game counts for nobody")
NOT_ESTABLISHED = (f"no established rival: another person counts once they have {ESTABLISHED_GAMES} rated games "
                   f"and an uncertainty of at most ±{ESTABLISHED_RD:g} at this table size")


@dataclass(frozen=True)
class Rival:
    """A seat a person is rated against: its rating and deviation."""

    rating: float
    rd: float


def _standing(p: PersonRating) -> Standing:
    return Standing(p.rating, p.rd, p.volatility, p.games)


def _person(s: Standing | None) -> PersonRating:
    return PersonRating() if s is None else PersonRating(s.rating, s.rd, s.volatility, s.games)


def ranking_scores(scores: list[int], resigned: int | None) -> list[int]:
    """The scores the pairwise results compare: a seat that resigned is below every other."""
    return [-1 if p == resigned else s for p, s in enumerate(scores)]


def resigned_seat(seats: list[dict[str, Any]]) -> int | None:
    """The seat whose resignation ended the game (None: nobody resigned)."""
    return next((i for i, s in enumerate(seats) if isinstance(s, dict) and s.get("resigned")), None)


def _people(seats: list[dict[str, Any]]) -> dict[int, str]:
    """Seat -> person of the seats held by a person with an identity."""
    return {i: s["person"] for i, s in enumerate(seats) if s.get("type") == "human" and s.get("person")}


def established(p: PersonRating | Standing | None) -> bool:
    """Whether a person's rating at a table size is settled enough to rate others against:
    :data:`ESTABLISHED_GAMES` rated games or more and an RD of :data:`ESTABLISHED_RD` or less."""
    return p is not None and p.games >= ESTABLISHED_GAMES and p.rd <= ESTABLISHED_RD


@functools.lru_cache(maxsize=8)
def _level_specs(players: int) -> frozenset[str]:
    """The levels that are rated rivals at ``players`` (none without a shipped ladder)."""
    return frozenset(ladder_levels.anchors(players) or ())


def could_rate(seats: list[dict[str, Any]], players: int) -> bool:
    """Whether a game of these seats can move a rating: a person with an identity and, beside
    them, a level or another person with an identity (whether they count is decided at the end)."""
    people = _people(seats)
    if players < 2 or not people:
        return False
    levels = _level_specs(players)
    rivals = {i for i, s in enumerate(seats) if s.get("type") == "bot" and s.get("bot") in levels}
    return bool(rivals) or len(set(people.values())) > 1


def at_stake(store: GameStore, seats: list[dict[str, Any]], players: int, seat: int) -> bool:
    """Whether the game of these seats, in play, would move the rating of the person in ``seat``:
    they have an identity (in one seat only) and a level or an established person sits beside them."""
    people = _people(seats)
    me = people.get(seat)
    if me is None or players < 2 or list(people.values()).count(me) > 1:
        return False
    levels = _level_specs(players)
    if any(s.get("type") == "bot" and s.get("bot") in levels for s in seats):
        return True
    return any(established(store.standings(p).get(players)) for p in set(people.values()) - {me})


def _rivals(seats: list[dict[str, Any]], people: dict[int, str], before: dict[str, PersonRating],
            players: int) -> dict[int, Rival]:
    """The seats that count as rated rivals: levels at their shipped rating, established people
    (each in one seat only) at their rating before the game."""
    anchors = ladder_levels.anchors(players) or {}
    twice = {p for p in people.values() if list(people.values()).count(p) > 1}
    out = {}
    for i, s in enumerate(seats):
        if s.get("type") == "bot" and s.get("bot") in anchors:
            out[i] = Rival(*anchors[s["bot"]])
        elif i in people and people[i] not in twice and established(before[people[i]]):
            out[i] = Rival(before[people[i]].rating, before[people[i]].rd)
    return out


def aborted(seats: list[dict[str, Any]], decisions: Mapping[int, int]) -> bool:
    """Whether a finished game is aborted: the seat that resigned (or left) had made fewer than
    :data:`ABORT_DECISIONS` decisions (``decisions``: seat -> moves it made) and another seat is
    held by a person with an identity."""
    seat = resigned_seat(seats)
    if seat is None or decisions.get(seat, 0) >= ABORT_DECISIONS:
        return False
    return any(j != seat for j in _people(seats))


def _summary(row: GameRow, game: Game) -> dict[str, Any]:
    """What the history keeps of a game for a person's page (the game itself may expire)."""
    return {
        "names": [str(s.get("name")) for s in row.seats],
        "bots": [s.get("bot") for s in row.seats],
        "scores": game.scores(),
        "resigned": resigned_seat(row.seats),
    }


def assess(row: GameRow, standing: Any, decisions: Mapping[int, int] | None = None
           ) -> tuple[list[dict[str, Any]], list[SeatChange]]:
    """Each seat's outcome of finished game ``row`` and the people's rating changes (module doc);
    ``standing(person, players)`` reads a person's rating before the game, ``decisions`` gives
    the moves each seat made (None: the game was played to its end)."""
    game = Game.from_dict(row.state)
    players = game.num_players
    people = _people(row.seats)
    before = {p: _person(standing(p, players)) for p in set(people.values())}
    stopped = decisions is not None and aborted(row.seats, decisions)
    rivals = {} if stopped else _rivals(row.seats, people, before, players)
    scores = ranking_scores(game.scores(), resigned_seat(row.seats))
    outcome: list[dict[str, Any]] = []
    changes: list[SeatChange] = []
    for i, s in enumerate(row.seats):
        if s.get("type") != "human":
            outcome.append({"seat": i, "rated": False, "reason": BOT})
            continue
        if i not in people:
            outcome.append({"seat": i, "rated": False, "reason": NO_IDENTITY})
            continue
        person = people[i]
        reason = ABORTED if stopped else _unrated_reason(i, s, people, rivals, players)
        old = before[person]
        new = None
        if reason is None:
            new = update(old, [Result(r.rating, r.rd, _pairwise(scores, i, j)) for j, r in rivals.items() if j != i])
        outcome.append(_seat_outcome(i, players, old, new, reason))
        if any(c.person == person for c in changes):
            continue  # one history row per person and game (the same person in two seats)
        known = old if old.games or new is not None else None
        changes.append(SeatChange(person, players, i, reason, None if known is None else _standing(known),
                                  None if new is None else _standing(new), _summary(row, game)))
    return outcome, changes


def _pairwise(scores: list[int], seat: int, rival: int) -> float:
    own, theirs = scores[seat], scores[rival]
    return 1.0 if own > theirs else 0.5 if own == theirs else 0.0


def _unrated_reason(seat: int, s: dict[str, Any], people: dict[int, str], rivals: dict[int, Rival],
                    players: int) -> str | None:
    """Why a person's seat is not rated (None: it is)."""
    if players < 2:
        return SOLO
    if list(people.values()).count(people[seat]) > 1:
        return TWICE
    if s.get("hinted"):
        return HINTS_USED
    if not any(j != seat for j in rivals):
        if ladder_levels.anchors(players) is None:
            return f"no ladder at {players} players: no rating is kept there yet"
        if any(p != people[seat] for p in people.values()):
            return NOT_ESTABLISHED
        return NO_RIVAL
    return None


def _seat_outcome(seat: int, players: int, old: PersonRating, new: PersonRating | None,
                  reason: str | None) -> dict[str, Any]:
    if new is None:
        return {"seat": seat, "rated": False, "reason": reason}
    return {"seat": seat, "rated": True, "players": players, "rating": shown(new.rating),
            "rd": shown(new.rd), "change": shown(new.rating - old.rating),
            "before": shown(old.rating), "games": new.games}


def rate_game(store: GameStore, game_id: str) -> list[dict[str, Any]] | None:
    """Rate finished game ``game_id`` of ``store`` once (module doc); its outcome per seat (None:
    the game is not over, or was finished before ratings were kept)."""
    row = store.get_game(game_id)
    if row is None or row.status != "over":
        return None
    decisions = store.seat_decisions(game_id) if resigned_seat(row.seats) is not None else None
    return store.rate(game_id, lambda standing: assess(row, standing, decisions))


def stored_outcome(store: GameStore, game_id: str) -> list[dict[str, Any]] | None:
    """The rating outcome of a finished game as stored (None: not rated, or before ratings)."""
    found = store.game_outcome(game_id)
    return None if found is NOT_RATED else found


def rate_unrated(store: GameStore) -> int:
    """Rate every finished game of ``store`` not rated yet (oldest first); how many."""
    ids = store.unrated_finished()
    for game_id in ids:
        rate_game(store, game_id)
    return len(ids)


def person_report(store: GameStore, person: str, players: int | None = None, limit: int = 50) -> dict[str, Any]:
    """A person's ratings per table size and their latest games, as the web's person page and
    ``shelfie rating`` show them."""
    ratings = {
        n: {"rating": shown(s.rating), "rd": shown(s.rd), "games": s.games,
            "ci95": [shown(s.rating - 1.96 * s.rd), shown(s.rating + 1.96 * s.rd)],
            "suggested_level": ladder_levels.nearest(s.rating, n)}
        for n, s in store.standings(person).items()
        if players is None or n == players
    }
    return {
        "ratings": {str(n): r for n, r in ratings.items()},
        "start": {"rating": START, "rd": START_RD, "volatility": START_VOLATILITY},
        "games": store.rating_history(person, players, limit),
    }


def finished_at(entry: dict[str, Any]) -> str:
    """A history entry's time as ``2024-05-01 18:20`` (local time)."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(entry["time"]))


__all__ = ["ABORTED", "ABORT_DECISIONS", "ESTABLISHED_GAMES", "ESTABLISHED_RD", "HINTS_USED", "NOT_ESTABLISHED",
           "NO_IDENTITY", "NO_RIVAL", "SOLO", "TERMINAL_PERSON", "TWICE", "aborted", "assess", "at_stake", "could_rate",
           "established", "finished_at", "person_id", "person_report", "rate_game", "rate_unrated",
           "ranking_scores", "resigned_seat", "stored_outcome"]
