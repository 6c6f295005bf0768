"""Mean rank reward, raw and luck-corrected, with intervals: the arena's ``results`` block.

The quantity is the rank reward of docs/rules.md (two players: +1 win, 0 tie,
−1 loss); its mean ``r`` gives the score rate ``(1 + r) / 2`` (wins plus half
the ties; at 3–4 players the average share of rivals beaten). Intervals are
normal 95 % intervals, ``mean ± 1.96 · sd / √units``, where a unit is one game,
or with duplicate matches one deal (the mean over the deal's seatings, so the
games of a deal, which share their dice, are not counted as independent).

Raw results lie in [−1, 1], so their intervals are cut to it (score rates in
[0, 1]); when every unit has the same raw result (the normal interval has no
width) the interval is the Wilson interval of the score rate over the units.
Corrected results are unbiased estimates that can leave [−1, 1] (the correction
adds zero-mean terms), so their means and intervals are stored as computed, and
the printed tables cut them to the range (:func:`clipped`).

The ``variance_ratio`` (raw variance / corrected variance) is how many times
fewer games the corrected result needs for the same interval; ``None`` when
either does not vary (no ratio is defined).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

Z95 = 1.959964


def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a proportion ``k / n`` (``k`` may be fractional: ties count half)."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def interval(values: Sequence[float], bounded: bool = True) -> dict[str, Any]:
    """Mean, sd and 95 % interval of rank rewards ``values``, and the score rate they imply.

    ``bounded``: the values are raw results, so the interval stays in [−1, 1] (module doc);
    ``False`` for corrected results, whose interval is the plain normal one.
    """
    n = len(values)
    mean = math.fsum(values) / n if n else 0.0
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    half = Z95 * math.sqrt(var / n) if n else 0.0
    lo, hi = mean - half, mean + half
    if bounded:
        if n and var == 0:
            w_lo, w_hi = wilson(n * (1 + mean) / 2, n)
            lo, hi = 2 * w_lo - 1, 2 * w_hi - 1
        lo, hi = max(-1.0, lo), min(1.0, hi)
    return {
        "mean": mean,
        "sd": math.sqrt(var),
        "ci95": [lo, hi],
        "score_rate": (1 + mean) / 2,
        "score_rate_ci95": [(1 + lo) / 2, (1 + hi) / 2],
    }


def clipped(block: dict[str, Any]) -> dict[str, Any]:
    """``block`` (an :func:`interval`) with its means and intervals cut to the range of the rank
    reward, for printing a corrected result."""
    out = dict(block)
    out["mean"] = min(1.0, max(-1.0, block["mean"]))
    out["ci95"] = [min(1.0, max(-1.0, x)) for x in block["ci95"]]
    out["score_rate"] = min(1.0, max(0.0, block["score_rate"]))
    out["score_rate_ci95"] = [min(1.0, max(0.0, x)) for x in block["score_rate_ci95"]]
    return out


def variance_ratio(raw: dict[str, Any], corrected: dict[str, Any]) -> float | None:
    """Raw variance / corrected variance; ``None`` when either is zero."""
    rv, cv = raw["sd"] ** 2, corrected["sd"] ** 2
    return rv / cv if rv > 0 and cv > 0 else None


def _units(
    records: Iterable[dict[str, Any]], bot: int, opponent: int | None, duplicate: bool
) -> tuple[dict[tuple[Any, ...], list[int | float]], int]:
    """Per unit (game, or deal with duplicate) the sums of ``bot``'s raw and corrected results."""
    units: dict[tuple[Any, ...], list[int | float]] = defaultdict(lambda: [0, 0.0, 0.0])
    games = 0
    for r in records:
        seats = r["seats"]
        if bot not in seats or (opponent is not None and opponent not in seats) or "raw" not in r:
            continue
        s = seats.index(bot)
        key = (tuple(sorted(seats)), r["deal"] if duplicate else r["game"])
        u = units[key]
        u[0] += 1
        u[1] += r["raw"][s]
        u[2] += r["corrected"][s] if "corrected" in r else 0.0
        games += 1
    return units, games


def _stats(
    label: dict[str, Any], records: list[dict[str, Any]], bot: int, opponent: int | None, duplicate: bool
) -> dict[str, Any] | None:
    units, games = _units(records, bot, opponent, duplicate)
    if not units:
        return None
    out = dict(label)
    out["games"] = games
    out["units"] = len(units)
    out["raw"] = interval([u[1] / u[0] for u in units.values()])
    if all("corrected" in r for r in records):
        out["corrected"] = interval([u[2] / u[0] for u in units.values()], bounded=False)
        out["variance_ratio"] = variance_ratio(out["raw"], out["corrected"])
    return out


def result_stats(
    specs: Sequence[str], records: list[dict[str, Any]], duplicate: bool = False
) -> dict[str, Any]:
    """The ``results`` block: per bot (all its games) and, in two-player runs, per pairing."""
    out: dict[str, Any] = {
        "quantity": "rank reward",
        "unit": "deals (each the mean of its seatings)" if duplicate else "games",
        "bots": [],
        "pairings": [],
    }
    for b, spec in enumerate(specs):
        st = _stats({"bot": spec}, records, b, None, duplicate)
        if st is not None:
            out["bots"].append(st)
    two = records and len(records[0]["seats"]) == 2
    if two:
        for a in range(len(specs)):
            for b in range(a + 1, len(specs)):
                st = _stats({"bot": specs[a], "opponent": specs[b]}, records, a, b, duplicate)
                if st is not None:
                    out["pairings"].append(st)
    return out
