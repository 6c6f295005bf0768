"""``shelfie replay FILE --review``: a finished game's review (:mod:`shelfie_env.arena.analysis.review`) as text.

Luck per turn for each player, each player's raw and luck-adjusted result with
their decisions' total regret, and the three biggest mistakes with the better
move, as a backgammon player reads gnubg's analysis; then each player's error rate
as a rating, with the level to play next (:mod:`shelfie_env.play.error_rating`).
A solo game's review is exact, in expected final points (:mod:`shelfie_env.play.solo_review_text`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from shelfie_env.arena.analysis.review import review_game
from shelfie_env.clip import clip
from shelfie_env.play.replay_format import Move, positions, seat_names
from shelfie_env.play.review_parts import MARKS, WIDTH, situation

NAME_WIDTH = 12
"""Names are cut to this many characters in the tables (four players fit in 80 columns)."""


def replay_review(data: dict[str, Any], moves: Sequence[Move], value: str = "td") -> dict[str, Any]:
    """The review of the game a replay file holds (``moves`` as read by
    :func:`.replay_format.read_move`), with the players named as the replay names them."""
    initial, states = positions(data, moves)
    actions = [m.action for m in moves]
    if any(a is None for a in actions):
        raise ValueError("a review needs every move as an action id")
    players = initial.get("num_players")
    if not isinstance(players, int) or isinstance(players, bool):
        raise ValueError("the starting position has no valid num_players")
    resigned = data.get("resigned")  # a web game ended by a resignation
    return review_game(
        initial, actions, states, value=value, names=seat_names(data, players), resigned=resigned
    )


def _signed(x: float) -> str:
    return f"{x:+.2f}"


def _win_points(regret: float, players: int) -> str:
    """``(about 7 points of win chance)`` at two players, where the rank reward is a win chance."""
    if players != 2:
        return ""
    return (
        f" (about {regret * 50:.0f} points of win chance)"
        if regret * 50 >= 0.5
        else " (under a point of win chance)"
    )


def render_review(review: dict[str, Any], rated: dict[str, Any] | None = None) -> str:
    """The review as text: luck per turn, the results and the biggest mistakes; then, with
    ``rated`` (:func:`~shelfie_env.play.error_rating.error_ratings`), the ratings of the error rates.
    A solo game's exact review is written by :func:`.solo_review_text.render_solo_review`."""
    if review["num_players"] == 1:
        from shelfie_env.play.solo_review_text import render_solo_review

        return render_solo_review(review)
    players = review["players"]
    n = review["num_players"]
    names = [clip(p["name"], NAME_WIDTH) for p in players]
    width = max(9, *(len(x) for x in names))
    lines = [
        *_prose(
            f"Review by {review['value']}'s exact search over the dice. Values are in units of {review['unit']}."
        ),
        "",
        *_prose(
            "Luck per turn: the value after the turn's rolls minus the average over everything they could "
            "have shown."
        ),
        "round  " + "".join(x.ljust(width + 3) for x in names).rstrip(),
    ]
    by_round: dict[int, dict[int, dict[str, Any]]] = {}
    for t in review["turns"]:
        by_round.setdefault(t["round"], {})[t["seat"]] = t
    for rnd in sorted(by_round):
        cells = []
        for s in range(n):
            t = by_round[rnd].get(s)
            cell = "" if t is None else f"{_signed(t['luck'])} {MARKS[t['mark']]}".rstrip()
            cells.append(cell.ljust(width + 3))
        lines.append(f"{rnd:>5}  " + "".join(cells).rstrip())
    lines.append("total  " + "".join(_signed(p["luck"]).ljust(width + 3) for p in players).rstrip())
    th = review["thresholds"]
    lines += [
        *_prose(
            f"(+ lucky, - unlucky: a turn's luck of {th['lucky']:.2f} or more either way; "
            f"++ / --: {th['very_lucky']:.2f} or more)"
        ),
        "",
        *_prose(
            "Results (result: +1 first, -1 last; adjusted: the result less the player's own luck plus "
            "their share of the rivals'):"
        ),
    ]
    lines += _results(players, names)
    lines += [
        *_prose(
            f"(regret: the best move's value minus the value of the move played, summed over the "
            f"player's decisions; a mistake costs {th['mistake']:.2f} or more, a blunder "
            f"{th['blunder']:.2f} or more)"
        ),
        "",
    ]
    mistakes = review["mistakes"]
    if not mistakes:
        lines.append("No mistakes: every move played was the best by this search.")
    else:
        lines.append(f"The {len(mistakes)} biggest mistake{'s' if len(mistakes) > 1 else ''}:")
        for k, m in enumerate(mistakes, 1):
            lines += [
                f"{k}. move {m['move']}, round {m['round']}, {players[m['seat']]['name']}",
                f"   {situation(m)}",
                f"   played {m['played']}",
                f"   better {m['better']}",
                f"   regret {m['regret']:.3f}{_win_points(m['regret'], n)}",
            ]
    if rated is not None:
        from shelfie_env.play.error_rating import text_lines

        lines += ["", *text_lines(rated, n)]
    return "\n".join(lines) + "\n"


def _results(players: list[dict[str, Any]], names: list[str]) -> list[str]:
    """The results table: one line per player, numbers right-aligned under their heads."""
    head = ["player", "score", "result", "luck", "adjusted", "decisions", "regret", "mistakes", "blunders"]
    rows = [
        [
            names[i],
            str(p["score"]),
            _signed(p["result"]),
            _signed(p["luck"]),
            _signed(p["adjusted"]),
            str(p["decisions"]),
            f"{p['regret']:.2f}",
            str(p["mistakes"]),
            str(p["blunders"]),
        ]
        for i, p in enumerate(players)
    ]
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    return [
        "  ".join(r[0].ljust(widths[0]) if c == 0 else r[c].rjust(widths[c]) for c in range(len(r)))
        for r in [head, *rows]
    ]


def _prose(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False)


__all__ = ["MARKS", "WIDTH", "render_review", "replay_review", "situation"]
