"""A reviewed game's error rates as ratings: each player's regret per decision, the rating it
corresponds to and the level nearest it, for the next game.

The calibration (:mod:`shelfie_env.arena.analysis.calibration`) is a straight line from regret per
decision to rating, measured on games the levels played, with ``td``'s review; so only a review
by ``td`` reads on it. One game holds a few dozen decisions: the interval is wide.
"""

from __future__ import annotations

import textwrap
from typing import Any

from shelfie_env.clip import clip
from shelfie_env.play import ladder_levels

JUDGE = "td"
"""The review's value function the calibration was measured with."""


def unavailable(players: int, value: str) -> str | None:
    """Why a review of ``players`` by ``value`` has no rating from its error rates (None: it has one)."""
    if players == 1:
        return "a solo game is measured against perfect play: its exact loss per decision is in the review"
    if value != JUDGE:
        return f"the error rate → rating calibration is measured with {JUDGE}'s review; review by {JUDGE} to see it"
    if ladder_levels.calibration(players) is None:
        return f"no calibration of error rate to rating is available at {players} players yet"
    return None


def error_ratings(review: dict[str, Any], value: str = JUDGE) -> dict[str, Any]:
    """``{"available", "message"?, "judge", "players": [{"seat", "name", "regret", "se", "decisions",
    "rating", "ci95", "suggested_level", "suggested_label"}]}`` of a review
    (:func:`~shelfie_env.arena.analysis.review.review_game`)."""
    from shelfie_env.arena.analysis.calibration import rating_from_regret, regret_of

    players = int(review["num_players"])
    why = unavailable(players, value)
    if why is not None:
        return {"available": False, "message": why, "judge": JUDGE, "players": []}
    calibration = ladder_levels.calibration(players)
    rows = []
    for p in review["players"]:
        regret, se, decisions = regret_of(review, p["seat"])
        row: dict[str, Any] = {"seat": p["seat"], "name": p["name"], "regret": regret, "se": se,
                               "decisions": decisions, "rating": None, "ci95": None, "suggested_level": None,
                               "suggested_label": None}
        if decisions:
            est = rating_from_regret(regret, se, calibration)
            level = ladder_levels.nearest(est["rating"], players)
            row.update(rating=round(est["rating"], 1), ci95=[round(x, 1) for x in est["ci95"]],
                       suggested_level=level, suggested_label=ladder_levels.level_label(level, players))
        rows.append(row)
    return {"available": True, "judge": JUDGE, "players": rows}


def text_lines(rated: dict[str, Any], players: int) -> list[str]:
    """The error ratings as the terminal review prints them: a table, then what it means."""
    if not rated["available"]:
        return _prose(f"Rating from the error rate: {rated['message']}.")
    names = [clip(r["name"], 12) for r in rated["players"]]
    head = ["player", "regret/decision", "decisions", "rating [95 %]", "next game"]
    body = []
    for name, r in zip(names, rated["players"]):
        if r["rating"] is None:
            body.append([name, "-", "0", "-", "-"])
            continue
        lo, hi = r["ci95"]
        body.append([name, f"{r['regret']:.4f}", str(r["decisions"]), f"{r['rating']:.0f} [{lo:.0f}, {hi:.0f}]",
                     r["suggested_label"]])
    widths = [max(len(row[c]) for row in [head, *body]) for c in range(len(head))]
    lines = _prose("Rating from the error rate: the rating that each player's regret per decision "
                   "corresponds to, by a line measured on the levels' games:")
    for row in [head, *body]:
        lines.append("  ".join(row[c].ljust(widths[c]) if c in (0, 4) else row[c].rjust(widths[c])
                               for c in range(len(row))).rstrip())
    return lines + _prose("(one game is a small sample, so the interval is wide; next game: the level "
                          "nearest that rating)")


def _prose(text: str) -> list[str]:
    return textwrap.wrap(text, 80, break_on_hyphens=False)


__all__ = ["JUDGE", "error_ratings", "text_lines", "unavailable"]
