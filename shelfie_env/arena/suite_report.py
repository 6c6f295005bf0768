"""The task suite's tables and the leaderboard: per task, over tasks, sample efficiency, runs still to run.

Rows with a ``task`` field (``versus-2p``, ``field-3p``, ``field-4p``, ``solo``) carry the task's score
(``rating`` from :func:`shelfie_env.arena.rate` on a ladder, or ``solo``: the mean final score) and its
``normalized`` score (0 ``random``, 100 the top level on a ladder, optimal play on ``solo``). They are grouped by task, learner (with its
variant) and budget; each group of runs (one per seed) gives:

* :func:`summarize` — the IQM and mean of the score with stratified-bootstrap 95 % intervals over the runs
  (rliable, seeded per group), the IQM of the normalized score, the games ``rate`` played, and on
  ``versus-2p`` the IQM of the luck-corrected score rate against ``greedy``; a group of one run shows the
  run's own intervals;
* :func:`over_tasks` — per learner and budget on two tasks or more: the IQM of the normalized scores of
  every (seed, task) run, with the interval of rliable's stratified bootstrap over its runs x tasks matrix;
* :func:`sample_efficiency` — from each run's ``rating_curve``: the normalized score and the score at
  1/4, 1/2 and all of the budget, and the area under the normalized curve over the decisions it spans
  (the run's mean normalized score), IQM over seeds;
* :func:`still_to_run` — the cells of :data:`BASELINE` without a row.

:func:`leaderboard_markdown` writes them as Markdown; :func:`write_leaderboard` puts that between the
marker lines of a Markdown file (:mod:`.leaderboard_block`), :func:`check_leaderboard` says whether it is
there. A row's normalized score is read on today's scale (:mod:`.row_scale`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.bootstrap import rliable
from shelfie_env.arena.bootstrap import seeded as _seeded
from shelfie_env.arena.leaderboard_block import LeaderboardError, compare_block, read_doc, write_block
from shelfie_env.arena.results_file import row_name
from shelfie_env.arena.row_scale import SOLO, _number, normalized_now
from shelfie_env.arena.rows import PLAIN, PROTOCOL, budget_label

TASKS = ("versus-2p", "field-3p", "field-4p", "solo")
"""The tasks in table order (:data:`shelfie_env.benchmark.suite.TASKS`)."""
VERSUS = "versus-2p"
SCORES = {
    "versus-2p": "rating on the 2-player ladder; the luck-corrected score rate against greedy beside it",
    "field-3p": "rating on the 3-player ladder",
    "field-4p": "rating on the 4-player ladder",
    "solo": "mean final score on the test deals",
}
"""What each task's score is, for the tables' captions."""
MARKS = (0.25, 0.5, 1.0)
"""Fractions of the budget where the sample-efficiency table reads the rating curves."""
MARK_TOLERANCE = 0.1
"""A curve point counts at a mark when its decisions are within this fraction of the mark."""

TaskGroup = tuple[str, str, int]
"""(task, learner with its variant if any, budget in learner decisions)."""


@dataclass(frozen=True)
class Baseline:
    """The runs the suite's baseline needs: each learner (and variant) on its tasks, every seed, one budget."""

    learners: tuple[tuple[str, str, tuple[str, ...]], ...]
    """(learner, variant, tasks) — ``variant`` as rows write it (``""``: none)."""
    seeds: tuple[int, ...]
    steps: int

    def cells(self) -> list[tuple[str, str, str, int]]:
        """Every (task, learner, variant, seed) of the matrix, in table order."""
        return [
            (t, learner, variant, s)
            for t in TASKS
            for learner, variant, tasks in self.learners
            if t in tasks
            for s in self.seeds
        ]


BASELINE = Baseline(
    learners=(
        ("td", "", ("versus-2p", "field-3p", "field-4p")),
        ("ppo_afterstate", "", ("versus-2p", "field-3p", "field-4p")),
        ("ppo_flat", "score_reward=0.02,reroll=keep,stop_bias=2.8", TASKS),
        ("maskable_ppo", "score_reward=0.02,reroll=keep,obs=features", TASKS),
    ),
    seeds=(0, 1, 2),
    steps=1_000_000,
)
"""The baseline matrix of :func:`still_to_run` (``td`` and ``ppo_afterstate`` do not train on ``solo``)."""


# ---------------------------------------------------------------- rows
def has_tasks(rows: Sequence[dict[str, Any]]) -> bool:
    """True when any row has a ``task`` field."""
    return any("task" in r for r in rows)


def task_score(row: dict[str, Any]) -> dict[str, Any] | None:
    """``{"value", "ci95", "games"}`` of the row's task score (rating, or solo mean), None when it has none."""
    solo = row.get("task") == SOLO
    block = row.get("solo" if solo else "rating")
    if not isinstance(block, dict):
        return None
    value = block.get("mean" if solo else "rating")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    ci = block.get("ci95")
    return {
        "value": float(value),
        "ci95": [float(c) for c in ci] if ci else None,
        "games": block.get("games"),
    }


def _deals(row: dict[str, Any]) -> str:
    return str((row.get("eval") or {}).get("deals") or (row.get("solo") or {}).get("deals") or "test")


def _corrected(row: dict[str, Any]) -> dict[str, Any] | None:
    side = (row.get("vs_greedy") or {}).get("corrected") or {}
    rate = _number(side.get("score_rate"))
    return None if rate is None else {"value": rate, "ci95": side.get("ci95")}


def task_runs(
    rows: Sequence[dict[str, Any]], deals: str = "test"
) -> tuple[dict[TaskGroup, list[dict[str, Any]]], dict[str, int]]:
    """The task rows by (task, learner, budget), in table order and each group sorted by seed; and how many
    rows were left out, by reason (luck-aware rows without a ``task`` among them)."""
    groups: dict[TaskGroup, list[dict[str, Any]]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    for row in rows:
        if "task" not in row:
            if row.get("protocol", PLAIN) == PROTOCOL:
                skipped["versus-2p rows from before the task suite (no rating)"] += 1
        elif row["task"] not in TASKS:
            skipped[f"unknown task {row['task']!r}"] += 1
        elif row["mode"] in ("stopped", "raw"):
            skipped[
                "stopped before its budget" if row["mode"] == "stopped" else "raw-mode copy of a row"
            ] += 1
        elif _deals(row) != str(deals):
            skipped[f"evaluated on other deals than {deals}"] += 1
        elif task_score(row) is None:
            skipped["without the task's score"] += 1
        else:
            groups[(row["task"], row_name(row), row["steps"])].append(normalized_now(row))
    for runs in groups.values():
        runs.sort(key=lambda r: -1 if r["seed"] is None else r["seed"])
    order = sorted(groups, key=lambda g: (TASKS.index(g[0]), g[2] > 0, g[1], g[2]))
    return {g: groups[g] for g in order}, dict(skipped)


def label(name: str, steps: int) -> str:
    """``td @ 1M``; a bot without training: its name alone."""
    return name if steps == 0 else f"{name} @ {budget_label(steps)}"


# ---------------------------------------------------------------- estimates
def iqm(x: Any) -> float:
    """Interquartile mean of every value of ``x``: the mean after cutting a quarter (rounded down) at each
    end, as ``rliable.metrics.aggregate_iqm`` (``scipy.stats.trim_mean(x, 0.25, axis=None)``) without its
    per-call overhead, which dominates a bootstrap over a few runs."""
    v = np.sort(np.asarray(x, dtype=float).ravel())
    k = int(0.25 * v.size)
    return float(v[k : v.size - k].mean())


def estimates(values: dict[str, list[float]], reps: int = 10_000, seed: int = 0) -> dict[str, dict[str, Any]]:
    """IQM and mean of each named list of per-run values, with stratified-bootstrap 95 % intervals (rliable;
    each list resampled on its own, the bootstrap seeded with ``seed``). Empty lists are left out."""
    library, _ = rliable()
    names = [k for k, v in values.items() if v]
    if not names:
        return {}
    data = [np.asarray(values[k], dtype=float).reshape(-1, 1) for k in names]

    def iqm_and_mean(*xs: np.ndarray) -> np.ndarray:
        return np.array([f(x) for x in xs for f in (iqm, np.mean)])

    with _seeded(seed):
        point, ci = library.get_interval_estimates({"runs": data}, iqm_and_mean, reps=reps)
    p, lo, hi = point["runs"], ci["runs"][0], ci["runs"][1]
    return {
        k: {
            "iqm": float(p[2 * i]),
            "iqm_ci95": [float(lo[2 * i]), float(hi[2 * i])],
            "mean": float(p[2 * i + 1]),
            "mean_ci95": [float(lo[2 * i + 1]), float(hi[2 * i + 1])],
            "runs": len(values[k]),
        }
        for i, k in enumerate(names)
    }


def summarize(
    groups: dict[TaskGroup, list[dict[str, Any]]], reps: int = 10_000, seed: int = 0
) -> list[dict[str, Any]]:
    """Per task group: the score's IQM and mean, the normalized score's IQM and, on ``versus-2p``, the
    corrected score rate's IQM against greedy, each with its 95 % interval (module doc)."""
    out = []
    for (task, name, steps), runs in groups.items():
        scores = [task_score(r) for r in runs]
        normalized = [_number(r.get("normalized")) for r in runs]
        corrected = [_corrected(r) for r in runs] if task == VERSUS else []
        est = estimates(
            {
                "score": [s["value"] for s in scores],
                "normalized": [x for x in normalized if x is not None],
                "corrected": [c["value"] for c in corrected if c],
            },
            reps,
            seed,
        )
        one = len(runs) == 1
        if one:  # nothing to resample over runs: the run's own intervals over its games
            for key, own in (("score", scores[0]), ("corrected", corrected[0] if corrected else None)):
                if own and own.get("ci95") and key in est:
                    est[key]["iqm_ci95"] = est[key]["mean_ci95"] = [float(c) for c in own["ci95"]]
            if "normalized" in est:
                est["normalized"]["iqm_ci95"] = est["normalized"]["mean_ci95"] = None
        out.append(
            {
                "task": task,
                "learner": name,
                "steps": steps,
                "label": label(name, steps),
                "seeds": [r["seed"] for r in runs],
                "runs": len(runs),
                "games": sorted({s["games"] for s in scores if s["games"] is not None}),
                "interval": "own" if one else "runs",
                "score": est["score"],
                "normalized": est.get("normalized"),
                "corrected": est.get("corrected"),
            }
        )
    return out


def over_tasks(
    groups: dict[TaskGroup, list[dict[str, Any]]], reps: int = 10_000, seed: int = 0
) -> tuple[list[dict[str, Any]], list[str]]:
    """Per learner and budget on two tasks or more: the IQM of the normalized score over every (seed, task)
    run, with rliable's stratified-bootstrap 95 % interval over the runs x tasks matrix (each task's runs
    resampled on their own when the tasks have different numbers of runs); and the labels on one task."""
    library, _ = rliable()
    by_learner: dict[tuple[str, int], dict[str, list[float]]] = defaultdict(dict)
    for (task, name, steps), runs in groups.items():
        vals = [v for v in (_number(r.get("normalized")) for r in runs) if v is not None]
        if vals:
            by_learner[(name, steps)][task] = vals
    out, single = [], []
    for (name, steps), per_task in sorted(
        by_learner.items(), key=lambda kv: (kv[0][1] > 0, kv[0][0], kv[0][1])
    ):
        if len(per_task) < 2:
            single.append(label(name, steps))
            continue
        tasks = [t for t in TASKS if t in per_task]
        counts = {len(per_task[t]) for t in tasks}
        flat = np.concatenate([per_task[t] for t in tasks])
        data: Any
        if len(counts) == 1:
            data = np.column_stack([per_task[t] for t in tasks])

            def func(x: np.ndarray) -> np.ndarray:
                return np.array([iqm(x)])
        else:
            data = [np.asarray(per_task[t], dtype=float).reshape(-1, 1) for t in tasks]

            def func(*xs: np.ndarray) -> np.ndarray:
                return np.array([iqm(np.concatenate([x.ravel() for x in xs]))])

        ci: list[float] | None = None
        if max(counts) > 1:
            with _seeded(seed):
                _, cis = library.get_interval_estimates({"runs": data}, func, reps=reps)
            ci = [float(cis["runs"][0][0]), float(cis["runs"][1][0])]
        out.append(
            {
                "learner": name,
                "steps": steps,
                "label": label(name, steps),
                "tasks": tasks,
                "runs": int(flat.size),
                "runs_per_task": {t: len(per_task[t]) for t in tasks},
                "iqm": iqm(flat),
                "iqm_ci95": ci,
                "per_task": {t: iqm(np.asarray(per_task[t])) for t in tasks},
            }
        )
    return out, single


# ---------------------------------------------------------------- sample efficiency
def curve_points(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's ``rating_curve`` points with a decisions count and a normalized score, by decisions."""
    pts = [
        p
        for p in row.get("rating_curve") or []
        if isinstance(p, dict)
        and _number(p.get("decisions")) is not None
        and _number(p.get("normalized")) is not None
    ]
    return sorted(pts, key=lambda p: p["decisions"])


def point_at(points: Sequence[dict[str, Any]], mark: float) -> dict[str, Any] | None:
    """The point nearest ``mark`` decisions, if within :data:`MARK_TOLERANCE` of it."""
    if not points:
        return None
    best = min(points, key=lambda p: abs(p["decisions"] - mark))
    return best if abs(best["decisions"] - mark) <= MARK_TOLERANCE * mark else None


def curve_area(points: Sequence[dict[str, Any]]) -> float | None:
    """Area under the normalized curve (trapezoids over the points) divided by the decisions from the first
    point to the last: the mean normalized score over the span. None under two points."""
    if len(points) < 2 or points[-1]["decisions"] <= points[0]["decisions"]:
        return None
    x = np.array([p["decisions"] for p in points], dtype=float)
    y = np.array([p["normalized"] for p in points], dtype=float)
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)) / (x[-1] - x[0]))


def sample_efficiency(
    groups: dict[TaskGroup, list[dict[str, Any]]], reps: int = 10_000, seed: int = 0
) -> list[dict[str, Any]]:
    """Per trained group whose runs have rating curves: IQM over seeds of the normalized score and of the score
    (rating or solo mean) at each of :data:`MARKS` of the budget, and of the area under the normalized curve,
    with its 95 % interval (none for one run)."""
    out = []
    for (task, name, steps), runs in groups.items():
        curves = [(r, curve_points(r)) for r in runs if steps > 0]
        curves = [(r, c) for r, c in curves if c]
        if not curves:
            continue
        key = "mean" if task == SOLO else "rating"
        marks = []
        for f in MARKS:
            at = [p for p in (point_at(c, f * steps) for _, c in curves) if p is not None]
            vals = [_number(p.get(key)) for p in at]
            marks.append(
                {
                    "fraction": f,
                    "decisions": int(f * steps),
                    "runs": len(at),
                    "normalized": iqm(np.array([p["normalized"] for p in at])) if at else None,
                    "score": iqm(np.array([v for v in vals if v is not None]))
                    if any(v is not None for v in vals)
                    else None,
                }
            )
        areas = [a for a in (curve_area(c) for _, c in curves) if a is not None]
        area = estimates({"area": areas}, reps, seed).get("area") if len(areas) > 1 else None
        out.append(
            {
                "task": task,
                "learner": name,
                "steps": steps,
                "label": label(name, steps),
                "seeds": [r["seed"] for r, _ in curves],
                "marks": marks,
                "areas": areas,
                "area_iqm": area["iqm"] if area else (areas[0] if areas else None),
                "area_ci95": area["iqm_ci95"] if area else None,
            }
        )
    return out


# ---------------------------------------------------------------- still to run
def still_to_run(
    rows: Sequence[dict[str, Any]], baseline: Baseline = BASELINE, deals: str = "test"
) -> list[tuple[str, str, int]]:
    """The (task, learner with its variant, seed) cells of ``baseline`` with no row in :func:`task_runs`."""
    groups, _ = task_runs(rows, deals)
    done = {
        (t, name, r["seed"])
        for (t, name, steps), runs in groups.items()
        if steps == baseline.steps
        for r in runs
    }
    out = []
    for t, learner, variant, s in baseline.cells():
        name = row_name({"learner": learner, "variant": variant})
        if (t, name, s) not in done:
            out.append((t, name, s))
    return out


def _before_suite(rows: Sequence[dict[str, Any]], steps: int) -> set[tuple[str, int]]:
    """(learner, seed) of the luck-aware rows without a ``task`` at ``steps``."""
    return {
        (row_name(r), r["seed"])
        for r in rows
        if "task" not in r
        and r.get("protocol") == PROTOCOL
        and r["steps"] == steps
        and r["mode"] != "stopped"
    }


def unrated(rows: Sequence[dict[str, Any]]) -> list[tuple[str, int, list[int]]]:
    """(learner with its variant, budget, seeds) of the luck-aware versus-2p rows from before the task suite:
    kept for their score rate against greedy, without a rating until they are run again under the suite."""
    seeds: dict[tuple[str, int], list[int]] = defaultdict(list)
    for r in rows:
        if "task" not in r and r.get("protocol") == PROTOCOL and r["mode"] not in ("stopped", "raw"):
            seeds[(row_name(r), r["steps"])].append(r["seed"])
    return [(name, steps, sorted(s, key=lambda x: -1 if x is None else x)) for (name, steps), s in sorted(seeds.items())]


# ---------------------------------------------------------------- Markdown
def _ci(ci: Sequence[float] | None, fmt: Callable[[float], str]) -> str:
    return "" if not ci else f" ({fmt(ci[0])}–{fmt(ci[1])})"


def _rating(x: float) -> str:
    return f"{x:.0f}"


def _one(x: float) -> str:
    return f"{x:.1f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _of_optimum(x: float) -> str:
    from shelfie_env.arena.solo_score import percent_of_optimum

    return f"{percent_of_optimum(x):.1f}"


def _cell(
    est: dict[str, Any] | None, which: str, fmt: Callable[[float], str], star: str, unit: str = ""
) -> str:
    if not est:
        return "-"
    ci = est[f"{which}_ci95"]
    return f"{fmt(est[which])}{unit}{_ci(ci, fmt)}{star if ci else ''}"


def _seeds(seeds: Sequence[int | None]) -> str:
    return ", ".join("-" if s is None else str(s) for s in seeds)


def task_table(task: str, summary: Sequence[dict[str, Any]]) -> str:
    """The Markdown table of one task's groups."""
    fmt = _one if task == SOLO else _rating
    what = "mean score" if task == SOLO else "rating"
    games = "games" if task == SOLO else "rating games"
    head = f"| learner | budget | seeds | {games} | IQM {what} (95% CI) | mean (95% CI) | IQM normalized (95% CI) |"
    rule = "|---|---:|---|---:|---:|---:|---:|"
    if task == VERSUS:
        head += " IQM corrected score rate vs greedy (95% CI) |"
        rule += "---:|"
    if task == SOLO:
        head += " IQM % of E* (95% CI) |"
        rule += "---:|"
    caption = SCORES[task]
    if task == SOLO:
        from shelfie_env.solo import optimum

        caption += f"; optimal play's expectation E* = {optimum():.2f}"
    lines = [f"**{task}** — {caption}.", ""]
    rows = [a for a in summary if a["task"] == task]
    if not rows:
        return "\n".join(lines + ["No rows yet."])
    lines += [head, rule]
    for a in rows:
        star = "*" if a["interval"] == "own" else ""
        line = (
            f"| {a['learner']} | {budget_label(a['steps'])} | {_seeds(a['seeds'])} | "
            f"{' / '.join(f'{g:,}' for g in a['games']) or '-'} | "
            f"{_cell(a['score'], 'iqm', fmt, star)} | {_cell(a['score'], 'mean', fmt, star)} | "
            f"{_cell(a['normalized'], 'iqm', _one, '')} |"
        )
        if task == VERSUS:
            line += f" {_cell(a['corrected'], 'iqm', _pct, star, '%')} |"
        if task == SOLO:
            line += f" {_cell(a['score'], 'iqm', _of_optimum, star, '%')} |"
        lines.append(line)
    return "\n".join(lines)


def over_tasks_table(agg: Sequence[dict[str, Any]], single: Sequence[str]) -> str:
    """The Markdown table of :func:`over_tasks`."""
    lines = [
        "**Over tasks** — IQM of the normalized scores of every (seed, task) run of a learner and budget on two "
        "tasks or more, with rliable's stratified-bootstrap 95% interval over its runs x tasks matrix; the "
        "per-task columns are each task's IQM.",
        "",
    ]
    if not agg:
        lines.append("No learner has rows on two tasks yet.")
    else:
        lines += [
            "| learner | budget | tasks | runs | IQM normalized (95% CI) | " + " | ".join(TASKS) + " |",
            "|---|---:|---:|---:|---:|" + "---:|" * len(TASKS),
        ]
        for a in agg:
            lines.append(
                f"| {a['learner']} | {budget_label(a['steps'])} | {len(a['tasks'])} of {len(TASKS)} | "
                f"{a['runs']} | {_one(a['iqm'])}{_ci(a['iqm_ci95'], _one)} | "
                + " | ".join(_one(a["per_task"][t]) if t in a["per_task"] else "-" for t in TASKS)
                + " |"
            )
    if single:
        lines += ["", f"On one task only (in its table above): {', '.join(single)}."]
    return "\n".join(lines)


def efficiency_table(eff: Sequence[dict[str, Any]]) -> str:
    """The Markdown table of :func:`sample_efficiency`."""
    fractions = " · ".join({0.25: "1/4", 0.5: "1/2", 1.0: "1"}.get(f, f"{f:g}") for f in MARKS)
    lines = [
        f"**Sample efficiency** — from the runs' rating curves: the normalized score and the rating (solo: the "
        f"mean score) at {fractions} of the budget, and the area under the normalized curve (trapezoids over "
        "its points, divided by the decisions from the first point to the last: the mean normalized score over "
        "the run), IQM over the seeds.",
        "",
    ]
    if not eff:
        return "\n".join(lines + ["No run has a rating curve yet."])
    lines += [
        f"| task | learner | budget | seeds | normalized at {fractions} | rating at {fractions} | "
        "area under the normalized curve (95% CI) |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    for e in eff:
        fmt = _one if e["task"] == SOLO else _rating
        norm = " · ".join("-" if m["normalized"] is None else _one(m["normalized"]) for m in e["marks"])
        score = " · ".join("-" if m["score"] is None else fmt(m["score"]) for m in e["marks"])
        area = "-" if e["area_iqm"] is None else f"{_one(e['area_iqm'])}{_ci(e['area_ci95'], _one)}"
        lines.append(
            f"| {e['task']} | {e['learner']} | {budget_label(e['steps'])} | {_seeds(e['seeds'])} | "
            f"{norm} | {score} | {area} |"
        )
    return "\n".join(lines)


def still_to_run_table(summary: dict[str, Any]) -> str:
    """The cells of the baseline still to run (:func:`suite_summary`), a line per task and learner."""
    base, missing = summary["baseline"], summary["still_to_run"]
    who = "; ".join(
        f"{row_name({'learner': learner, 'variant': variant})} on "
        + ("every task" if tuple(tasks) == TASKS else ", ".join(tasks))
        for learner, variant, tasks in base["learners"]
    )
    title = "Still to run" if missing else "Baseline complete"
    lines = [
        f"**{title}** — the baseline: {who}; seeds {_seeds(base['seeds'])} at "
        f"{budget_label(base['steps'])}. {base['cells'] - len(missing)} of {base['cells']} runs are in the file"
        + (f", {len(missing)} to run:" if missing else ", none to run."),
    ]
    if not missing:
        return "\n".join(lines)
    by_cell: dict[tuple[str, str], list[int]] = defaultdict(list)
    for t, name, s in missing:
        by_cell[(t, name)].append(s)
    old = {tuple(x) for x in summary["before_suite"]}
    lines += ["", "| task | learner | seeds |", "|---|---|---|"]
    for (t, name), seeds in by_cell.items():
        note = [s for s in seeds if t == VERSUS and (name, s) in old]
        extra = f" (rows from before the suite, without a rating: {_seeds(note)})" if note else ""
        lines.append(f"| {t} | {name} | {_seeds(seeds)}{extra} |")
    return "\n".join(lines)


def suite_summary(
    rows: Sequence[dict[str, Any]],
    reps: int = 10_000,
    seed: int = 0,
    deals: str = "test",
    baseline: Baseline = BASELINE,
) -> dict[str, Any]:
    """Every number of the leaderboard (``shelfie bench report --json`` writes it under ``suite``)."""
    groups, skipped = task_runs(rows, deals)
    agg, single = over_tasks(groups, reps, seed)
    return {
        "deals": deals,
        "reps": reps,
        "seed": seed,
        "tasks": summarize(groups, reps, seed),
        "over_tasks": agg,
        "one_task": single,
        "sample_efficiency": sample_efficiency(groups, reps, seed),
        "baseline": {
            "learners": [list(x) for x in baseline.learners],
            "seeds": list(baseline.seeds),
            "steps": baseline.steps,
            "cells": len(baseline.cells()),
        },
        "still_to_run": [list(c) for c in still_to_run(rows, baseline, deals)],
        "before_suite": sorted([list(x) for x in _before_suite(rows, baseline.steps)], key=str),
        "skipped": skipped,
        "unrated": [list(x) for x in unrated(rows)],
    }


def markdown(summary: dict[str, Any]) -> str:
    """The leaderboard of :func:`suite_summary`: a table per task, over tasks, sample efficiency, still to run."""
    parts = [
        f"Task scores on the {summary['deals']} deals: interquartile mean and mean over runs (seeds) with "
        f"stratified-bootstrap 95% intervals over the runs (rliable, {summary['reps']:,} replications, seed "
        f"{summary['seed']}); a row of one run (marked *) shows its own 95% interval. Normalized: 0 is random, "
        "100 the top level of the task's ladder (on solo: optimal play, E*). "
        "Generated by `shelfie bench report RESULTS --leaderboard DOC`.",
        *(task_table(t, summary["tasks"]) for t in TASKS),
        over_tasks_table(summary["over_tasks"], summary["one_task"]),
        efficiency_table(summary["sample_efficiency"]),
        still_to_run_table(summary),
    ]
    notes = [
        f"Left out: {n} row{'s' if n != 1 else ''}: {why}." for why, n in sorted(summary["skipped"].items())
    ]
    if summary.get("unrated"):
        notes.append(
            "Not rated yet (run again under the suite's protocol to rate): "
            + "; ".join(f"{label(name, steps)} (seeds {_seeds(seeds)})" for name, steps, seeds in summary["unrated"])
            + "."
        )
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts)


def leaderboard_markdown(
    rows: Sequence[dict[str, Any]],
    reps: int = 10_000,
    seed: int = 0,
    deals: str = "test",
    baseline: Baseline = BASELINE,
) -> str:
    """The leaderboard of ``rows`` (:func:`suite_summary`, :func:`markdown`); the same rows give the same text."""
    return markdown(suite_summary(rows, reps, seed, deals, baseline))


def write_leaderboard(rows: Sequence[dict[str, Any]], doc_path: str | Path, **options: Any) -> bool:
    """Rewrite the leaderboard block of ``doc_path`` with :func:`leaderboard_markdown` of ``rows`` (``options``
    go to it); a :class:`LeaderboardError`, the file untouched, when the markers are missing. True when it
    changed."""
    read_doc(Path(doc_path))  # refuse before the bootstrap runs
    return write_block(doc_path, leaderboard_markdown(rows, **options))


def check_leaderboard(rows: Sequence[dict[str, Any]], doc_path: str | Path, **options: Any) -> str | None:
    """None when the leaderboard block of ``doc_path`` is what ``rows`` generate, else a message with the
    differing lines; a :class:`LeaderboardError` when the file or its markers are missing."""
    read_doc(Path(doc_path))
    return compare_block(doc_path, leaderboard_markdown(rows, **options))


__all__ = [
    "BASELINE",
    "TASKS",
    "Baseline",
    "LeaderboardError",
    "check_leaderboard",
    "leaderboard_markdown",
    "markdown",
    "normalized_now",
    "over_tasks",
    "read_doc",
    "sample_efficiency",
    "still_to_run",
    "suite_summary",
    "summarize",
    "task_runs",
    "task_table",
    "write_leaderboard",
]
