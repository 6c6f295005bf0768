"""The rating scale (Elo from luck-corrected matches) and people's Glicko-2 ratings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shelfie_env.arena.person_rating import PersonRating, Result, pairwise, update
from shelfie_env.arena.rating_scale import Match, elo_difference, expected_score, fit


def test_glicko2_gives_glickmans_worked_example() -> None:
    p = PersonRating(1500.0, 200.0, 0.06)
    q = update(p, [Result(1400, 30, 1.0), Result(1550, 100, 0.0), Result(1700, 300, 0.0)])
    assert q.rating == pytest.approx(1464.06, abs=0.05)
    assert q.rd == pytest.approx(151.52, abs=0.05)
    assert q.volatility == pytest.approx(0.05999, abs=1e-5)
    assert q.games == 1


def test_pairwise_results_of_a_game() -> None:
    assert pairwise([30, 25, 30, 10], 0) == [1.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="1, 0.5 or 0"):
        update(PersonRating(), [Result(1500, 50, 0.7)])


def test_elo_difference_is_the_log_odds_of_the_score() -> None:
    d, se = elo_difference(0.64, 0.015)
    assert expected_score(d) == pytest.approx(0.64)
    assert d == pytest.approx(400 * math.log10(0.64 / 0.36))
    assert se == pytest.approx(400 / math.log(10) * 0.015 / (0.64 * 0.36))
    with pytest.raises(ValueError, match="positive standard error"):
        elo_difference(0.6, 0.0)


def test_the_fit_recovers_known_ratings_from_noisy_matches() -> None:
    truth = {"greedy": 1500.0, "a": 1300.0, "b": 1420.0, "c": 1610.0, "d": 1700.0}
    rng = np.random.default_rng(0)
    names = sorted(truth)
    matches = []
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            s = expected_score(truth[x] - truth[y])
            se = 0.01
            matches.append(Match(x, y, float(s + rng.normal(0, se)), se, 1000))
    ratings = fit(matches)
    assert ratings["greedy"]["rating"] == 1500.0 and ratings["greedy"]["se"] == 0.0
    for n in names:
        lo, hi = ratings[n]["ci95"]
        assert lo - 5 <= truth[n] <= hi + 5, (n, ratings[n], truth[n])


def test_the_fit_refuses_matches_not_tied_to_the_anchor() -> None:
    with pytest.raises(ValueError, match="anchor 'greedy' plays in none"):
        fit([Match("a", "b", 0.6, 0.02, 100)])
    with pytest.raises(ValueError, match="no chain of matches ties c, d"):
        fit([Match("a", "greedy", 0.6, 0.02, 100), Match("c", "d", 0.6, 0.02, 100)])
    with pytest.raises(ValueError, match="no matches"):
        fit([])
