"""How close the ``clairvoyant`` bot comes to the best line: the same deals played by deeper searches.

Against ``greedy`` on a dice tape the rest of a game is deterministic, so a search that looks
wider or deeper can only be compared game by game: on each deal and seat, does it finish
better (win instead of a tie or loss, or the same result by a wider margin)?

    python scripts/bracket_gap.py --deals selection --count 20 --configs 8 0 32 4x4 --out docs/results/bracket_gap

A config is ``W`` (``clairvoyant:width=W``) or ``WxI`` (width ``W`` with rollouts played by a
clairvoyant of width ``I``). The first config is the reference; every other is compared with
it. Prints one JSON line per game and a Markdown summary; ``--out`` writes ``OUT.json`` and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from shelfie_env.arena.deals import deal_seeds  # noqa: E402
from shelfie_env.arena.protocol import play_game  # noqa: E402
from shelfie_env.bots.bracket.clairvoyant import ClairvoyantBot, outcome  # noqa: E402
from shelfie_env.bots.greedy import GreedyBot  # noqa: E402


def parse_config(text: str) -> tuple[int, int]:
    """``"8"`` -> (8, 0); ``"4x4"`` -> (4, 4)."""
    width, _, inner = text.partition("x")
    return int(width), int(inner or 0)


def play(config: str, seed: int, seat: int) -> dict[str, Any]:
    width, inner = parse_config(config)
    bot = ClairvoyantBot(width, inner)
    players: list[Any] = [GreedyBot(), GreedyBot()]
    players[seat] = bot
    t0 = time.perf_counter()
    scores = play_game(players, seed)
    result, margin = outcome(scores, seat)
    return {
        "config": config, "seed": seed, "seat": seat, "scores": scores, "result": result, "margin": margin,
        "rollouts": bot.rollouts, "seconds": round(time.perf_counter() - t0, 2),
    }


def compare(rows: list[dict[str, Any]], reference: str, config: str) -> dict[str, Any]:
    """Game by game, ``config`` against ``reference``: better / same / worse result, and margin."""
    ref = {(r["seed"], r["seat"]): r for r in rows if r["config"] == reference}
    out = {"config": config, "games": 0, "better_result": 0, "worse_result": 0, "better_margin": 0, "worse_margin": 0}
    mine = [r for r in rows if r["config"] == config]
    for r in mine:
        a = ref[r["seed"], r["seat"]]
        out["games"] += 1
        out["better_result"] += r["result"] > a["result"]
        out["worse_result"] += r["result"] < a["result"]
        out["better_margin"] += r["result"] == a["result"] and r["margin"] > a["margin"]
        out["worse_margin"] += r["result"] == a["result"] and r["margin"] < a["margin"]
    n = max(out["games"], 1)
    out["score_rate"] = sum((1 + r["result"]) / 2 for r in mine) / n
    out["mean_margin"] = sum(r["margin"] for r in mine) / n
    out["seconds_per_game"] = sum(r["seconds"] for r in mine) / n
    return out


def markdown(summary: list[dict[str, Any]], reference: str, seeds: str) -> str:
    lines = [
        f"Games against `greedy` on deals {seeds}, both seats; each config compared game by game with "
        f"`clairvoyant:width={parse_config(reference)[0]}` (the reference).",
        "",
        "| search | games | score rate | mean margin | better result | worse result | same result, wider margin | "
        "same result, narrower margin | s / game |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summary:
        lines.append(
            f"| `{s['config']}` | {s['games']} | {100 * s['score_rate']:.1f}% | {s['mean_margin']:+.1f} | "
            f"{s['better_result']} | {s['worse_result']} | {s['better_margin']} | {s['worse_margin']} | "
            f"{s['seconds_per_game']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", default="selection", help="deal set (selection, test) or a first seed")
    parser.add_argument("--count", type=int, default=20, help="deals (each played from both seats)")
    parser.add_argument("--configs", nargs="+", default=["8", "0", "32"], help="W or WxI; the first is the reference")
    parser.add_argument("--limit", nargs="*", default=[], metavar="CONFIG=N", help="play CONFIG on the first N deals only")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    limits = {k: int(v) for k, v in (item.split("=") for item in args.limit)}
    seeds = deal_seeds(args.deals, args.count)
    rows = []
    for config in args.configs:
        for seed in seeds[: limits.get(config, len(seeds))]:
            for seat in (0, 1):
                row = play(config, seed, seat)
                print(json.dumps(row), flush=True)
                rows.append(row)
    reference = args.configs[0]
    summary = [compare(rows, reference, c) for c in args.configs]
    label = f"{seeds[0]}..{seeds[-1]}"
    md = markdown(summary, reference, label)
    print(md)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        command = "python scripts/bracket_gap.py " + " ".join(
            [f"--deals {args.deals}", f"--count {args.count}", "--configs", *args.configs]
            + (["--limit", *args.limit] if args.limit else [])
            + [f"--out {args.out}"]
        )
        args.out.with_suffix(".json").write_text(
            json.dumps({"command": command, "deals": label, "summary": summary, "games": rows}, indent=1) + "\n"
        )
        args.out.with_suffix(".md").write_text(f"```sh\n{command}\n```\n\n" + md)


if __name__ == "__main__":
    main()
