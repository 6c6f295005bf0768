"""The task suite's report (``shelfie_env.arena.suite_report``): per-task IQMs, the aggregate over tasks, sample
efficiency, the runs still to run, and the leaderboard block of ``shelfie bench report --leaderboard``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shelfie_env.arena import aggregate as report
from shelfie_env.arena import suite_report as sr
from shelfie_env.arena.results_file import load_results
from shelfie_env.arena.rows import PROTOCOL
from shelfie_env.arena.task_score import ladder_ends

MPPO = "score_reward=0.02,reroll=keep,obs=features"
MPPO_NAME = f"maskable_ppo ({MPPO})"
FLAT = "score_reward=0.02,reroll=keep,stop_bias=2.8"
FLAT_NAME = f"ppo_flat ({FLAT})"
PLAYERS = {"versus-2p": 2, "field-3p": 3, "field-4p": 4, "solo": 1}
REPS = 300


def side(rate: float) -> dict:
    return {"score_rate": rate, "ci95": [rate - 0.05, rate + 0.05], "mean_reward": 2 * rate - 1}


def task_row(
    task: str,
    learner: str,
    seed: int | None,
    score: float,
    normalized: float,
    *,
    steps: int = 1_000_000,
    curve: list[tuple[int, float, float]] | None = None,
    variant: str | None = None,
    corrected: float = 0.5,
) -> dict:
    """A row of ``task`` whose rating (solo: mean score) is ``score``; ``curve``: (decisions, score, normalized)."""
    bot = seed is None
    r = {
        "learner": learner,
        "seed": seed,
        "steps": 0 if bot else steps,
        "decisions": 0 if bot else steps,
        "train_s": 0.0 if bot else 100.0,
        "mode": "bot" if bot else "masked",
        "protocol": PROTOCOL if task == "versus-2p" else "task-score",
        "task": task,
        "players": PLAYERS[task],
        "normalized": normalized,
    }
    if variant:
        r["variant"] = variant
    if task == "solo":
        r["solo"] = {"mean": score, "ci95": [score - 2, score + 2], "sd": 20.0, "games": 500, "deals": "test"}
    else:
        r["rating"] = {
            "rating": score,
            "ci95": [score - 30, score + 30],
            "se": 15.3,
            "games": 400,
            "level": "x",
        }
    if task == "versus-2p":
        r["eval"] = {"deals": "test", "first_seed": 30_000_000, "duplicate": True, "luck": "td+planner"}
        r["vs_greedy"] = {
            "games": 400,
            "deals": 200,
            "raw": side(corrected),
            "corrected": side(corrected),
            "variance_ratio": 2.0,
            "wins": 0,
            "ties": 0,
            "losses": 0,
            "win_rate": corrected,
            "win_ci95": [0.0, 1.0],
        }
    if curve:
        key = "mean" if task == "solo" else "rating"
        r["rating_curve"] = [
            {"decisions": d, key: s, "ci95": [s - 50, s + 50], "games": 100, "normalized": n}
            for d, s, n in curve
        ]
    return r


def old_row(learner: str, seed: int, rate: float) -> dict:
    """A luck-aware versus row from before the suite: no task, no rating."""
    r = task_row("versus-2p", learner, seed, 0.0, 0.0, corrected=rate)
    for k in ("task", "players", "rating", "normalized"):
        del r[k]
    return r


def synthetic() -> list[dict]:
    rows = [
        task_row("versus-2p", "greedy", None, 1500, 60.0),
        task_row("field-3p", "greedy", None, 1450, 55.0),
        task_row("solo", "greedy", None, 70.0, 80.0),
    ]
    for s, (rv, nv, rf, nf, c) in enumerate(
        [(1600, 70, 1500, 62, 0.66), (1620, 72, 1520, 64, 0.68), (1640, 74, 1540, 66, 0.70)]
    ):
        rows.append(
            task_row(
                "versus-2p",
                "td",
                s,
                rv,
                nv,
                corrected=c,
                curve=[(250_000, rv - 200, nv - 30), (500_000, rv - 100, nv - 15), (1_000_000, rv, nv)],
            )
        )
        rows.append(
            task_row(
                "field-3p",
                "td",
                s,
                rf,
                nf,
                curve=[(250_000, rf - 100, nf - 20), (500_000, rf - 50, nf - 10), (1_000_000, rf, nf)],
            )
        )
    for s, (rv, nv) in enumerate([(1000, 10), (1100, 20), (1300, 40), (1900, 90)]):
        rows.append(task_row("versus-2p", "maskable_ppo", s, rv, nv, variant=MPPO, corrected=0.1 * (s + 1)))
    rows.append(
        task_row(
            "solo",
            "maskable_ppo",
            0,
            55.0,
            40.0,
            variant=MPPO,
            curve=[(250_000, 40.0, 10.0), (500_000, 50.0, 30.0), (1_000_000, 55.0, 40.0)],
        )
    )
    rows.append(task_row("field-4p", "ppo_flat", 0, 1300, 30.0, variant=FLAT))
    rows.append(old_row("ppo_afterstate", 0, 0.7))
    rows.append({**task_row("field-4p", "ppo_flat", 1, 0, 0, variant=FLAT), "mode": "stopped"})
    return rows


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps({"protocols": {}, "rows": rows}), encoding="utf-8")
    return path


DOC = "# Results\n\nprose above\n\n<!-- leaderboard:start -->\nstale table\n<!-- leaderboard:end -->\n\nprose below\n"


# ---------------------------------------------------------------- rows and groups
def test_the_tasks_and_the_baseline_match_the_suite_and_the_learners():
    from shelfie_env.benchmark.learners import check_task
    from shelfie_env.benchmark.suite import TASKS

    assert sr.TASKS == tuple(TASKS)
    cells = sr.BASELINE.cells()
    assert len(cells) == 3 * 3 + 3 * 3 + 4 * 3 + 4 * 3
    for task, learner, _, _ in cells:
        check_task(learner, task)  # every cell is a run shelfie bench can make


def test_task_rows_group_by_task_learner_and_budget():
    groups, skipped = sr.task_runs(synthetic())
    assert list(groups) == [
        ("versus-2p", "greedy", 0),
        ("versus-2p", MPPO_NAME, 1_000_000),
        ("versus-2p", "td", 1_000_000),
        ("field-3p", "greedy", 0),
        ("field-3p", "td", 1_000_000),
        ("field-4p", FLAT_NAME, 1_000_000),
        ("solo", "greedy", 0),
        ("solo", MPPO_NAME, 1_000_000),
    ]
    assert [r["seed"] for r in groups[("versus-2p", MPPO_NAME, 1_000_000)]] == [0, 1, 2, 3]
    assert skipped == {
        "versus-2p rows from before the task suite (no rating)": 1,
        "stopped before its budget": 1,
    }
    other = synthetic()[:1]
    other[0]["eval"]["deals"] = "selection"
    assert sr.task_runs(other)[1] == {"evaluated on other deals than test": 1}


def test_the_versus_table_keeps_the_old_rows_and_leaves_the_other_tasks_to_the_task_tables(tmp_path):
    groups, skipped = report.runs(load_results(write(tmp_path / "r.json", synthetic())))
    assert set(groups) == {
        ("greedy", 0),
        (MPPO_NAME, 1_000_000),
        ("td", 1_000_000),
        ("ppo_afterstate", 1_000_000),
    }
    assert skipped == {"task rows without a match against greedy (in the task tables)": 8}


def test_the_iqm_is_exactly_rliables():
    metrics = pytest.importorskip("rliable.metrics")
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    for n in range(1, 13):
        x = rng.normal(size=(n, 3))
        assert sr.iqm(x) == pytest.approx(metrics.aggregate_iqm(x), abs=1e-12)


# ---------------------------------------------------------------- per task
def test_each_task_group_has_its_iqm_mean_normalized_and_corrected_score():
    pytest.importorskip("rliable")
    groups, _ = sr.task_runs(synthetic())
    s = {(a["task"], a["label"]): a for a in sr.summarize(groups, REPS, 0)}
    m = s[("versus-2p", f"{MPPO_NAME} @ 1M")]
    assert m["score"]["iqm"] == pytest.approx(1200)  # 1000, 1100, 1300, 1900: the middle two
    assert m["score"]["mean"] == pytest.approx(1325)
    assert m["normalized"]["iqm"] == pytest.approx(30)  # 10, 20, 40, 90
    assert m["corrected"]["iqm"] == pytest.approx(0.25)  # 0.1 .. 0.4
    lo, hi = m["score"]["iqm_ci95"]
    assert 1000 <= lo < 1200 < hi <= 1900 and m["interval"] == "runs" and m["runs"] == 4
    td = s[("versus-2p", "td @ 1M")]
    assert td["score"]["iqm"] == td["score"]["mean"] == pytest.approx(1620)  # three runs: nothing trimmed
    assert td["normalized"]["iqm"] == pytest.approx(72) and td["games"] == [400]
    greedy = s[("versus-2p", "greedy")]  # one run: its own intervals
    assert greedy["interval"] == "own" and greedy["score"]["iqm_ci95"] == [1470, 1530]
    assert greedy["corrected"]["iqm_ci95"] == [0.45, 0.55] and greedy["normalized"]["iqm_ci95"] is None
    solo = s[("solo", f"{MPPO_NAME} @ 1M")]
    assert (
        solo["score"]["iqm"] == 55.0 and solo["score"]["iqm_ci95"] == [53.0, 57.0] and solo["games"] == [500]
    )
    assert s[("field-3p", "td @ 1M")]["corrected"] is None


def test_the_aggregate_over_tasks_is_the_iqm_of_every_seed_and_task_run():
    pytest.importorskip("rliable")
    groups, _ = sr.task_runs(synthetic())
    agg, single = sr.over_tasks(groups, REPS, 0)
    a = {x["label"]: x for x in agg}
    assert list(a) == ["greedy", f"{MPPO_NAME} @ 1M", "td @ 1M"] and single == [f"{FLAT_NAME} @ 1M"]
    td = a["td @ 1M"]  # 62, 64, 66, 70, 72, 74: a quarter (1) cut at each end
    assert td["iqm"] == pytest.approx(68) and td["runs"] == 6 and td["tasks"] == ["versus-2p", "field-3p"]
    assert td["per_task"] == {"versus-2p": pytest.approx(72), "field-3p": pytest.approx(64)}
    assert td["iqm_ci95"][0] < 68 < td["iqm_ci95"][1]
    m = a[f"{MPPO_NAME} @ 1M"]  # 4 versus runs and 1 solo run: 10, 20, 40, 40, 90
    assert m["iqm"] == pytest.approx(100 / 3) and m["runs_per_task"] == {"versus-2p": 4, "solo": 1}
    assert m["iqm_ci95"][0] <= 100 / 3 <= m["iqm_ci95"][1]
    g = a["greedy"]  # one run a task: no spread to resample
    assert g["iqm"] == pytest.approx(65) and g["iqm_ci95"] is None and len(g["tasks"]) == 3


# ---------------------------------------------------------------- sample efficiency
def test_the_area_under_the_curve_is_the_mean_normalized_score_over_its_span():
    pts = [{"decisions": 250_000, "normalized": 40}, {"decisions": 500_000, "normalized": 55}]
    pts.append({"decisions": 1_000_000, "normalized": 70})
    assert sr.curve_area(pts) == pytest.approx((47.5 * 250_000 + 62.5 * 500_000) / 750_000)  # 57.5
    assert sr.curve_area(pts[:1]) is None
    assert sr.point_at(pts, 260_000) is pts[0] and sr.point_at(pts, 300_000) is None


def test_sample_efficiency_reads_the_curves_at_a_quarter_a_half_and_the_whole_budget():
    pytest.importorskip("rliable")
    groups, _ = sr.task_runs(synthetic())
    eff = {(e["task"], e["label"]): e for e in sr.sample_efficiency(groups, REPS, 0)}
    assert set(eff) == {("versus-2p", "td @ 1M"), ("field-3p", "td @ 1M"), ("solo", f"{MPPO_NAME} @ 1M")}
    td = eff[("versus-2p", "td @ 1M")]
    assert [m["decisions"] for m in td["marks"]] == [250_000, 500_000, 1_000_000]
    assert [m["normalized"] for m in td["marks"]] == pytest.approx([42, 57, 72])
    assert [m["score"] for m in td["marks"]] == pytest.approx([1420, 1520, 1620])
    assert td["areas"] == pytest.approx([57.5, 59.5, 61.5]) and td["area_iqm"] == pytest.approx(59.5)
    assert td["area_ci95"][0] < 59.5 < td["area_ci95"][1]
    solo = eff[("solo", f"{MPPO_NAME} @ 1M")]  # one run: its area, no interval
    assert (
        solo["area_iqm"] == pytest.approx((20 * 250_000 + 35 * 500_000) / 750_000)
        and solo["area_ci95"] is None
    )
    assert [m["score"] for m in solo["marks"]] == [40.0, 50.0, 55.0]


# ---------------------------------------------------------------- still to run
def test_still_to_run_lists_the_baseline_cells_without_a_row():
    rows = synthetic()
    missing = sr.still_to_run(rows)
    assert (
        len(missing) == 42 - 3 - 3 - 3 - 1 - 1
    )  # td versus and field-3p, maskable_ppo versus 0-2 and solo 0, ppo_flat 4p 0
    assert ("field-4p", "td", 0) in missing and ("versus-2p", "td", 0) not in missing
    assert ("solo", MPPO_NAME, 1) in missing and ("solo", MPPO_NAME, 0) not in missing
    assert ("field-4p", FLAT_NAME, 1) in missing  # stopped before its budget
    assert ("versus-2p", "ppo_afterstate", 0) in missing  # its old row has no rating
    assert not any(t == "solo" and learner in ("td", "ppo_afterstate") for t, learner, _ in missing)
    small = sr.Baseline(learners=(("td", "", ("versus-2p", "field-4p")),), seeds=(0, 5), steps=1_000_000)
    assert sr.still_to_run(rows, small) == [
        ("versus-2p", "td", 5),
        ("field-4p", "td", 0),
        ("field-4p", "td", 5),
    ]
    assert sr.still_to_run(rows, sr.Baseline((("td", "", ("versus-2p",)),), (0, 1), 1_000_000)) == []
    done = sr.suite_summary(rows, reps=REPS, baseline=sr.Baseline((("td", "", ("versus-2p",)),), (0, 1), 1_000_000))
    assert sr.still_to_run_table(done).startswith("**Baseline complete** — the baseline: td on versus-2p")
    assert sr.still_to_run_table(done).endswith("2 of 2 runs are in the file, none to run.")
    assert sr.still_to_run_table(sr.suite_summary(rows, reps=REPS, baseline=small)).startswith("**Still to run** — ")


# ---------------------------------------------------------------- the leaderboard
def test_the_leaderboard_is_deterministic_and_has_every_table():
    pytest.importorskip("rliable")
    text = sr.leaderboard_markdown(synthetic(), reps=REPS)
    assert text == sr.leaderboard_markdown(synthetic(), reps=REPS)
    for task in sr.TASKS:
        assert f"**{task}** — " in text
    td = next(line for line in text.splitlines() if line.startswith("| td | 1M | 0, 1, 2 | 400 | 1620 ("))
    assert [c.split(" (")[0] for c in td.strip("|").split(" | ")[4:]] == ["1620", "1620", "72.0", "68.0%"]
    assert (
        "| greedy | - | - | 400 | 1500 (1470–1530)* | 1500 (1470–1530)* | 60.0 | 50.0% (45.0–55.0)* |" in text
    )
    assert (
        "| td | 1M | 2 of 4 | 6 | 68.0 (" in text
        and f"On one task only (in its table above): {FLAT_NAME} @ 1M." in text
    )
    assert "| versus-2p | td | 1M | 0, 1, 2 | 42.0 · 57.0 · 72.0 | 1420 · 1520 · 1620 | 59.5 (" in text
    assert "11 of 42 runs are in the file, 31 to run:" in text
    assert (
        "| versus-2p | ppo_afterstate | 0, 1, 2 (rows from before the suite, without a rating: 0) |" in text
    )
    assert "| solo | maskable_ppo (score_reward=0.02,reroll=keep,obs=features) | 1, 2 |" in text
    assert "Left out: 1 row: stopped before its budget." in text
    assert "Not rated yet (run again under the suite's protocol to rate): ppo_afterstate @ 1M (seeds 0)." in text
    assert text != sr.leaderboard_markdown(synthetic(), reps=REPS, seed=1)  # the seed names the bootstrap
    empty = sr.leaderboard_markdown([], reps=REPS)
    assert "No rows yet." in empty and "0 of 42 runs are in the file, 42 to run:" in empty


def test_write_leaderboard_replaces_the_block_between_the_markers(tmp_path):
    pytest.importorskip("rliable")
    doc = tmp_path / "doc.md"
    doc.write_text(DOC, encoding="utf-8")
    doc.chmod(0o644)
    assert sr.write_leaderboard(synthetic(), doc, reps=REPS) is True
    text = doc.read_text(encoding="utf-8")
    board = sr.leaderboard_markdown(synthetic(), reps=REPS)
    assert text == DOC.replace("stale table", f"\n{board}\n")
    assert text.startswith("# Results\n\nprose above\n\n<!-- leaderboard:start -->\n\n")
    assert text.endswith("\n\n<!-- leaderboard:end -->\n\nprose below\n")
    assert doc.stat().st_mode & 0o777 == 0o644 and [p.name for p in tmp_path.iterdir()] == ["doc.md"]
    assert sr.write_leaderboard(synthetic(), doc, reps=REPS) is False  # the same rows: the same block
    assert sr.check_leaderboard(synthetic(), doc, reps=REPS) is None
    fewer = synthetic()[:-4]
    assert "differs" in sr.check_leaderboard(fewer, doc, reps=REPS)
    assert sr.write_leaderboard(fewer, doc, reps=REPS) is True
    assert sr.check_leaderboard(fewer, doc, reps=REPS) is None and doc.read_text().endswith("prose below\n")


@pytest.mark.parametrize(
    "text, message",
    [
        ("# no block\n", "needs exactly one line <!-- leaderboard:start -->"),
        ("<!-- leaderboard:start -->\nx\n", "(1 <!-- leaderboard:start --> and 0 <!-- leaderboard:end -->"),
        (DOC + DOC, "(2 <!-- leaderboard:start --> and 2"),
        ("<!-- leaderboard:end -->\nx\n<!-- leaderboard:start -->\n", "comes before"),
    ],
)
def test_a_file_without_one_well_formed_block_is_refused_and_left_alone(tmp_path, text, message):
    doc = tmp_path / "doc.md"
    doc.write_text(text, encoding="utf-8")
    with pytest.raises(sr.LeaderboardError) as err:
        sr.write_leaderboard(synthetic(), doc, reps=REPS)
    assert str(err.value).startswith(f"{doc}: ") and message in str(err.value)
    with pytest.raises(sr.LeaderboardError):
        sr.check_leaderboard(synthetic(), doc, reps=REPS)
    assert doc.read_text(encoding="utf-8") == text and [p.name for p in tmp_path.iterdir()] == ["doc.md"]


# ---------------------------------------------------------------- shelfie bench report
def test_the_report_prints_the_task_tables_and_writes_them_to_json(tmp_path, capsys):
    pytest.importorskip("rliable")
    results = write(tmp_path / "r.json", synthetic())
    out = tmp_path / "report.json"
    assert report.main([str(results), "--reps", str(REPS), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Luck-corrected score rate against greedy")  # the versus table first, as before
    assert "| td | 1M | 0, 1, 2 | 400 | 68.0% (" in text
    assert "**field-3p** — " in text and "**Over tasks** — " in text and "**Still to run** — " in text
    data = json.loads(out.read_text())
    assert {a["label"] for a in data["suite"]["over_tasks"]} == {"greedy", f"{MPPO_NAME} @ 1M", "td @ 1M"}
    only_field = write(tmp_path / "f.json", [r for r in synthetic() if r.get("task") == "field-3p"])
    assert report.main([str(only_field), "--reps", str(REPS)]) == 0  # no versus rows: the task tables alone
    text = capsys.readouterr().out
    assert text.startswith("Task scores on the test deals") and "| td | 1M | 0, 1, 2 | 400 | 1520 (" in text


def test_a_file_without_task_rows_prints_no_task_tables(tmp_path, capsys):
    pytest.importorskip("rliable")
    assert report.main([str(write(tmp_path / "r.json", [old_row("td", 0, 0.6)])), "--reps", "50"]) == 0
    assert "**versus-2p**" not in capsys.readouterr().out


def test_leaderboard_and_check_leaderboard_options(tmp_path, capsys):
    pytest.importorskip("rliable")
    results = write(tmp_path / "r.json", synthetic())
    doc = tmp_path / "doc.md"
    doc.write_text(DOC, encoding="utf-8")
    base = [str(results), "--reps", str(REPS)]
    assert report.main([*base, "--check-leaderboard", str(doc)]) == 1
    assert "the leaderboard block differs" in capsys.readouterr().err
    assert report.main([*base, "--leaderboard", str(doc)]) == 0
    assert f"leaderboard written to {doc}" in capsys.readouterr().out
    assert doc.read_text() == DOC.replace("stale table", f"\n{sr.leaderboard_markdown(synthetic(), REPS)}\n")
    assert report.main([*base, "--check-leaderboard", str(doc)]) == 0
    assert "up to date" in capsys.readouterr().out
    assert report.main([*base, "--seed", "1", "--check-leaderboard", str(doc)]) == 1  # another bootstrap
    capsys.readouterr()
    doc.write_text(doc.read_text().replace("| td | 1M | 0, 1, 2 |", "| td | 1M | 0, 1 |", 1))
    assert report.main([*base, "--check-leaderboard", str(doc)]) == 1
    err = capsys.readouterr().err
    assert "-| td | 1M | 0, 1 |" in err and f"--leaderboard {doc}" in err
    bare = tmp_path / "bare.md"
    bare.write_text("# no block\n")
    assert report.main([*base, "--leaderboard", str(bare)]) == 2
    assert "needs exactly one line <!-- leaderboard:start -->" in capsys.readouterr().err
    assert bare.read_text() == "# no block\n"
    assert report.main([*base, "--check-leaderboard", str(bare)]) == 2
    with pytest.raises(SystemExit):
        report.main([*base, "--leaderboard", str(doc), "--check-leaderboard", str(doc)])


def test_a_row_normalized_between_other_ratings_is_normalized_again_between_the_fixed_ends():
    low, high = ladder_ends(3)
    mid = (low + high) / 2
    r = task_row("field-3p", "td", 0, mid, 12.0, curve=[(500_000, low, 3.0), (1_000_000, mid, 12.0)])
    assert sr.normalized_now(r) is r  # written without ends: kept as it is
    r["normalized_between"] = [874.9, 1612.4]
    now = sr.normalized_now(r)
    assert now["normalized"] == pytest.approx(50.0) and now["normalized_between"] == [low, high]
    assert [p["normalized"] for p in now["rating_curve"]] == pytest.approx([0.0, 50.0])
    assert r["normalized"] == 12.0  # the row itself is not changed
    r["normalized_between"] = [low, high]
    assert sr.normalized_now(r) is r


def test_a_solo_row_written_on_another_scale_is_normalized_between_random_and_the_optimum():
    from shelfie_env.arena.solo_score import normalized_solo, solo_scale

    row = task_row("solo", "maskable_ppo", 0, 160.0, 91.0, variant=MPPO, curve=[(1_000_000, 160.0, 91.0)])
    row["normalized_between"] = [45.604, 171.668]  # random's and planner's means: the scale before E*
    now = sr.normalized_now(row)
    assert now["normalized"] == pytest.approx(normalized_solo(160.0), abs=0.01)
    assert now["normalized"] < 91.0
    assert now["rating_curve"][0]["normalized"] == now["normalized"]
    assert now["normalized_between"] == [round(x, 6) for x in solo_scale()]
    assert sr.normalized_now(now) is now  # already on today's scale: left as it is
    assert sr.normalized_now(task_row("solo", "greedy", None, 70.0, 80.0))["normalized"] == 80.0  # no scale named
