"""Error rate → rating: what a game's regret per decision says about the player's rating.

gnubg turns a player's error rate into a rating estimate; this does the same on the ladder. The
review (:mod:`.review`) measures the regret of every decision with the ``td`` judge. Played by
every level in games against the levels next to it (common dice on the ``test`` deals), each
level's mean regret per decision and its ladder rating give one point; the calibration is the
weighted straight line through them, ``rating = intercept + slope · regret``.

A person's review then gives their regret per decision over the game, its standard error over
the game's decisions, and the rating the line says with a 95 % interval that holds both that
error and the scatter of the levels around the line (one game is a small sample: the interval
is wide).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from shelfie_env.arena.deals import deal_start
from shelfie_env.bots.levels import LEVELS

JUDGE = "td"
"""The review's value function the calibration is measured with."""


def _game(specs: Sequence[str], deal: int) -> tuple[list[int], list[Any], Any]:
    """One game of ``specs`` on common dice: the actions, the positions after each, and the start."""
    from shelfie_env.bots import act_on_game, make
    from shelfie_env.game.dice import dice_source
    from shelfie_env.game.engine import Game

    players = len(specs)
    seats = [make(s) for s in specs]
    game = Game.new(players, rng=dice_source("tape", deal))
    start = game.clone()
    actions, states = [], []
    while not game.over:
        a = act_on_game(seats[game.current], game)
        game.step(a)
        actions.append(a)
        states.append(game.to_dict())
    return actions, states, start


def level_regrets(players: int, games: int, first: int | None = None) -> dict[str, dict[str, float]]:
    """Each level's mean regret per decision (``td`` judge) over ``games`` games at ``players``: the
    level in seat ``g mod players`` of game ``g``, the other seats the levels next to it."""
    from shelfie_env.arena.analysis.review import review_game

    first = deal_start("test") if first is None else first
    specs = [lv.spec for lv in LEVELS]
    out = {}
    for k, spec in enumerate(specs):
        per_game = []
        for g in range(games):
            others = [specs[max(k - 1, 0)], specs[min(k + 1, len(specs) - 1)]]
            table = [others[(g + i) % 2] for i in range(players - 1)]
            seat = g % players
            table.insert(seat, spec)
            actions, states, start = _game(table, first + g)
            rev = review_game(start, actions, states, value=JUDGE)
            me = rev["players"][seat]
            per_game.append(me["regret"] / max(me["decisions"], 1))
        x = np.array(per_game)
        out[spec] = {"regret": float(x.mean()), "se": float(x.std(ddof=1) / math.sqrt(x.size)), "games": games}
    return out


def fit_line(points: Sequence[tuple[float, float, float]]) -> dict[str, float]:
    """``rating = intercept + slope · regret`` through ``(regret, rating, weight)`` points (weighted
    least squares), with the ratings' plain residual sd about the line (how far a level sits off it)."""
    x = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    w = np.array([p[2] for p in points])
    a = np.vstack([np.ones_like(x), x]).T
    coef = np.linalg.lstsq(a * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    resid = y - a @ coef
    dof = max(len(x) - 2, 1)
    return {"intercept": float(coef[0]), "slope": float(coef[1]),
            "residual_sd": float(math.sqrt((resid**2).sum() / dof))}


def rating_from_regret(regret: float, se: float, calibration: dict[str, Any]) -> dict[str, Any]:
    """The rating a game's regret per decision says, with its 95 % interval (module doc)."""
    r = calibration["intercept"] + calibration["slope"] * regret
    sd = math.hypot(abs(calibration["slope"]) * se, calibration["residual_sd"])
    return {"rating": r, "ci95": [r - 1.96 * sd, r + 1.96 * sd]}


def regret_of(review: dict[str, Any], seat: int) -> tuple[float, float, int]:
    """A seat's regret per decision over a reviewed game and its standard error over the decisions."""
    mine = np.array([d["regret"] for d in review["decisions"] if d["seat"] == seat], dtype=float)
    if mine.size == 0:
        return 0.0, 0.0, 0
    se = float(mine.std(ddof=1) / math.sqrt(mine.size)) if mine.size > 1 else 0.0
    return float(mine.mean()), se, int(mine.size)


__all__ = ["JUDGE", "fit_line", "level_regrets", "rating_from_regret", "regret_of"]
