"""A results row's normalized score on today's scale, whatever scale it was written on.

Rated rows are normalized between the fixed ratings of their table size
(:data:`~shelfie_env.arena.task_score.RATING_ENDS`), solo rows between ``random``'s mean and E*
(:func:`~shelfie_env.arena.solo_score.solo_scale`); a row names the ends it was written between in its
``normalized_between``, and a row without them is left as it is.
"""

from __future__ import annotations

from typing import Any

from shelfie_env.arena.task_score import RATING_ENDS, ladder_ends, normalized_rating

SOLO = "solo"


def _number(x: Any) -> float | None:
    return None if isinstance(x, bool) or not isinstance(x, (int, float)) else float(x)


def normalized_now(row: dict[str, Any]) -> dict[str, Any]:
    """``row``, or when it was normalized between other ratings (its ``normalized_between``) than the fixed
    ends of its table size (:data:`~shelfie_env.arena.task_score.RATING_ENDS`), a copy with its rating's
    normalized score (and its rating curve's points') between those ends."""
    if row.get("task") == SOLO:
        return _solo_now(row)
    players = row.get("players")
    between = row.get("normalized_between")
    if (players not in RATING_ENDS or not isinstance(between, list)
            or tuple(between) == ladder_ends(players)):
        return row

    def normalized(rating: float) -> float:
        return round(normalized_rating(rating, players), 2)

    out = dict(row)
    rating = _number((row.get("rating") or {}).get("rating"))
    if rating is not None:
        out["normalized"] = normalized(rating)
    curve = row.get("rating_curve")
    if isinstance(curve, list):
        out["rating_curve"] = [
            {**p, "normalized": normalized(p["rating"])}
            if isinstance(p, dict) and _number(p.get("rating")) is not None else p
            for p in curve
        ]
    out["normalized_between"] = list(ladder_ends(players))
    return out


def _solo_now(row: dict[str, Any]) -> dict[str, Any]:
    """A solo row, or when it was normalized between other ends (its ``normalized_between``) than ``random``'s
    mean and E*, a copy with its normalized score (and its curve's) between those."""
    from shelfie_env.arena.solo_score import normalized_solo, solo_scale

    between = row.get("normalized_between")
    ends = [round(x, 6) for x in solo_scale()]
    if not isinstance(between, list) or [round(float(x), 6) for x in between] == ends:
        return row
    out = dict(row)
    out["normalized_between"] = ends
    mean = _number((row.get("solo") or {}).get("mean"))
    if mean is not None:
        out["normalized"] = round(normalized_solo(mean), 2)
    curve = row.get("rating_curve")
    if isinstance(curve, list):
        out["rating_curve"] = [
            {**p, "normalized": round(normalized_solo(p["mean"]), 2)}
            if isinstance(p, dict) and _number(p.get("mean")) is not None else p
            for p in curve
        ]
    return out


__all__ = ["SOLO", "normalized_now"]
