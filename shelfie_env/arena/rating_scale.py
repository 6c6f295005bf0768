"""The rating scale: Elo-type ratings (400 · log10 of the odds) fitted from luck-corrected matches.

A **match** is one bot's luck-corrected score rate ``s`` against another, with its standard
error: at two players head to head (duplicate deals, common dice); at three and four players the
bot alone against a field of copies of the other, where ``s`` is the mean share of rivals beaten,
i.e. its mean pairwise result against each copy. A match says the two ratings differ by

    d = 400 · log10(s / (1 − s)),   se(d) = 400 / ln 10 · se(s) / (s (1 − s))

(the delta method), and :func:`fit` finds the ratings whose differences fit every match best by
weighted least squares (weights 1 / se(d)²), with one bot held at its anchor rating. The
covariance of the fit gives each rating its 95 % interval (relative to the anchor, which has
none). Scores are clipped to [:data:`CLIP`, 1 − :data:`CLIP`] first: a match that one side wins
every time says only that the gap is large, so the ladder plays each bot against those near it.

The anchor is ``greedy`` at 1500 at every table size (:data:`ANCHOR`): a fixed heuristic that
no training changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

ELO = 400.0 / math.log(10.0)
"""Rating points per unit of log-odds."""
ANCHOR = ("greedy", 1500.0)
"""The bot held fixed and its rating."""
CLIP = 0.02
"""Scores are clipped to [CLIP, 1 − CLIP] before their log-odds are taken."""
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Match:
    """``a``'s luck-corrected score rate against ``b`` (or a field of ``b``) with its standard error."""

    a: str
    b: str
    score: float
    se: float
    games: int
    players: int = 2

    def difference(self) -> tuple[float, float]:
        """The rating difference ``a − b`` this match says, and its standard error."""
        return elo_difference(self.score, self.se)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "score": self.score, "se": self.se, "games": self.games,
                "players": self.players}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Match:
        return cls(str(d["a"]), str(d["b"]), float(d["score"]), float(d["se"]), int(d["games"]),
                   int(d.get("players", 2)))


def row_score(row: Any) -> tuple[float, float, int]:
    """An :class:`~shelfie_env.arena.evaluate.EvaluationRow`'s score rate (luck-corrected when measured),
    its standard error (from its 95 % interval) and its games."""
    side = row.corrected or row.raw
    lo, hi = side["score_rate_ci95"]
    return float(side["score_rate"]), (hi - lo) / (2 * Z95), int(row.games)


def elo_difference(score: float, se: float) -> tuple[float, float]:
    """``400 · log10(s / (1 − s))`` of a score rate and its standard error (module doc)."""
    if not se > 0:
        raise ValueError(f"a match needs a positive standard error, got {se}")
    s = min(max(score, CLIP), 1.0 - CLIP)
    return ELO * math.log(s / (1.0 - s)), ELO * se / (s * (1.0 - s))


def expected_score(difference: float) -> float:
    """The score rate a rating ``difference`` predicts: ``1 / (1 + 10^(−d / 400))``."""
    return 1.0 / (1.0 + 10.0 ** (-difference / 400.0))


def fit(matches: Sequence[Match], anchor: tuple[str, float] = ANCHOR) -> dict[str, dict[str, Any]]:
    """Ratings of every bot in ``matches``: ``{bot: {"rating", "se", "ci95"}}`` (module doc).

    ``ValueError`` when there are no matches, the anchor plays in none, or some bot is not tied to
    the anchor through a chain of matches.
    """
    if not matches:
        raise ValueError("no matches to fit")
    names = sorted({m.a for m in matches} | {m.b for m in matches})
    base, rating0 = anchor
    if base not in names:
        raise ValueError(f"the anchor {base!r} plays in none of the matches")
    _check_connected(names, matches, base)
    free = [n for n in names if n != base]
    col = {n: i for i, n in enumerate(free)}
    x = np.zeros((len(matches), len(free)))
    y = np.zeros(len(matches))
    w = np.zeros(len(matches))
    for k, m in enumerate(matches):
        d, se = m.difference()
        y[k], w[k] = d, 1.0 / se**2
        for name, sign in ((m.a, 1.0), (m.b, -1.0)):
            if name == base:
                y[k] -= sign * rating0
            else:
                x[k, col[name]] += sign
    xtw = x.T * w
    cov = np.linalg.inv(xtw @ x)
    est = cov @ (xtw @ y)
    out = {base: {"rating": rating0, "se": 0.0, "ci95": [rating0, rating0]}}
    for n in free:
        r, se = float(est[col[n]]), float(math.sqrt(cov[col[n], col[n]]))
        out[n] = {"rating": r, "se": se, "ci95": [r - Z95 * se, r + Z95 * se]}
    return out


def _check_connected(names: Sequence[str], matches: Sequence[Match], base: str) -> None:
    seen, todo = {base}, [base]
    while todo:
        here = todo.pop()
        for m in matches:
            for a, b in ((m.a, m.b), (m.b, m.a)):
                if a == here and b not in seen:
                    seen.add(b)
                    todo.append(b)
    missing = [n for n in names if n not in seen]
    if missing:
        raise ValueError(f"no chain of matches ties {', '.join(missing)} to the anchor {base!r}")


def combine(estimates: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Inverse-variance mean of ``(rating, se)`` estimates of one rating, and its standard error."""
    w = np.array([1.0 / se**2 for _, se in estimates])
    r = np.array([r for r, _ in estimates])
    return float((w * r).sum() / w.sum()), float(1.0 / math.sqrt(w.sum()))


__all__ = ["ANCHOR", "CLIP", "ELO", "Match", "combine", "elo_difference", "expected_score", "fit", "row_score"]
