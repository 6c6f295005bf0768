"""The benchmark's tables: ``shelfie bench report`` aggregates a results file across seeds with rliable.

Rows of the luck-aware protocol (:data:`~shelfie_env.arena.rows.PROTOCOL`) on one
deal set are grouped by learner (and variant) and budget; each group's runs (one per seed) give:

* the interquartile mean (IQM) and the mean of the luck-corrected score rate against
  ``greedy``, with stratified-bootstrap 95 % intervals over the runs
  (``rliable.library.get_interval_estimates``); a group of one run (one seed, or a bot) has no
  spread over runs to resample, so it shows the run's own 95 % interval over its deals;
* the evaluation games against ``greedy`` of its runs;
* the performance profile: the share of runs whose corrected score rate against
  ``greedy`` exceeds each threshold tau, with bootstrap intervals;
* means of the raw score rate, the win rate, the corrected score rate against the
  other opponents, the training seconds and the decisions a second;
* the learning curves of the runs that recorded them, over learner decisions and over
  training seconds: each seed's, and their mean point by point.

Rows of the plain-arena protocol (Wilson win rates), ``raw`` duplicates of a row
and runs stopped before their budget are left out, and counted. :func:`rows_table` is the
per-run table ``shelfie bench`` prints, :func:`plot_runs` its ``--plot``.

Rows of the task suite (a ``task`` field) also get the tables of :mod:`shelfie_env.arena.suite_report`: one
per task, one over tasks, sample efficiency and the baseline runs still to run, printed after the table
above; ``--leaderboard DOC`` writes them into a Markdown file's leaderboard block, ``--check-leaderboard
DOC`` checks that block. Only ``versus-2p``'s luck-aware rows join the table above.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.bootstrap import ReportError, rliable
from shelfie_env.arena.bootstrap import seeded as _seeded
from shelfie_env.arena.results_file import DEFAULT_OUT, ResultsFileError, load_results, row_name
from shelfie_env.arena.rows import PLAIN, PROTOCOL, budget_label

Group = tuple[str, int]
"""(learner, with its ablation variant if any, budget in learner decisions)."""


def runs(
    results: dict[str, Any], deals: str = "test"
) -> tuple[dict[Group, list[dict[str, Any]]], dict[str, int]]:
    """The rows of ``results`` to aggregate, by (learner, budget), each group sorted by seed; and how
    many rows were left out, by reason."""
    groups: dict[Group, list[dict[str, Any]]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    for row in results["rows"]:
        protocol = row.get("protocol", PLAIN)
        if "task" in row and (row["task"] != "versus-2p" or protocol != PROTOCOL):
            skipped["task rows without a match against greedy (in the task tables)"] += 1
        elif protocol != PROTOCOL:
            skipped[
                "plain-arena protocol (Wilson win rates), not aggregated" if protocol == PLAIN else protocol
            ] += 1
        elif row["mode"] == "stopped":
            skipped["stopped before its budget"] += 1
        elif row["mode"] == "raw":
            skipped["raw-mode copy of a masked row"] += 1
        elif str(row.get("eval", {}).get("deals")) != str(deals):
            skipped[f"evaluated on other deals than {deals}"] += 1
        else:
            groups[(row_name(row), row["steps"])].append(row)
    for rows in groups.values():
        rows.sort(key=lambda r: -1 if r["seed"] is None else r["seed"])
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][1] > 0, kv[0][0], kv[0][1]))), dict(skipped)


def label(group: Group) -> str:
    """``ppo_afterstate @ 1M``; a bot without training: its name alone."""
    learner, steps = group
    return learner if steps == 0 else f"{learner} @ {budget_label(steps)}"


def score_matrix(rows: list[dict[str, Any]], opponent: str = "greedy", side: str = "corrected") -> np.ndarray:
    """The runs' score rates against ``opponent`` as rliable's ``(runs, tasks)`` matrix (one task)."""
    return np.array([[r[f"vs_{opponent}"][side]["score_rate"]] for r in rows], dtype=float)


def aggregate(
    groups: dict[Group, list[dict[str, Any]]], reps: int = 10_000, seed: int = 0
) -> list[dict[str, Any]]:
    """Per group: IQM and mean of the corrected score rate against greedy with stratified-bootstrap 95 %
    intervals, and the means of the other numbers (module doc)."""
    if not groups:
        raise ReportError(f"no {PROTOCOL} rows to aggregate")
    library, metrics = rliable()
    scores = {label(g): score_matrix(rows) for g, rows in groups.items()}

    def iqm_and_mean(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(x), metrics.aggregate_mean(x)])

    with _seeded(seed):
        point, ci = library.get_interval_estimates(scores, iqm_and_mean, reps=reps)
    out = []
    for g, rows in groups.items():
        name = label(g)
        others = sorted({k[3:] for r in rows for k in r if k.startswith("vs_")} - {"greedy"})
        trained = [r for r in rows if r["train_s"] > 0]
        iqm_ci = [float(ci[name][0][0]), float(ci[name][1][0])]
        mean_ci = [float(ci[name][0][1]), float(ci[name][1][1])]
        own = rows[0]["vs_greedy"]["corrected"].get("ci95") if len(rows) == 1 else None
        if own:  # one run: nothing to resample over runs; its own interval over deals
            iqm_ci = mean_ci = [float(own[0]), float(own[1])]
        out.append(
            {
                "learner": g[0],
                "steps": g[1],
                "label": name,
                "seeds": [r["seed"] for r in rows],
                "runs": len(rows),
                "games": sorted({r["vs_greedy"]["games"] for r in rows}),
                "interval": "deals" if own else "runs",
                "iqm": float(point[name][0]),
                "iqm_ci95": iqm_ci,
                "mean": float(point[name][1]),
                "mean_ci95": mean_ci,
                "raw_mean": float(score_matrix(rows, side="raw").mean()),
                "win_rate_mean": float(np.mean([r["vs_greedy"]["win_rate"] for r in rows])),
                # a run whose raw results do not vary (every game lost) has no games factor
                "variance_ratio_mean": _mean([r["vs_greedy"].get("variance_ratio") or None for r in rows]),
                "others": {
                    o: _mean(
                        [
                            (r[f"vs_{o}"].get("corrected") or {}).get("score_rate")
                            for r in rows
                            if f"vs_{o}" in r
                        ]
                    )
                    for o in others
                },
                "train_s_mean": float(np.mean([r["train_s"] for r in rows])),
                "decisions_per_s": _mean([r.get("decisions", r["steps"]) / r["train_s"] for r in trained]),
            }
        )
    return out


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def profiles(
    groups: dict[Group, list[dict[str, Any]]], taus: np.ndarray, reps: int = 2_000, seed: int = 0
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Performance profiles of the corrected score rate against greedy (``rliable.library.create_performance_profile``):
    per group the share of runs above each tau, and its bootstrap 95 % band."""
    library, _ = rliable()
    scores = {label(g): score_matrix(rows) for g, rows in groups.items()}
    with _seeded(seed):
        return library.create_performance_profile(scores, taus, reps=reps)


def plot_profiles(
    path: Path, taus: np.ndarray, prof: dict[str, np.ndarray], cis: dict[str, np.ndarray]
) -> str:
    """Write the performance profiles to ``path`` (PNG); returns a line saying what happened."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from rliable import plot_utils
    except ImportError as exc:
        return f"no plot written: matplotlib is not installed ({exc}); pip install matplotlib"
    fig, ax = plt.subplots(figsize=(8, 4.5))
    plot_utils.plot_performance_profiles(
        prof,
        taus,
        performance_profile_cis=cis,
        ax=ax,
        xlabel=r"luck-corrected score rate against greedy ($\tau$)",
        ylabel=r"fraction of runs with score rate $> \tau$",
    )
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"performance profiles written to {path}"


def mean_curve(rows: list[dict[str, Any]]) -> list[tuple[float, float, float]]:
    """(decisions, training seconds, score rate) of a group's curves averaged point by point over its
    runs, as far as every run goes (the runs of a group share their curve schedule)."""
    curves = [r["curve"] for r in rows if r.get("curve")]
    if not curves:
        return []
    n = min(len(c) for c in curves)
    return [
        tuple(float(np.mean([c[i][k] for c in curves])) for k in ("decisions", "train_s", "score_rate"))
        for i in range(n)
    ]


def plot_curves(path: Path, groups: dict[Group, list[dict[str, Any]]]) -> str:
    """Write the learning curves of every group with curves to ``path`` (PNG): score rate against
    ``greedy`` over learner decisions and over training seconds, each seed thin and the mean bold;
    returns a line saying what happened."""
    with_curves = {g: rows for g, rows in groups.items() if mean_curve(rows)}
    if not with_curves:
        return "no curves written: no row of the report recorded a learning curve (--curve-every)"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        return f"no curves written: matplotlib is not installed ({exc}); pip install matplotlib"
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for i, (group, rows) in enumerate(with_curves.items()):
        color = f"C{i % 10}"
        for r in rows:
            c = r.get("curve") or []
            w = [100 * p["score_rate"] for p in c]
            axes[0].plot([p["decisions"] for p in c], w, color=color, lw=0.6, alpha=0.5)
            axes[1].plot([p["train_s"] for p in c], w, color=color, lw=0.6, alpha=0.5)
        d, t, w = zip(*mean_curve(rows))
        seeds = ", ".join(str(r["seed"]) for r in rows if r.get("curve"))
        name = f"{label(group)} (seeds {seeds})"
        axes[0].plot(d, [100 * x for x in w], color=color, lw=2, marker="o", ms=3, label=name)
        axes[1].plot(t, [100 * x for x in w], color=color, lw=2, marker="o", ms=3)
    save_curve_figure(fig, axes, path)
    plt.close(fig)
    return f"learning curves of {len(with_curves)} learner/budget group(s) written to {path}"


def save_curve_figure(fig: Any, axes: Any, path: Path) -> None:
    """Label a pair of curve axes (score rate against ``greedy`` over decisions, over seconds), mark
    the 50 % line and write the figure to ``path``."""
    axes[0].set_xlabel("learner decisions")
    axes[1].set_xlabel("training seconds (wall clock)")
    axes[0].set_ylabel("score rate against greedy, plain games (%)")
    for ax in axes:
        ax.axhline(50, color="grey", lw=0.5)
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    rows = (len(labels) + 1) // 2
    height = fig.get_figheight()
    fig.set_figheight(height + 0.22 * rows)  # the legend goes below the axes, not over the curves
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.22 * rows / fig.get_figheight(), 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def markdown(agg: list[dict[str, Any]], skipped: dict[str, int], deals: str = "test") -> str:
    """The aggregate as a Markdown table, and a line per kind of row left out."""
    others = sorted({o for a in agg for o in a["others"]})
    head = (
        "| learner | budget | seeds | games vs greedy | IQM corrected score rate vs greedy (95% CI) | "
        "mean (95% CI) | raw score rate vs greedy | win rate vs greedy | "
        + "".join(f"corrected vs {o} | " for o in others)
        + "games factor | train s | decisions/s |"
    )
    lines = [
        f"Luck-corrected score rate against greedy on the {deals} deals: interquartile mean and mean over "
        "runs (seeds), stratified-bootstrap 95% intervals over the runs; a row of one run (marked *) shows "
        "its own 95% interval over its deals. The other columns are means over the runs.",
        "",
        head,
        "|---|---:|---|---:|---:|---:|---:|---:|" + "---:|" * len(others) + "---:|---:|---:|",
    ]
    for a in agg:
        vr, speed = a["variance_ratio_mean"], a["decisions_per_s"]
        star = "*" if a.get("interval") == "deals" else ""
        lines.append(
            f"| {a['learner']} | {budget_label(a['steps'])} | "
            f"{', '.join('-' if s is None else str(s) for s in a['seeds'])} | "
            f"{' / '.join(f'{g:,}' for g in a['games'])} | "
            f"{_pct(a['iqm'])} ({100 * a['iqm_ci95'][0]:.1f}–{100 * a['iqm_ci95'][1]:.1f}){star} | "
            f"{_pct(a['mean'])} ({100 * a['mean_ci95'][0]:.1f}–{100 * a['mean_ci95'][1]:.1f}){star} | "
            f"{_pct(a['raw_mean'])} | {_pct(a['win_rate_mean'])} | "
            + "".join(f"{_pct(a['others'].get(o))} | " for o in others)
            + f"{'-' if vr is None else f'{vr:.1f}x'} | {a['train_s_mean']:,.0f} | "
            f"{'-' if speed is None else f'{speed:,.0f}'} |"
        )
    for reason, n in sorted(skipped.items()):
        lines.append(f"\nLeft out: {n} row{'s' if n != 1 else ''}: {reason}.")
    return "\n".join(lines)


DESCRIPTION = (
    "Aggregate benchmark results across seeds: IQM and mean with bootstrap intervals, "
    "performance profiles (rliable), learning curves."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The report's options (docs/benchmark.md lists them)."""
    parser.add_argument(
        "results", nargs="?", type=Path, default=DEFAULT_OUT, help="results JSON of shelfie bench"
    )
    parser.add_argument("--deals", default="test", help="aggregate the rows evaluated on this deal set")
    parser.add_argument("--reps", type=int, default=10_000, help="bootstrap replications")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    parser.add_argument("--markdown", type=Path, help="also write the Markdown table here")
    parser.add_argument("--json", type=Path, help="write the aggregates and profiles here")
    parser.add_argument("--plot", type=Path, help="write the performance profiles here (PNG)")
    parser.add_argument(
        "--curves", type=Path, help="write the learning curves over decisions and over seconds here (PNG)"
    )
    board = parser.add_mutually_exclusive_group()
    board.add_argument(
        "--leaderboard",
        type=Path,
        metavar="DOC",
        help="rewrite the task suite's leaderboard in this Markdown file, between the lines "
        "<!-- leaderboard:start --> and <!-- leaderboard:end -->",
    )
    board.add_argument(
        "--check-leaderboard",
        type=Path,
        metavar="DOC",
        help="only check DOC's leaderboard against the results file (same --reps, --seed, --deals): "
        "exit 0 when equal, 1 when it differs",
    )
    return parser


def build_parser(prog: str = "shelfie bench report") -> argparse.ArgumentParser:
    """The report's parser on its own."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(_parser=parser)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "shelfie bench report") -> int:
    """The report with its own parser (``scripts/bench_report.py``)."""
    return run(build_parser(prog).parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """``shelfie bench report``: print the tables, write what the options ask for; 2 on a bad file
    (``--check-leaderboard``: 1 when the leaderboard differs)."""
    from shelfie_env.arena import suite_report

    parser = getattr(args, "_parser", None) or build_parser()
    if args.reps <= 0:
        parser.error(f"--reps must be positive, got {args.reps}")
    board_doc = getattr(args, "leaderboard", None)
    check_doc = getattr(args, "check_leaderboard", None)
    try:
        results = load_results(args.results)
        if check_doc:
            return _check_leaderboard(parser, results["rows"], check_doc, args)
        if board_doc:
            suite_report.read_doc(board_doc)  # refuse a file without the markers before any work
        groups, skipped = runs(results, args.deals)
        suite = suite_report.has_tasks(results["rows"])
        if not groups and not suite and not board_doc:
            raise ReportError(
                f"{args.results}: no {PROTOCOL} rows on the {args.deals} deals to aggregate "
                f"({sum(skipped.values())} row(s) left out: {', '.join(sorted(skipped)) or 'the file has no rows'})"
            )
        taus = np.linspace(0.0, 1.0, 51)
        agg, prof, cis = [], {}, {}
        if groups:
            agg = aggregate(groups, args.reps, args.seed)
            prof, cis = profiles(groups, taus, min(args.reps, 2_000), args.seed)
        summary = (
            suite_report.suite_summary(results["rows"], args.reps, args.seed, args.deals)
            if suite or board_doc
            else None
        )
    except (ResultsFileError, ReportError) as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    parts = [markdown(agg, skipped, args.deals)] if groups else []
    if summary is not None and suite:
        parts.append(suite_report.markdown(summary))
    text = "\n\n".join(parts)
    if text:
        print(text)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "results": str(args.results),
            "deals": args.deals,
            "reps": args.reps,
            "aggregates": agg,
            "skipped": skipped,
            "profiles": {
                "taus": taus.round(4).tolist(),
                **{k: {"fraction": v.tolist(), "ci95": cis[k].tolist()} for k, v in prof.items()},
            },
        }
        if summary is not None and suite:
            data["suite"] = summary
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.plot:
        print(plot_profiles(args.plot, taus, prof, cis) if prof else "no profiles written: no versus-2p rows")
    if args.curves:
        print(plot_curves(args.curves, groups))
    if board_doc and summary is not None:
        try:
            changed = suite_report.write_block(board_doc, suite_report.markdown(summary))
        except (OSError, ReportError) as exc:
            print(f"{parser.prog}: {exc}", file=sys.stderr)
            return 2
        print(f"leaderboard {'written to' if changed else 'already up to date in'} {board_doc}")
    return 0


def _check_leaderboard(
    parser: argparse.ArgumentParser, rows: list[dict[str, Any]], doc: Path, args: argparse.Namespace
) -> int:
    """``--check-leaderboard DOC``: 0 when DOC's block is what ``rows`` generate, 1 (and the difference) if not."""
    from shelfie_env.arena import suite_report

    diff = suite_report.check_leaderboard(rows, doc, reps=args.reps, seed=args.seed, deals=args.deals)
    if diff is None:
        print(f"{doc}: the leaderboard is up to date with {args.results}")
        return 0
    print(
        f"{parser.prog}: {diff}\nrewrite it: {parser.prog} {args.results} --leaderboard {doc}",
        file=sys.stderr,
    )
    return 1


# ---------------------------------------------------------------- the per-run table of shelfie bench
def plot_runs(rows: list[dict[str, Any]], path: Path) -> None:
    """Curve score rate against greedy (plain games) over learner decisions and training seconds, a line a run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for r in rows:
        if not r.get("curve") or r["mode"] == "raw":
            continue
        name = f"{row_name(r)} seed {r['seed']}"
        d = [p["decisions"] for p in r["curve"]]
        t = [p["train_s"] for p in r["curve"]]
        w = [100 * p["score_rate"] for p in r["curve"]]
        axes[0].plot(d, w, marker=".", label=name)
        axes[1].plot(t, w, marker=".", label=name)
    axes[0].set_xscale("log")
    save_curve_figure(fig, axes, path)
    plt.close(fig)


def _rate(side: dict[str, Any] | None) -> str:
    if not side:
        return "-"
    lo, hi = side["ci95"]
    return f"{100 * side['score_rate']:.1f}% ({100 * lo:.1f}–{100 * hi:.1f})"


def rows_table(rows: list[dict[str, Any]], opponents: list[str] | None = None) -> str:
    """Markdown tables: a line per luck-aware row, then the plain-arena rows of the same file."""
    new = [r for r in rows if r.get("protocol") == PROTOCOL and r.get("vs_greedy")]
    old = [r for r in rows if r.get("protocol", PLAIN) == PLAIN]
    others = [o for o in (opponents or ["planner", "random"]) if o != "greedy"]
    others = [o for o in others if any(f"vs_{o}" in r for r in new)]
    out = [
        "| learner | seed | budget | decisions | train s | score vs greedy, raw (95% CI) | "
        "luck-corrected (95% CI) | games factor | games (deals) | win vs greedy (Wilson 95%) | "
        + "".join(f"corrected vs {o} | " for o in others)
        + "illegal first choices |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(others) + "---:|",
    ]
    for r in new:
        g = r["vs_greedy"]
        vr = g.get("variance_ratio")
        out.append(
            f"| {row_name(r)} | {'-' if r['seed'] is None else r['seed']} | "
            f"{budget_label(r['steps'])} | "
            f"{r.get('decisions', r['steps']):,} | {r['train_s']:,.0f} | {_rate(g['raw'])} | {_rate(g['corrected'])} | "
            f"{f'{vr:.1f}x' if vr else '-'} | {g['games']} ({g['deals']}) | "
            f"{100 * g['win_rate']:.1f}% ({100 * g['win_ci95'][0]:.1f}–{100 * g['win_ci95'][1]:.1f}) | "
            + "".join(f"{_rate(r.get(f'vs_{o}', {}).get('corrected'))} | " for o in others)
            + f"{_pct(r.get('illegal_first_choice_rate'))} |"
        )
    if old:
        out += [
            "",
            "Plain-arena protocol (Wilson win rates; not aggregated by the report):",
            "",
            plain_table(old),
        ]
    return "\n".join(out)


def plain_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of plain-arena rows."""
    out = [
        (
            "| learner | seed | steps | train s | play mode | win vs greedy (95% CI) | "
            "win vs random (95% CI) | score vs greedy | illegal first choices |"
        ),
        "|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        if not r.get("vs_greedy"):  # a run stopped before its budget: its curve only
            continue
        g, rd = r["vs_greedy"], r["vs_random"]
        out.append(
            f"| {r['learner']} | {'-' if r['seed'] is None else r['seed']} | "
            f"{r['steps']:,} | {r['train_s']:.0f} | "
            f"{r['mode']} | {100 * g['win_rate']:.1f}% ({100 * g['ci95'][0]:.1f}–{100 * g['ci95'][1]:.1f}) | "
            f"{100 * rd['win_rate']:.1f}% ({100 * rd['ci95'][0]:.1f}–{100 * rd['ci95'][1]:.1f}) | "
            f"{g['mean_score']:.1f} ± {g['sd_score']:.1f} | "
            f"{_pct(g.get('illegal_first_choice_rate'))} |"
        )
    return "\n".join(out)
