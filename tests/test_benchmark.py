"""The RL benchmark (``shelfie bench``): its options, its results file, the rliable report and the own-learner
example."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shelfie_env.arena import aggregate as report
from shelfie_env.arena import results_file
from shelfie_env.arena import rows as row_protocol
from shelfie_env.benchmark import cli, tasks

ROOT = Path(__file__).resolve().parents[1]


def side(rate: float) -> dict:
    return {"score_rate": rate, "ci95": [rate - 0.05, rate + 0.05], "mean_reward": 2 * rate - 1}


def row(learner: str, steps: int, seed: int | None, rate: float, **over) -> dict:
    """A luck-aware row whose corrected score rate against greedy is ``rate``."""
    r = {
        "learner": learner,
        "seed": seed,
        "steps": steps,
        "decisions": steps,
        "train_s": 10.0 if steps else 0.0,
        "mode": "masked" if steps else "bot",
        "protocol": row_protocol.PROTOCOL,
        "eval": {"deals": "test", "first_seed": 30_000_000, "duplicate": True, "luck": "td+planner"},
        "vs_greedy": {
            "games": 20,
            "deals": 10,
            "raw": side(rate - 0.01),
            "corrected": side(rate),
            "variance_ratio": 2.0,
            "wins": 0,
            "ties": 0,
            "losses": 20,
            "win_rate": rate,
            "win_ci95": [0.0, 1.0],
        },
    }
    r.update(over)
    return r


A_1M = [
    0.0,
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    1.0,
]  # IQM: the middle four, (0.2+0.3+0.4+0.5)/4 = 0.35; mean 0.3875


def write(path: Path, rows: list[dict], **top) -> Path:
    path.write_text(json.dumps({"rows": rows, **top}))
    return path


@pytest.fixture
def results(tmp_path):
    rows = [row("a", 1_000_000, s, v) for s, v in reversed(list(enumerate(A_1M)))]
    rows += [row("a", 10_000_000, s, 0.6 + 0.1 * s) for s in range(3)]
    rows += [row("b", 1_000_000, s, 0.2) for s in range(3)]
    rows.append(row("greedy", 0, None, 0.5))
    rows.append(row("a", 1_000_000, 9, 0.99, mode="raw"))  # a copy of a masked row: left out
    rows.append(row("a", 1_000_000, 10, 0.99, eval={"deals": "selection"}))  # other deals: left out
    old = {k: v for k, v in row("a", 1_000_000, 11, 0.99).items() if k not in ("protocol", "eval")}
    rows.append({**old, "vs_greedy": {"games": 1000, "win_rate": 0.99, "ci95": [0.9, 1.0]}})  # plain arena
    return write(tmp_path / "results.json", rows, protocol={"eval_seeds": "20000000.."})


# ---------------------------------------------------------------- options
@pytest.mark.parametrize(
    ("text", "value"),
    [("5000", 5000), ("1_000_000", 1_000_000), ("200k", 200_000), ("1M", 10**6), ("2.5M", 2_500_000)],
)
def test_a_budget_reads_plain_and_suffixed_numbers(text, value):
    assert tasks.budget(text) == value


@pytest.mark.parametrize("text", ["0", "-5", "abc", "1.5", "1G", ""])
def test_a_bad_budget_is_refused_with_the_forms_it_takes(text):
    with pytest.raises(argparse.ArgumentTypeError):
        tasks.budget(text)


def test_budget_labels():
    assert [row_protocol.budget_label(s) for s in (0, 5000, 200_000, 1_000_000, 10**7, 2_500_000, 1234)] == [
        "-",
        "5k",
        "200k",
        "1M",
        "10M",
        "2.5M",
        "1,234",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--algos", "dqn"], "argument --algos: invalid choice: 'dqn'"),
        (["--steps", "lots"], "argument --steps: expected learner decisions such as 200000, 200k or 1M"),
        (["--steps", "0"], "argument --steps: must be a positive whole number"),
        (["--eval-games", "7"], "--eval-games must be a positive even number"),
        (["--opponents", "planner"], "--opponents must include greedy"),
        (["--bots", "alphazero"], "argument --bots: invalid choice: 'alphazero'"),
        (["--deals", "train"], "--deals: deals must be"),
        (["--mcts-simulations", "0"], "--mcts-simulations must be positive"),
        (["--curve-every", "-1"], "--curve-every and --curve-games must be >= 0"),
    ],
)
def test_bad_bench_options_are_usage_errors_not_tracebacks(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_bench_learners_and_the_report_options():
    assert "ppo_afterstate" in cli.LEARNERS and "ppo_flat" in cli.LEARNERS and "openspiel-mcts" in cli.BOTS
    args = tasks.parse_args(cli.build_parser(), ["--steps", "1M", "--bots"])
    assert args.steps == 1_000_000 and args.bots == [] and args.seeds == [0, 1, 2]
    assert args.opponents == ["greedy", "planner"] and args.deals == "test"


# ---------------------------------------------------------------- results file
def test_rows_merge_into_the_results_file_and_keep_older_protocol_rows(results):
    new = row("a", 1_000_000, 0, 0.45)
    del new["protocol"]
    results_file.add_rows(results, [new])
    data = results_file.load_results(results)
    a0 = [
        r
        for r in data["rows"]
        if (r["learner"], r["steps"], r["seed"], r["mode"]) == ("a", 1_000_000, 0, "masked")
    ]
    assert [r["vs_greedy"]["corrected"]["score_rate"] for r in a0] == [0.45]  # replaced, not doubled
    assert any(r["protocol"] == row_protocol.PLAIN for r in data["rows"])  # the plain-arena row stays
    assert row_protocol.PROTOCOL in data["protocols"] and row_protocol.PLAIN in data["protocols"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "not a JSON file"),
        ("[1, 2]", 'expected a JSON object with a "rows" list'),
        ('{"rows": [{"learner": "a", "seed": 0, "steps": 5}]}', "row 0: missing mode"),
        (
            '{"rows": [{"learner": "a", "seed": 0, "steps": "1M", "mode": "masked"}]}',
            "steps must be a whole number",
        ),
        (
            '{"rows": [{"learner": "a", "seed": "x", "steps": 5, "mode": "masked"}]}',
            "seed must be an integer",
        ),
        (
            '{"rows": [{"learner": "a", "seed": 0, "steps": 5, "mode": "masked", "protocol": "duplicate-luck"}]}',
            "needs vs_greedy with raw and corrected score rates",
        ),
    ],
)
def test_a_bad_results_file_is_named_with_what_is_wrong(tmp_path, content, message, capsys):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(results_file.ResultsFileError, match=message):
        results_file.load_results(path)
    assert report.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"shelfie bench report: {path}") and message in err


def test_a_file_of_plain_arena_rows_alone_has_nothing_to_aggregate(tmp_path, capsys):
    data = json.loads((ROOT / "docs" / "benchmark_results.json").read_text())
    data["rows"] = [r for r in data["rows"] if r["protocol"] == "plain-arena"]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(data))
    assert report.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert "no duplicate-luck rows on the test deals" in err and "plain-arena protocol" in err


def test_the_documented_results_aggregate_by_learner_and_budget(capsys):
    assert report.main([str(ROOT / "docs" / "benchmark_results.json")]) == 0
    out = capsys.readouterr().out
    for learner in ("maskable_ppo", "a2c", "td", "ppo_afterstate", "rllib_ppo"):
        assert f"| {learner} | 1M | 0, 1, 2 |" in out


# ---------------------------------------------------------------- report
def test_rows_are_grouped_by_learner_and_budget_across_seeds(results):
    groups, skipped = report.runs(results_file.load_results(results))
    assert list(groups) == [("greedy", 0), ("a", 1_000_000), ("a", 10_000_000), ("b", 1_000_000)]
    assert [r["seed"] for r in groups[("a", 1_000_000)]] == list(range(8))
    assert [r["seed"] for r in groups[("a", 10_000_000)]] == [0, 1, 2]
    assert skipped == {
        "plain-arena protocol (Wilson win rates), not aggregated": 1,
        "raw-mode copy of a masked row": 1,
        "evaluated on other deals than test": 1,
    }
    sel, _ = report.runs(results_file.load_results(results), deals="selection")
    assert list(sel) == [("a", 1_000_000)] and sel[("a", 1_000_000)][0]["seed"] == 10


def test_the_iqm_is_the_mean_of_the_middle_half_of_the_runs(results):
    pytest.importorskip("rliable")
    groups, _ = report.runs(results_file.load_results(results))
    agg = {a["label"]: a for a in report.aggregate(groups, reps=500, seed=0)}
    a = agg["a @ 1M"]
    assert a["iqm"] == pytest.approx(0.35) and a["mean"] == pytest.approx(0.3875)
    assert a["iqm_ci95"][0] <= 0.35 <= a["iqm_ci95"][1] and a["iqm_ci95"][0] < a["iqm_ci95"][1]
    assert a["runs"] == 8 and a["seeds"] == list(range(8))
    assert a["raw_mean"] == pytest.approx(0.3875 - 0.01) and a["decisions_per_s"] == pytest.approx(100_000)
    assert agg["a @ 10M"]["iqm"] == pytest.approx(0.7)  # three runs: nothing trimmed
    assert agg["greedy"]["iqm"] == 0.5 and agg["greedy"]["iqm_ci95"] == [
        0.45,
        0.55,
    ]  # one run: its own interval
    assert agg["greedy"]["interval"] == "deals" and agg["a @ 1M"]["interval"] == "runs"
    again = {x["label"]: x for x in report.aggregate(groups, reps=500, seed=0)}
    assert again["a @ 1M"]["iqm_ci95"] == a["iqm_ci95"]  # seeded bootstrap


def test_the_report_prints_markdown_and_writes_profiles(results, tmp_path, capsys):
    pytest.importorskip("rliable")
    out = tmp_path / "report"
    argv = [
        str(results),
        "--reps",
        "200",
        "--markdown",
        f"{out}.md",
        "--json",
        f"{out}.json",
        "--plot",
        f"{out}.png",
    ]
    assert report.main(argv) == 0
    text = capsys.readouterr().out
    assert "| a | 1M | 0, 1, 2, 3, 4, 5, 6, 7 | 20 | 35.0% (" in text
    assert "| b | 1M | 0, 1, 2 | 20 | 20.0% (20.0–20.0) |" in text
    assert "| greedy | - | - | 20 | 50.0% (45.0–55.0)* | 50.0% (45.0–55.0)* |" in text
    assert "Left out: 1 row: plain-arena protocol" in text
    assert Path(f"{out}.md").read_text().startswith("Luck-corrected score rate against greedy")
    data = json.loads(Path(f"{out}.json").read_text())
    taus = np.array(data["profiles"]["taus"])
    frac = np.array(data["profiles"]["a @ 1M"]["fraction"])
    assert frac[taus == 0.5][0] == pytest.approx(2 / 8)  # runs above 0.5: 0.6 and 1.0
    assert Path(f"{out}.png").stat().st_size > 0


def test_a_one_seed_row_shows_its_own_interval_and_every_group_its_games(tmp_path, capsys):
    pytest.importorskip("rliable")
    rows = [row("c", 1_000_000, 0, 0.101, vs_greedy={**row("c", 1, 0, 0.101)["vs_greedy"], "games": 200})]
    rows[0]["vs_greedy"]["corrected"]["ci95"] = [0.072, 0.130]
    rows += [row("d", 1_000_000, s, 0.3) for s in range(2)]
    rows[-1]["vs_greedy"] = {**rows[-1]["vs_greedy"], "games": 400}
    assert report.main([str(write(tmp_path / "r.json", rows)), "--reps", "100"]) == 0
    text = capsys.readouterr().out
    assert "| c | 1M | 0 | 200 | 10.1% (7.2–13.0)* | 10.1% (7.2–13.0)* |" in text
    assert "| d | 1M | 0, 1 | 20 / 400 | 30.0% (30.0–30.0) |" in text


def test_the_mean_curve_averages_the_seeds_point_by_point_as_far_as_every_run_goes():
    def curve(*wins):
        return [
            {"decisions": 100 * (i + 1), "train_s": 10.0 * (i + 1), "score_rate": w} for i, w in enumerate(wins)
        ]

    rows = [
        row("a", 1_000_000, 0, 0.5, curve=curve(0.2, 0.4, 0.6)),
        row("a", 1_000_000, 1, 0.5, curve=curve(0.4, 0.6)),
        row("a", 1_000_000, 2, 0.5, curve=[]),
    ]
    assert report.mean_curve(rows) == [(100.0, 10.0, pytest.approx(0.3)), (200.0, 20.0, pytest.approx(0.5))]
    assert report.mean_curve(rows[2:]) == []


def test_the_report_draws_the_curves_of_the_runs_that_have_them(results, tmp_path, capsys):
    pytest.importorskip("rliable")
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    assert report.main([str(results), "--reps", "50", "--curves", str(png)]) == 0
    assert "no curves written: no row of the report recorded a learning curve" in capsys.readouterr().out
    assert not png.exists()
    data = json.loads(results.read_text())
    for r in (r for r in data["rows"] if r["steps"]):  # the learners'; a bot has no curve
        r["curve"] = [
            {"decisions": 1000, "train_s": 5.0, "score_rate": 0.1},
            {"decisions": 2000, "train_s": 9.0, "score_rate": 0.3},
        ]
    results.write_text(json.dumps(data))
    assert report.main([str(results), "--reps", "50", "--curves", str(png)]) == 0
    assert f"learning curves of 3 learner/budget group(s) written to {png}" in capsys.readouterr().out
    assert png.stat().st_size > 0


@pytest.mark.slow
def test_the_own_learner_example_adds_a_row_the_report_reads(tmp_path, capsys):
    """With ``--workers 2`` (processes that import the script): the row, with its task, in both tables."""
    pytest.importorskip("rliable")
    from shelfie_env.arena.suite_report import task_runs

    out = tmp_path / "results.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "docs/examples/my_learner.py", "--steps", "200", "--seeds", "3"]
    cmd += ["--eval-games", "4", "--opponents", "greedy", "--rate-games", "50", "--workers", "2", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("my_reinforce seed 3: ") == 1  # trained once: the workers did not train
    groups, _ = report.runs(results_file.load_results(out))
    (mine,) = groups[("my_reinforce", 200)]
    assert mine["seed"] == 3 and mine["vs_greedy"]["games"] == 4 and mine["eval"]["deals"] == "test"
    assert (mine["task"], mine["players"], mine["rating"]["games"]) == ("versus-2p", 2, 50)
    tasks_groups, _ = task_runs(results_file.load_results(out)["rows"])
    assert [g for g in tasks_groups if g[0] == "versus-2p" and g[2] == 200] == [("versus-2p", "my_reinforce", 200)]
    assert report.main([str(out), "--reps", "100"]) == 0
    assert "| my_reinforce | 200 | 3 |" in capsys.readouterr().out


def test_the_own_learner_example_trains_nothing_when_a_worker_imports_it(monkeypatch):
    """A ``spawn`` worker runs the script as ``__mp_main__``: it defines ``act`` (what the evaluation's
    pickled bot names) and neither parses the command line nor trains."""
    import runpy

    from shelfie_env import benchmark

    monkeypatch.setattr(benchmark, "train_vec_env", lambda *a, **k: pytest.fail("a worker trained"))
    monkeypatch.setattr(sys, "argv", ["worker", "--no-such-option"])
    space = runpy.run_path(str(ROOT / "docs" / "examples" / "my_learner.py"), run_name="__mp_main__")
    assert callable(space["act"]) and callable(space["main"])


def test_the_own_learner_parser_refuses_a_rating_smaller_than_a_batch(capsys):
    with pytest.raises(SystemExit):
        tasks.parse_args(tasks.parser("my_learner.py"), ["--rate-games", "20"])
    assert "--rate-games must be at least one batch of the rating, 50; got 20" in capsys.readouterr().err


# ---------------------------------------------------------------- the guide
GUIDE = ROOT / "docs" / "benchmark.md"


def test_the_guide_shows_the_example_file_as_it_is():
    example = (ROOT / "docs" / "examples" / "my_learner.py").read_text(encoding="utf-8")
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## Put your own algorithm in the table", 1)[1]
    block = section.split("```python no-run\n", 1)[1].split("```", 1)[0]
    assert block == example


def guide_commands(program: str) -> list[list[str]]:
    """The ``.venv/bin/shelfie bench ...`` (``program`` "bench"), ``... bench report`` or
    ``.venv/bin/python docs/examples/<program>`` command lines of the guide's shell blocks, as argument lists."""
    import shlex

    text = GUIDE.read_text(encoding="utf-8").replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        if not line.startswith(".venv/bin/"):
            continue
        words = shlex.split(line, comments=True)
        if program == "bench report" and words[:3] == [".venv/bin/shelfie", "bench", "report"]:
            out.append(words[3:])
        elif program == "bench" and words[:2] == [".venv/bin/shelfie", "bench"] and words[2:3] != ["report"]:
            out.append(words[2:])
        elif words[:2] == [".venv/bin/python", f"docs/examples/{program}"]:
            out.append(words[2:])
    return out


def test_the_guide_commands_parse():
    algos = guide_commands("bench")
    reports = guide_commands("bench report")
    mine = guide_commands("my_learner.py")
    assert len(algos) >= 3 and len(reports) >= 2 and len(mine) >= 1
    for argv in algos:
        args = cli.build_parser().parse_args(argv)
        tasks.check_args(args._parser, args, argv, train_only=True)
        cli.check_settings(args._parser, args)
    for argv in reports:
        report.build_parser().parse_args(argv)
    for argv in mine:
        tasks.parse_args(tasks.parser("my_learner.py"), argv)
