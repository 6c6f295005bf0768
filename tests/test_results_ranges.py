"""Printed rates stay in [0, 100 %]; the games factor has one name and is ``none`` when results do not vary."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from shelfie_env.arena.evaluate import Evaluation, EvaluationRow
from shelfie_env.arena.report import to_markdown
from shelfie_env.arena.results import interval, result_stats, wilson


def _records(raw: list[float], corrected: list[float] | None = None) -> list[dict]:
    """Two-player games of bot 0 against bot 1, bot 0 in seat 0, with bot 0's results."""
    return [
        {
            "game": i,
            "deal": i,
            "seats": [0, 1],
            "raw": [r, -r],
            **({"corrected": [corrected[i], -corrected[i]]} if corrected is not None else {}),
        }
        for i, r in enumerate(raw)
    ]


def _arena(records: list[dict]) -> dict:
    return {
        "bots": [],
        "pairings": [],
        "config": {
            "players": 2,
            "bots": ["a", "b"],
            "games_per_group": len(records),
            "seeds": "0..",
            "wall_time_s": 1.0,
            "workers": 1,
            "luck": "td",
        },
        "results": result_stats(["a", "b"], records),
    }


def _rates(md: str) -> list[float]:
    """Every percentage and interval end printed in ``md``."""
    found = [float(x) for x in re.findall(r"(-?\d+\.\d)%", md)]
    for lo, hi in re.findall(r"(-?\d+\.\d)[–,] ?(-?\d+\.\d)[)\]]", md):
        found += [float(lo), float(hi)]
    return found


def test_a_20_game_run_with_19_wins_prints_an_interval_within_100_percent() -> None:
    # 19 wins, 1 loss: the normal interval of the score rate is 95.0 % (85.2–104.8)
    md = to_markdown(_arena(_records([1.0] * 19 + [-1.0])))
    assert "104.8" not in md
    assert "95.0% (" in md
    rates = _rates(md)
    assert rates and all(0.0 <= x <= 100.0 for x in rates)
    (pair,) = result_stats(["a", "b"], _records([1.0] * 19 + [-1.0]))["pairings"]
    assert pair["raw"]["score_rate_ci95"][1] == 1.0 and pair["raw"]["ci95"][1] == 1.0


def test_raw_results_that_do_not_vary_get_the_wilson_interval() -> None:
    block = interval([1.0] * 20)
    lo, hi = wilson(20, 20)
    assert block["score_rate_ci95"] == pytest.approx([lo, hi]) and lo < 1.0 == hi
    assert interval([0.0] * 10)["score_rate_ci95"] == pytest.approx(list(wilson(5, 10)))  # ties count half


def test_corrected_results_are_stored_as_computed_and_printed_within_the_range() -> None:
    raw = [1.0, -1.0] * 10
    corrected = [-1.3, -0.9] * 10  # an unbiased estimate may leave [-1, 1]
    res = _arena(_records(raw, corrected))
    (pair,) = res["results"]["pairings"]
    assert pair["corrected"]["mean"] == pytest.approx(-1.1) and pair["corrected"]["score_rate"] < 0
    md = to_markdown(res)
    assert all(0.0 <= x <= 100.0 for x in _rates(md))
    assert "-1.100" not in md and "-5.0%" not in md


def test_evaluate_prints_a_corrected_rate_below_zero_as_zero() -> None:
    # evaluate printed "-1.0 % [-3.7, 1.7]" for a corrected score rate of -0.01
    corrected = interval([-1.02, -1.0, -0.98, -1.04, -1.06, -0.96, -1.0, -1.02], bounded=False)
    raw = interval([-1.0] * 7 + [1.0])
    row = EvaluationRow("planner", 8, 8, raw, corrected, 3.0)
    text = str(Evaluation("agent", [row], []))
    assert "-" not in text.split("luck-corrected")[1].split("games factor")[0]
    assert "luck-corrected 0.0% [0.0," in text
    assert "games factor 3.0×" in text and "fewer games" not in text


def test_the_games_factor_is_none_when_raw_results_do_not_vary() -> None:
    res = _arena(_records([1.0] * 10, [0.9, 1.1] * 5))
    (pair,) = res["results"]["pairings"]
    assert pair["variance_ratio"] is None
    row = res["results"]["pairings"][0]
    md = to_markdown(res)
    assert md.splitlines()[-1].endswith("| none |") and "games factor" in md
    ev = Evaluation(
        "a", [EvaluationRow("b", 10, 10, row["raw"], row["corrected"], row["variance_ratio"])], []
    )
    assert str(ev).endswith("games factor none")


def test_luck_factors_script_prints_none_for_results_that_do_not_vary() -> None:
    spec = importlib.util.spec_from_file_location(
        "luck_factors", Path(__file__).parents[1] / "scripts/luck_factors.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    raw = np.ones(8)
    cor = np.array([0.9, 1.1] * 4)
    f = mod.factors(raw, cor, np.repeat(np.arange(4), 2))
    assert f["luck"] is None and f["duplicate + luck"] is None
    assert mod._factor(None) == "none" and mod._factor(5.0, [4.0, 6.0]) == "5.00 [4.00, 6.00]"
