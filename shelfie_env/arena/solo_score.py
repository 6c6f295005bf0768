"""The ``solo`` task's score: an agent's mean final score in 1-player games on fixed deals.

>>> from shelfie_env.arena.solo_score import solo_score, normalized_solo
>>> s = solo_score("greedy", games=500)  # doctest: +SKIP
>>> s.mean, s.ci95, normalized_solo(s.mean)  # doctest: +SKIP

Game ``i`` is dealt solo deal ``i`` of ``deals`` (:mod:`.deals`: ``test``, ``selection`` or a first
dice seed) on common dice; bots with a ``seed`` (``random``) get per-game seeds, as in every arena
game (:func:`~shelfie_env.arena.protocol.run_arena`), so a result depends only on the agent, the
deals and ``games``. The agent is a bot spec (``"greedy"``, ``"ppo:path=mine.npz"``), a bot with
``act(state)`` or a function of the state dict returning an action id.

The task's normalized scale runs from 0 for ``random`` (its mean in the shipped reference,
package data ``data/benchmark/solo_reference.json``) to 100 for optimal play: E*, the solo game's
exact optimum (:func:`shelfie_env.solo.optimum`), :func:`normalized_solo`; :func:`percent_of_optimum`
gives a mean as a share of E*. ``python -m shelfie_env.arena.solo_score --reference --games 500
--out FILE`` measures the reference bots.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import shlex
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from shelfie_env.arena.deals import deal_start, deals_label
from shelfie_env.arena.evaluate import _as_bot, _picklable
from shelfie_env.arena.protocol import run_arena
from shelfie_env.bots import Bot, act_on_game
from shelfie_env.game.engine import Game
from shelfie_env.solo import optimum

REFERENCE_BOTS = ("random", "greedy", "planner", "ppo:path=shelfie_env/models/ppo_solo.npz", "solo-optimal")
"""The bots :func:`measure_reference` measures by default."""
REFERENCE_FILE = "solo_reference.json"
"""The reference means' file in the package data folder ``shelfie_env/data/benchmark``."""


@dataclass
class SoloScore:
    """Mean final score over ``games`` solo games with its normal 95 % interval."""

    mean: float
    sd: float
    se: float
    ci95: list[float]
    games: int
    deals: str
    scores: list[int] = field(default_factory=list, repr=False)
    """Final score of each game, game ``i`` on deal ``i``."""

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready values (without the per-game scores)."""
        return {
            "mean": self.mean,
            "sd": self.sd,
            "se": self.se,
            "ci95": list(self.ci95),
            "games": self.games,
            "deals": self.deals,
        }

    @classmethod
    def of(cls, scores: Sequence[int], deals: str) -> SoloScore:
        """The summary of ``scores`` (the final score of each game)."""
        n = len(scores)
        mean = statistics.fmean(scores)
        sd = statistics.stdev(scores) if n > 1 else 0.0
        se = sd / math.sqrt(n)
        return cls(mean, sd, se, [mean - 1.96 * se, mean + 1.96 * se], n, deals, list(scores))


class _LegalOnly:
    """An agent whose illegal move raises a ``ValueError`` naming the agent and the move (one that
    also crosses a process pool, unlike the engine's error)."""

    def __init__(self, bot: Bot, label: str) -> None:
        self.bot = bot
        self.label = label

    @property
    def rng(self) -> Any:
        """The agent's own generator, so the arena's per-game reseeding reaches it."""
        return getattr(self.bot, "rng", None)

    @rng.setter
    def rng(self, value: Any) -> None:
        self.bot.rng = value  # type: ignore[attr-defined]

    def act_game(self, game: Game) -> int:
        action = act_on_game(self.bot, game)  # a value that is not a number is named there
        if action not in game.legal_actions():
            raise ValueError(
                f"the agent {self.label!r} returned an illegal action in round {game.round} "
                f"({game.phase_name} phase): {action}: {game.why_illegal(action)}"
            )
        return action

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def solo_score(
    agent: str | Bot | Callable[[dict[str, Any]], int],
    games: int = 500,
    deals: str | int = "test",
    workers: int = 1,
) -> SoloScore:
    """``agent``'s mean final score over ``games`` solo games, game ``i`` on deal ``i`` of ``deals``.

    ``workers > 1`` plays over that many processes (same result); an agent object or function plays
    in this process unless it can be pickled. ``ValueError`` names a bad ``games``, ``deals`` or
    ``workers``, a bot spec that cannot play solo, or the agent's first illegal action.
    """
    if isinstance(games, bool) or not isinstance(games, int) or games <= 0:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers <= 0:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    deal_start(deals)  # names an unknown deal set
    spec, bot = _as_bot(agent, "agent")
    given = None
    if bot is not None:
        given = {spec: _LegalOnly(bot, spec)}
        if not _picklable(given[spec]):
            workers = 1
    res = run_arena([spec], 1, games, workers=workers, ratings=False, bots=given, deals=deals)
    scores = [g["scores"][0] for g in sorted(res["games"], key=lambda g: g["game"])]
    return SoloScore.of(scores, deals_label(deals))


# ------------------------------------------------------------------------------------- reference
def measure_reference(
    bots: Sequence[str] = REFERENCE_BOTS, games: int = 500, workers: int = 1
) -> dict[str, Any]:
    """The reference means of ``bots`` on ``games`` solo ``test`` deals: ``{"deals", "games", "bots":
    {spec: {"mean", "ci95", "sd", "games"}}, "best"}`` (``best``: the spec with the highest mean)."""
    if not bots:
        raise ValueError("measure_reference needs at least one bot")
    if "random" not in bots:
        raise ValueError("the reference needs 'random' (the 0 of the normalized scale)")
    out: dict[str, dict[str, Any]] = {}
    for spec in bots:
        s = solo_score(spec, games=games, deals="test", workers=workers)
        out[spec] = {
            "mean": round(s.mean, 4),
            "ci95": [round(x, 4) for x in s.ci95],
            "sd": round(s.sd, 4),
            "games": s.games,
        }
    best = max(out, key=lambda k: out[k]["mean"])
    return {"deals": "test", "games": games, "bots": out, "best": best, "optimum": round(optimum(), 6)}


@functools.cache
def _read_reference() -> dict[str, Any]:
    path = files("shelfie_env") / "data" / "benchmark" / REFERENCE_FILE
    try:
        ref = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(
            f"the solo reference {REFERENCE_FILE} is missing from this installation"
        ) from None
    bots = ref.get("bots", {})
    if "random" not in bots or ref.get("best") not in bots:
        raise ValueError(f"{REFERENCE_FILE}: needs the bots 'random' and its 'best'")
    return ref


def load_reference() -> dict[str, Any]:
    """The shipped reference means (package data ``shelfie_env/data/benchmark/solo_reference.json``)."""
    return copy.deepcopy(_read_reference())


def solo_scale(reference: dict[str, Any] | None = None) -> tuple[float, float]:
    """``(random's mean, E*)``: the normalized scale's 0 and 100 (E* of ``reference`` when it names one)."""
    ref = _read_reference() if reference is None else reference
    low = float(ref["bots"]["random"]["mean"])
    high = float(ref.get("optimum", optimum()))
    if high <= low:
        raise ValueError("E* is not above random's mean: no normalized scale")
    return low, high


def normalized_solo(mean: float, reference: dict[str, Any] | None = None) -> float:
    """``100 x (mean - random's mean) / (E* - random's mean)``: 0 plays like ``random``, 100 optimally."""
    low, high = solo_scale(reference)
    return 100.0 * (float(mean) - low) / (high - low)


def percent_of_optimum(mean: float) -> float:
    """A mean final score as a percentage of E*, the optimal expected score."""
    return 100.0 * float(mean) / optimum()


# ------------------------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    """``python -m shelfie_env.arena.solo_score``: one agent's solo score, or (``--reference``) the
    reference means as JSON."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="python -m shelfie_env.arena.solo_score", description=__doc__.splitlines()[0]
    )
    parser.add_argument("agent", nargs="?", help="bot spec to score (e.g. greedy, ppo:path=mine.npz)")
    parser.add_argument("--reference", action="store_true", help="measure the reference bots")
    parser.add_argument(
        "--bots", nargs="+", default=list(REFERENCE_BOTS), help="reference bots (with --reference)"
    )
    parser.add_argument("--games", type=int, default=500, help="games per bot (default 500)")
    parser.add_argument(
        "--deals", default="test", help="deal set of a single agent: test, selection or a seed"
    )
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--out", type=Path, help="write the JSON here instead of stdout")
    args = parser.parse_args(argv)
    if args.reference == (args.agent is not None):
        parser.error("give a bot spec or --reference (not both)")
    try:
        if args.reference:
            result = measure_reference(args.bots, args.games, args.workers)
            result["command"] = shlex.join(["python", "-m", "shelfie_env.arena.solo_score", *argv])
        else:
            s = solo_score(args.agent, args.games, args.deals, args.workers)
            result = {"agent": args.agent, **s.to_dict()}
    except (ValueError, FileNotFoundError) as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    text = json.dumps(result, indent=2) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
