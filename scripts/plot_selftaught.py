"""Learning curves of the no-teacher runs: win rate over self-play games and hours (docs/training.md).

    .venv/bin/python scripts/plot_selftaught.py docs/results/td_2p_s0_eval.jsonl docs/results/td_2p_s1_eval.jsonl \
        docs/results/td_placements_s0_eval.jsonl --out docs/img/selftaught_2p.png --table

Each argument is a run's ``eval.jsonl`` (``shelfie train-td`` writes one per run:
``eval_games`` arena games against each of its ``eval_opponents`` on the ``selection``
deals, dice seeds 10,000,000 + i, every ``eval_every`` iterations). Draws win rate against each opponent over
self-play games and over training hours; ``--table`` prints a Markdown table of
the win rates at ``--at`` games.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def read(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        raise SystemExit(f"{path}: no evaluations")
    return rows


def label(path: Path) -> str:
    if path.name == "eval.jsonl":
        return path.parent.name
    return path.name.removesuffix("_eval.jsonl").removesuffix(".jsonl")


def plot(runs: dict[str, list[dict]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    opponents = [o for o in ("greedy", "planner") if any(o in r[0] for r in runs.values())]
    fig, axes = plt.subplots(len(opponents), 2, figsize=(11, 3.6 * len(opponents)), squeeze=False)
    for i, opp in enumerate(opponents):
        for name, rows in runs.items():
            have = [r for r in rows if opp in r]
            if not have:
                continue
            w = [100 * r[opp]["win_rate"] for r in have]
            axes[i][0].plot([r["games_played"] for r in have], w, marker=".", label=name)
            axes[i][1].plot([r["wall_s"] / 3600 for r in have], w, marker=".", label=name)
        for j, xlabel in enumerate(("self-play games", "training hours (one core)")):
            ax = axes[i][j]
            ax.axhline(50, color="grey", lw=0.5)
            ax.set_xlabel(xlabel)
            games = sorted({r[opp]["games"] for rows in runs.values() for r in rows if opp in r})
            ax.set_ylabel(f"win rate vs {opp} (%), {'/'.join(map(str, games))} games")
            ax.grid(alpha=0.3)
        axes[i][0].legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def table(runs: dict[str, list[dict]], at: list[int]) -> str:
    head = "| run | opponent | " + " | ".join(f"{g:,} games" for g in at) + " | hours at the last |"
    lines = [head, "|---|---|" + "---:|" * (len(at) + 1)]
    for name, rows in runs.items():
        by_games = {r["games_played"]: r for r in rows}
        for opp in ("greedy", "planner"):
            if opp not in rows[0]:
                continue
            cells = [f"{100 * by_games[g][opp]['win_rate']:.1f}%" if g in by_games else "-" for g in at]
            last = max((g for g in at if g in by_games), default=None)
            hours = f"{by_games[last]['wall_s'] / 3600:.2f}" if last else "-"
            lines.append(f"| {name} | {opp} | " + " | ".join(cells) + f" | {hours} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path, help="eval.jsonl files of train-td runs")
    parser.add_argument("--out", type=Path, default=Path("docs/img/selftaught_2p.png"))
    parser.add_argument("--table", action="store_true", help="print a Markdown table")
    parser.add_argument("--at", type=int, nargs="+", default=[2000, 10000, 20000, 40000, 60000])
    args = parser.parse_args(argv)
    runs = {label(p): read(p) for p in args.logs}
    plot(runs, args.out)
    print(f"wrote {args.out}")
    if args.table:
        print(table(runs, args.at))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
