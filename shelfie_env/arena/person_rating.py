"""A person's rating on the ladder's scale: Glicko-2, one game at a time, the levels held fixed.

Glicko-2 (Glickman, 2012) keeps a rating, its deviation (RD: the rating's uncertainty, one sd)
and a volatility for every person. Its scale is the ladder's: 173.7178 = 400 / ln 10 rating
points per unit of log-odds, so a person's rating reads against the levels' ratings directly.

Each finished game is one rating period. The person's results are pairwise: against every
rival at the table, 1 for a higher final score, ½ for the same, 0 for a lower one. A rival that
is a level counts at the level's shipped rating and its uncertainty and is never updated; a
rival that is a person counts at their rating before the game, and both are updated.

A new person starts at :data:`START` with deviation :data:`START_RD`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from shelfie_env.arena.rating_scale import ELO

SCALE = ELO
"""Rating points per unit of Glicko-2's internal scale (173.7178): the ladder's own."""
START = 1500.0
START_RD = 350.0
START_VOLATILITY = 0.06
TAU = 0.5
"""Glicko-2's system constant: how fast the volatility may change."""
MIN_RD = 30.0
MAX_RD = 350.0


def shown(x: float) -> float:
    """A rating, deviation or change as a person sees it, to 0.1: one rounding for a finished game's view,
    the rating history and the person page, so they never disagree by a point."""
    return round(x, 1)


@dataclass(frozen=True)
class PersonRating:
    """A rating, its deviation (one sd), its volatility and the rated games behind it."""

    rating: float = START
    rd: float = START_RD
    volatility: float = START_VOLATILITY
    games: int = 0

    @property
    def ci95(self) -> tuple[float, float]:
        return (self.rating - 1.96 * self.rd, self.rating + 1.96 * self.rd)


@dataclass(frozen=True)
class Result:
    """One pairwise result of a game: the rival's rating and deviation, and the score (1, ½, 0)."""

    rating: float
    rd: float
    score: float


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / math.pi**2)


def _volatility(sigma: float, phi: float, v: float, delta: float) -> float:
    """Glicko-2's step 5: the new volatility, by the Illinois algorithm."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2.0 * (phi**2 + v + ex) ** 2) - (x - a) / TAU**2

    lo = a
    if delta**2 > phi**2 + v:
        hi = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * TAU) < 0:
            k += 1
        hi = a - k * TAU
    f_lo, f_hi = f(lo), f(hi)
    for _ in range(100):
        if abs(hi - lo) <= 1e-6:
            break
        c = lo + (lo - hi) * f_lo / (f_hi - f_lo)
        f_c = f(c)
        if f_c * f_hi <= 0:
            lo, f_lo = hi, f_hi
        else:
            f_lo /= 2.0
        hi, f_hi = c, f_c
    return math.exp(lo / 2.0)


def update(person: PersonRating, results: Sequence[Result]) -> PersonRating:
    """``person`` after one game's pairwise ``results`` (Glicko-2's steps 2–8)."""
    if not results:
        return person
    for r in results:
        if r.score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a pairwise result is 1, 0.5 or 0, got {r.score}")
    mu, phi = (person.rating - START) / SCALE, person.rd / SCALE
    terms = []
    for r in results:
        g = _g(r.rd / SCALE)
        e = 1.0 / (1.0 + math.exp(-g * (mu - (r.rating - START) / SCALE)))
        terms.append((g, e, r.score))
    v = 1.0 / sum(g * g * e * (1.0 - e) for g, e, _ in terms)
    gain = sum(g * (s - e) for g, e, s in terms)
    sigma = _volatility(person.volatility, phi, v, v * gain)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    phi_new = 1.0 / math.sqrt(1.0 / phi_star**2 + 1.0 / v)
    mu_new = mu + phi_new**2 * gain
    rd = min(max(phi_new * SCALE, MIN_RD), MAX_RD)
    return replace(person, rating=mu_new * SCALE + START, rd=rd, volatility=sigma, games=person.games + 1)


def pairwise(scores: Sequence[int], seat: int) -> list[float]:
    """The seat's pairwise results against every other seat of a finished game (1, ½ or 0 each)."""
    own = scores[seat]
    return [1.0 if own > s else 0.5 if own == s else 0.0 for k, s in enumerate(scores) if k != seat]


__all__ = ["MAX_RD", "MIN_RD", "START", "START_RD", "PersonRating", "Result", "pairwise", "shown", "update"]
