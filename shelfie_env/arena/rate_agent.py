"""``rate``: place any agent on the ladder's rating scale, playing the levels near its strength.

>>> from shelfie_env.arena import rate
>>> r = rate("ppo-flat", players=2, games=400)  # doctest: +SKIP
>>> print(r)  # doctest: +SKIP

The agent takes the forms :func:`~shelfie_env.arena.evaluate.evaluate` takes (a bot spec, an
object with ``act(state)``, a function of the state dict). It plays batches of duplicate games on
consecutive ``test`` deals (common dice, every deal under every seating, luck-corrected), each
batch against the level whose shipped rating is nearest its current estimate (the first against
the middle of the ladder; ``random``, rated on the same ladder, is the rung below the first level); at three and four players it sits alone against a field of copies of
the level. Each level it met gives an estimate, the level's rating plus the difference its score
says (:func:`~shelfie_env.arena.rating_scale.elo_difference`, the level's own uncertainty added);
the rating is their inverse-variance mean. It stops when the 95 % interval is within ``target``
points either side (after ``min_games``) or after ``games`` games.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shelfie_env.arena.deals import deal_start
from shelfie_env.arena.rating_scale import CLIP, Z95, combine, elo_difference, row_score
from shelfie_env.argtypes import output_file
from shelfie_env.bots import Bot

BATCH_DEALS = {2: 25, 3: 20, 4: 12}
"""Deals of one batch by table size (2 × 25, 3 × 20 and 4 × 12 games)."""
TARGET = {2: 25.0, 3: 40.0, 4: 40.0}
"""Default half-width of the 95 % interval at which rating stops, by table size."""


@dataclass
class Rating:
    """What :func:`rate` returns (``to_dict()`` has the keys ``rating``, ``ci95``, ``games``, ``level``,
    ``players``)."""

    agent: str
    players: int
    rating: float
    se: float
    games: int
    level: str
    matches: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""

    @property
    def ci95(self) -> list[float]:
        return [self.rating - Z95 * self.se, self.rating + Z95 * self.se]

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent, "players": self.players, "rating": round(self.rating, 1),
            "ci95": [round(x, 1) for x in self.ci95], "se": round(self.se, 1), "games": self.games,
            "level": self.level, "matches": self.matches, "note": self.note,
        }

    def __str__(self) -> str:
        lo, hi = self.ci95
        text = (f"{self.agent}: rating {self.rating:.0f} [{lo:.0f}, {hi:.0f}] at {self.players} players over "
                f"{self.games} games; nearest level {self.level}")
        return text + (f" ({self.note})" if self.note else "")


class _Tally:
    """The batches played against one level: their score rates and standard errors."""

    def __init__(self) -> None:
        self.scores: list[float] = []
        self.ses: list[float] = []
        self.games = 0

    def add(self, score: float, se: float, games: int) -> None:
        self.scores.append(score)
        self.ses.append(se)
        self.games += games

    def score(self) -> tuple[float, float]:
        k = len(self.scores)
        return sum(self.scores) / k, math.sqrt(sum(s * s for s in self.ses)) / k


def _batch(policy: Any, level: str, players: int, first_deal: int, deals: int, workers: int | None,
           name: str) -> tuple[float, float, int]:
    from shelfie_env.arena.evaluate import evaluate

    score, se, played = row_score(evaluate(policy, opponents=[level], players=players, games=deals * players,
                                           deals=first_deal, duplicate=True, workers=workers, name=name).rows[0])
    return score, max(se, 1e-3), played


def batch_games(players: int) -> int:
    """Games of one batch of :func:`rate` at ``players`` players: the fewest a rating can play."""
    return BATCH_DEALS[players] * players


def rate(
    agent: str | Bot | Callable[[dict[str, Any]], int],
    players: int = 2,
    games: int = 400,
    target: float | None = None,
    min_games: int = 100,
    workers: int | None = None,
    name: str = "agent",
) -> Rating:
    """Rate ``agent`` on the shipped ladder of ``players`` in at most ``games`` games (module doc)."""
    from shelfie_env.arena.ladder import level_ratings, nearest_level

    levels = level_ratings(players)
    if isinstance(agent, str) and agent in levels:
        raise ValueError(f"{agent!r} is a level of the ladder: its rating is {levels[agent][0]:.0f} already")
    label = agent if isinstance(agent, str) else name
    ratings = {**levels, **_bottom_rung(players)}
    ratings.pop(label, None)  # ``random`` (a spec, or a bot named so) is rated against the rungs above it
    deals = BATCH_DEALS[players]
    if games < batch_games(players):
        raise ValueError(f"games must be at least one batch, {batch_games(players)} at {players} players; got {games}")
    target = TARGET[players] if target is None else target
    specs = sorted(ratings, key=lambda s: ratings[s][0])
    level = sorted(levels, key=lambda s: levels[s][0])[len(levels) // 2]
    tallies: dict[str, _Tally] = {}
    played, first, est, se = 0, deal_start("test"), ratings[level][0], math.inf
    while played + deals * players <= games:
        score, s_se, g = _batch(agent, level, players, first, deals, workers, label)
        first += deals
        played += g
        tallies.setdefault(level, _Tally()).add(score, s_se, g)
        est, se = _estimate(tallies, ratings)
        if played >= min_games and Z95 * se <= target:
            break
        level = min(ratings, key=lambda s: abs(ratings[s][0] - est))
    return Rating(label, players, est, se, played, nearest_level(est, players), _matches(tallies, ratings),
                  _note(tallies, specs))


def _bottom_rung(players: int) -> dict[str, tuple[float, float]]:
    """``random`` on the shipped ladder, the rung below the first level for agents weaker than it."""
    from shelfie_env.arena.ladder import shipped_ladder

    for b in shipped_ladder(players)["bots"]:
        if b["spec"] == "random":
            return {"random": (float(b["rating"]), float(b["se"]))}
    return {}


def _estimate(tallies: dict[str, _Tally], ratings: dict[str, tuple[float, float]]) -> tuple[float, float]:
    parts = []
    for spec, t in tallies.items():
        score, s_se = t.score()
        d, d_se = elo_difference(score, s_se)
        parts.append((ratings[spec][0] + d, math.hypot(d_se, ratings[spec][1])))
    return combine(parts)


def _matches(tallies: dict[str, _Tally], ratings: dict[str, tuple[float, float]]) -> list[dict[str, Any]]:
    out = []
    for spec, t in tallies.items():
        score, s_se = t.score()
        out.append({"level": spec, "level_rating": ratings[spec][0], "games": t.games,
                    "score": round(score, 4), "ci95": [round(score - Z95 * s_se, 4), round(score + Z95 * s_se, 4)]})
    return out


def _note(tallies: dict[str, _Tally], specs: list[str]) -> str:
    """Says when the agent beat the top level or lost to the bottom one nearly every time."""
    top, bottom = tallies.get(specs[-1]), tallies.get(specs[0])
    if top is not None and top.score()[0] > 1 - CLIP:
        return "stronger than the ladder's top level: the rating is a lower bound"
    if bottom is not None and bottom.score()[0] < CLIP:
        return f"weaker than {specs[0]}, the ladder's lowest rung: the rating is an upper bound"
    return ""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bot", metavar="BOT", help="a bot spec (ppo-flat, td:path=runs/x/td.npz), module:attr "
                        "(an object with act(state), or a function of the state) or a model file with its card")
    parser.add_argument("--players", type=int, default=2, help="table size: 2, 3 or 4 (default 2)")
    parser.add_argument("--games", type=int, default=400, help="at most this many games (default 400)")
    parser.add_argument("--target", type=float, default=None,
                        help="stop when the 95 %% interval is within this many points either side "
                             "(default 25 at 2 players, 40 at 3 and 4)")
    parser.add_argument("--workers", type=int, default=None, help="processes for the games (default: all cores)")
    parser.add_argument(
        "--json", type=output_file(), default=None, metavar="FILE", help="also write the rating as JSON"
    )


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args._parser
    from shelfie_env.arena.agent_arg import agent_name, load_agent
    from shelfie_env.bots.levels import check_players

    try:
        check_players(args.players)
    except ValueError as exc:
        parser.error(f"--players: {exc}")
    if args.workers is not None and args.workers <= 0:
        parser.error(f"--workers must be positive, got {args.workers}")
    if args.target is not None and not args.target > 0:
        parser.error(f"--target must be positive, got {args.target}")
    try:
        agent = load_agent(args.bot, args.players)  # an AgentError (a ValueError) names what is missing
        result = rate(agent, args.players, args.games, args.target, workers=args.workers, name=agent_name(args.bot))
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    print(result)
    for m in result.matches:
        lo, hi = m["ci95"]
        print(f"  vs {m['level']} ({m['level_rating']:.0f}): {100 * m['score']:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] "
              f"over {m['games']} games")
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=1) + "\n", encoding="utf-8")
    return 0


__all__ = ["BATCH_DEALS", "TARGET", "Rating", "batch_games", "rate"]
