"""How often two bots choose the same action: the positions of games one plays against the other.

Bot A plays bot B (2 players, both seatings of each deal, tape dice); at every decision of
either seat both bots are asked, the owner's action is played, and the two choices are
compared. Prints, by phase (reroll, circle, cross), the decisions and the share on which the
bots agree; a pair of strong bots that agree on nearly every decision can only differ in
result by what the few other decisions are worth.

    python scripts/decision_agreement.py td planner --deals selection --count 50
    python scripts/decision_agreement.py td:depth=2 td --deals selection --count 50
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from shelfie_env.arena.deals import deal_seeds  # noqa: E402
from shelfie_env.argtypes import number  # noqa: E402
from shelfie_env.bots import act_on_game, make  # noqa: E402
from shelfie_env.bots.spec import parse_spec  # noqa: E402
from shelfie_env.game.dice import dice_source  # noqa: E402
from shelfie_env.game.engine import Game  # noqa: E402

PHASES = ("reroll", "circle", "cross")


def compare(a: str, b: str, seeds: list[int]) -> dict[str, Any]:
    """Decisions and agreements by phase over both seatings of every seed in ``seeds``."""
    bots = [make(name, **opts) for name, opts in (parse_spec(a), parse_spec(b))]
    decisions: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    for seed in seeds:
        for first in (0, 1):
            seats = [bots[first], bots[1 - first]]
            game = Game.new(2, rng=dice_source("tape", seed))
            while not game.over:
                phase = game.phase_name
                choices = [act_on_game(bot, game) for bot in bots]
                decisions[phase] += 1
                agree[phase] += choices[0] == choices[1]
                game.step(choices[0] if seats[game.current] is bots[0] else choices[1])
    out: dict[str, Any] = {"a": a, "b": b, "games": 2 * len(seeds)}
    for phase in PHASES:
        out[phase] = {"decisions": decisions[phase], "agree": agree[phase]}
    total = sum(decisions.values())
    out["all"] = {"decisions": total, "agree": sum(agree.values())}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="bot spec, e.g. td or td:depth=2")
    parser.add_argument("b", help="bot spec, e.g. planner")
    parser.add_argument(
        "--deals", default="selection", help="deal set or first dice seed (default selection)"
    )
    parser.add_argument(
        "--count", type=number(int, 1), default=50, help="deals, each played under both seatings"
    )
    args = parser.parse_args(argv)
    try:
        seeds = deal_seeds(args.deals, args.count)
        for spec in (args.a, args.b):  # a bad spec is named before any game is played
            name, opts = parse_spec(spec)
            make(name, **opts)
    except ValueError as exc:
        parser.error(str(exc))
    result = compare(args.a, args.b, seeds)
    print(json.dumps(result))
    for phase in (*PHASES, "all"):
        d, k = result[phase]["decisions"], result[phase]["agree"]
        share = f"{100 * k / d:.1f} %" if d else "-"
        print(f"{phase:>6}: {k:,} of {d:,} decisions the same ({share})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
