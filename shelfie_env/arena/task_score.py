"""An agent's score on a benchmark task: a rating on a table size's ladder, or a solo game's mean final score.

* :func:`rating_fields` — :func:`~shelfie_env.arena.rate_agent.rate` at 2-4 players, as a row's
  ``rating`` and ``normalized`` fields;
* :func:`solo_fields` — the mean final score on the ``test`` deals
  (:func:`~shelfie_env.arena.solo_score.solo_score`), as a row's ``solo`` and ``normalized`` fields;
* :func:`normalized_rating` — a rating on the 0 (``random``) .. 100 (the top level) scale of its table
  size, between the fixed :data:`RATING_ENDS`.
"""

from __future__ import annotations

from typing import Any

RATE_GAMES = {2: 400, 3: 360, 4: 384}
"""Default games of the final rating of a row by table size (``rate()``'s own default at 2 players)."""
CURVE_RATE_GAMES = {2: 100, 3: 120, 4: 96}
"""Games of a rating-curve point: two batches (:data:`~shelfie_env.arena.rate_agent.BATCH_DEALS`)."""
SOLO_GAMES = 500
CURVE_SOLO_GAMES = 200


RATING_ENDS = {2: (765.3, 1668.2), 3: (908.3, 1596.2), 4: (950.2, 1610.5)}
"""``(random's rating, the top level's rating)`` by table size: the normalized score's 0 and 100, fixed at the
ladders the suite's baseline was scored on, so a ladder measured again (its fitted ratings move by a
few points each time) does not move the normalized score of a rating."""


def ladder_ends(players: int) -> tuple[float, float]:
    """``(random's rating, the top level's rating)``: the normalized score's ends at ``players`` (:data:`RATING_ENDS`)."""
    return RATING_ENDS[players]


def normalized_rating(rating: float, players: int) -> float:
    """``100 x (rating - random's) / (top level's - random's)`` between the :data:`RATING_ENDS` of ``players``."""
    low, high = ladder_ends(players)
    return 100.0 * (rating - low) / (high - low)


def rating_fields(agent: Any, players: int, games: int | None = None, workers: int | None = 1,
                  name: str = "agent") -> dict[str, Any]:
    """``{"rating": {...}, "normalized": x, "normalized_between": [random's, top level's]}`` of ``agent`` rated
    at ``players`` in at most ``games`` games (the two ratings it was normalized between)."""
    from shelfie_env.arena.rate_agent import rate

    r = rate(agent, players=players, games=RATE_GAMES[players] if games is None else games,
             workers=workers, name=name)
    d = r.to_dict()
    rating = {k: d[k] for k in ("rating", "ci95", "se", "games", "level", "matches")}
    if d["note"]:
        rating["note"] = d["note"]
    low, high = ladder_ends(players)
    return {"rating": rating, "normalized": round(normalized_rating(r.rating, players), 2),
            "normalized_between": [low, high]}


def solo_fields(agent: Any, games: int = SOLO_GAMES, workers: int = 1) -> dict[str, Any]:
    """``{"solo": {...}, "normalized": x, "normalized_between": [random's mean, E*]}``: ``agent``'s mean final
    score over ``games`` solo ``test`` deals."""
    from shelfie_env.arena.solo_score import normalized_solo, solo_scale, solo_score

    s = solo_score(agent, games=games, deals="test", workers=workers).to_dict()
    return {
        "solo": s,
        "normalized": round(normalized_solo(s["mean"]), 2),
        "normalized_between": [round(x, 6) for x in solo_scale()],
    }


def task_fields(agent: Any, players: int, games: int | None = None, workers: int | None = 1,
                name: str = "agent") -> dict[str, Any]:
    """:func:`rating_fields` at 2-4 players, :func:`solo_fields` at 1."""
    if players == 1:
        return solo_fields(agent, SOLO_GAMES if games is None else games, workers or 1)
    return rating_fields(agent, players, games, workers, name)


def curve_fields(agent: Any, players: int, decisions: int, train_s: float) -> dict[str, Any]:
    """A point of a row's ``rating_curve``: the agent's task score after ``decisions`` learner decisions, on a
    small budget (:data:`CURVE_RATE_GAMES`, :data:`CURVE_SOLO_GAMES`)."""
    if players == 1:
        f = solo_fields(agent, CURVE_SOLO_GAMES)
        point = {"mean": f["solo"]["mean"], "ci95": f["solo"]["ci95"], "games": f["solo"]["games"]}
    else:
        f = rating_fields(agent, players, CURVE_RATE_GAMES[players])
        point = {k: f["rating"][k] for k in ("rating", "ci95", "games")}
    return {"decisions": int(decisions), "train_s": round(float(train_s), 1), **point,
            "normalized": f["normalized"]}

