"""People's ratings from their finished games, for the web table and ``shelfie play`` alike.

A person's rating is Glicko-2 (:mod:`shelfie_env.arena.person_rating`) on the ladder's scale
(``greedy`` = 1500), one rating per table size. Each finished game is one rating period: the
person's pairwise results against every rated rival at the table (higher final score 1, the
same ½, lower 0; a seat that resigned is behind everyone), where a rated rival is

* a level (``level-1`` … ``level-6``): a fixed anchor at its shipped rating and uncertainty,
  never updated;
* another person: at their rating before the game (both people are updated).

Other bots, people without an identity and the person themself in another seat do not count.
A person who asked for a hint in the game is not rated in it (the others are). Every finished
game of a known person is recorded in the store's rating history, rated or not, with the reason.

:func:`rate_game` rates a stored game once (the store refuses a second time); the web calls it
when a game ends and for any finished game it finds unrated at start-up, ``shelfie play`` after
storing its game.
"""

from __future__ import annotations

import time
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


def _rivals(seats: list[dict[str, Any]], people: dict[int, str], before: dict[str, PersonRating],
            players: int) -> dict[int, Rival]:
    """The seats that count as rated rivals: levels at their shipped rating, people (each in one
    seat only) at their rating before the game."""
    anchors = ladder_levels.anchors(players) or {}
    twice = {p for p in people.values() if list(people.values()).count(p) > 1}
    out = {}
    for i, s in enumerate(seats):
        if s.get("type") == "bot" and s.get("bot") in anchors:
            out[i] = Rival(*anchors[s["bot"]])
        elif i in people and people[i] not in twice:
            out[i] = Rival(before[people[i]].rating, before[people[i]].rd)
    return out


def _summary(row: GameRow, game: Game) -> dict[str, Any]:
    """What the history keeps of a game for a person's page (the game itself may expire)."""
    return {
        "names": [str(s.get("name")) for s in row.seats],
        "bots": [s.get("bot") for s in row.seats],
        "scores": game.scores(),
        "resigned": resigned_seat(row.seats),
    }


def assess(row: GameRow, standing: Any) -> tuple[list[dict[str, Any]], list[SeatChange]]:
    """Each seat's outcome of finished game ``row`` and the people's rating changes (module doc);
    ``standing(person, players)`` reads a person's rating before the game."""
    game = Game.from_dict(row.state)
    players = game.num_players
    people = _people(row.seats)
    before = {p: _person(standing(p, players)) for p in set(people.values())}
    rivals = _rivals(row.seats, people, before, players)
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
        reason = _unrated_reason(i, s, people, rivals, players)
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
    return store.rate(game_id, lambda standing: assess(row, standing))


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


__all__ = ["HINTS_USED", "NO_IDENTITY", "NO_RIVAL", "SOLO", "TERMINAL_PERSON", "TWICE", "assess", "finished_at",
           "person_id", "person_report", "rate_game", "rate_unrated", "ranking_scores", "resigned_seat",
           "stored_outcome"]
