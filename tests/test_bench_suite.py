"""The benchmark suite: its tasks, the task score of a row, the rating curve and ``shelfie bench rate``."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from shelfie_env.arena.results_file import add_rows, load_results
from shelfie_env.arena.rows import Curve, task_row
from shelfie_env.arena.task_score import ladder_ends, normalized_rating
from shelfie_env.benchmark import suite
from shelfie_env.benchmark.cli import main as bench_main
from shelfie_env.benchmark.learners import TASKS_OF, check_task
from shelfie_env.bots import make


def test_four_tasks_listed(tmp_path, capsys):
    out = tmp_path / "tasks.json"
    assert bench_main(["tasks", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    for name in ("versus-2p", "field-3p", "field-4p", "solo"):
        assert f"| {name} |" in text
    tasks = json.loads(out.read_text())
    assert [t["task"] for t in tasks] == list(suite.TASKS)
    assert {t["task"]: t["players"] for t in tasks} == {"versus-2p": 2, "field-3p": 3, "field-4p": 4, "solo": 1}
    assert {t["task"]: t["env_id"] for t in tasks}["solo"] == "shelfie/Solo-v0"
    assert all(t["learners"] for t in tasks)


def test_unknown_task_and_learner_that_does_not_fit():
    with pytest.raises(ValueError, match="the tasks are versus-2p, field-3p, field-4p, solo"):
        suite.task("field-5p")
    with pytest.raises(ValueError, match="td does not train on solo .*a solo game has none"):
        check_task("td", "solo")
    with pytest.raises(ValueError, match="a2c does not train on field-3p; it trains on versus-2p"):
        check_task("a2c", "field-3p")
    for learner in suite.BASELINES:
        assert "versus-2p" in TASKS_OF[learner]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task", "solo", "--algos", "td"], "--task solo: td does not train on solo"),
        (["--task", "field-3p", "--algos", "ppo_flat", "--curve-every", "1000"], "--curve-every"),
        (["--task", "field-4p", "--algos", "--bots", "openspiel-mcts"], "openspiel-mcts plays 2 players only"),
        (["--task", "field-3p", "--algos", "td", "--rate-games", "0"], "--rate-games must be positive"),
    ],
)
def test_bench_refuses_what_does_not_fit_the_task(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        bench_main([*argv, "--out", str(tmp_path / "r.json")])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_normalized_rating_ends():
    for players in (2, 3, 4):
        low, high = ladder_ends(players)
        assert low < high
        assert normalized_rating(low, players) == pytest.approx(0.0)
        assert normalized_rating(high, players) == pytest.approx(100.0)


def test_rows_of_two_tasks_are_kept_apart(tmp_path):
    out = tmp_path / "r.json"
    base = {"learner": "td", "seed": 0, "steps": 1000, "mode": "masked", "protocol": "task-score"}
    add_rows(out, [{**base, "task": "field-3p", "normalized": 1.0}])
    add_rows(out, [{**base, "task": "field-4p", "normalized": 2.0}])
    add_rows(out, [{**base, "task": "field-3p", "normalized": 3.0}])
    rows = load_results(out)["rows"]
    assert sorted((r["task"], r["normalized"]) for r in rows) == [("field-3p", 3.0), ("field-4p", 2.0)]


def test_rating_curve_points_at_marks_and_through_a_checkpoint():
    curve = Curve(0, 0, rating_marks=(100, 200), players=1)
    assert curve.next == 100 and not curve.due(99) and curve.due(100)
    greedy = make("greedy")
    curve.add(150, greedy)
    assert [p["decisions"] for p in curve.ratings] == [150] and curve.next == 200
    again = Curve(0, 0, rating_marks=(100, 200), players=1)
    again.load_state(json.loads(json.dumps(curve.state())))
    assert again.ratings == curve.ratings and again.next == 200
    point = curve.ratings[0]
    assert {"mean", "ci95", "games", "normalized", "train_s"} <= set(point)
    assert point["normalized"] > 50  # greedy is far above random on solo


def test_task_row_on_solo_ends_its_curve_with_the_final_score():
    class Args:
        steps, rate_games, command = 1000, 30, "test"

    row = task_row("greedy", Args(), "solo", 1, learner="greedy", seed=0, train_s=1.0, decisions=1000,
                   rating_curve=[{"decisions": 500, "mean": 1.0, "normalized": 0.0}])
    assert row["task"] == "solo" and row["players"] == 1 and row["protocol"] == "task-score"
    assert row["solo"]["games"] == 30
    assert row["rating_curve"][-1]["decisions"] == 1000
    assert row["rating_curve"][-1]["normalized"] == row["normalized"]


def _agent_module(tmp_path, monkeypatch, body: str) -> str:
    (tmp_path / "my_agents.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_agents", None)
    return "my_agents"


def test_bench_rate_an_imported_agent_writes_a_task_row(tmp_path, monkeypatch, capsys):
    mod = _agent_module(tmp_path, monkeypatch, """
        from shelfie_env.bots import make

        _greedy = make("greedy")

        def act(state):
            return _greedy.act(state)

        class Agent:
            def act(self, state):
                return _greedy.act(state)
        """)
    out = tmp_path / "r.json"
    assert bench_main(["rate", "--task", "solo", "--agent", f"{mod}:act", "--name", "mine", "--games", "20",
                       "--out", str(out)]) == 0
    assert bench_main(["rate", "--task", "solo", "--agent", f"{mod}:Agent", "--name", "mine-class",
                       "--steps", "1M", "--games", "20", "--out", str(out)]) == 0
    rows = {r["learner"]: r for r in load_results(out)["rows"]}
    assert rows["mine"]["task"] == "solo" and rows["mine"]["seed"] is None and rows["mine"]["mode"] == "agent"
    assert rows["mine"]["solo"]["mean"] == rows["mine-class"]["solo"]["mean"]  # the same play, the same deals
    assert rows["mine-class"]["steps"] == 1_000_000 and rows["mine-class"]["seed"] == 0
    assert "row merged into" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("no_such_module_xyz:act", "cannot import no_such_module_xyz"),
        ("my_agents:missing", "has no attribute 'missing'"),
        ("my_agents:NUMBER", "has no act(state) and is not a function"),
        ("missing_model.npz", "no such model file"),
        ("level-9", "unknown level"),
        (":act", "expected module:attr"),
    ],
)
def test_bench_rate_refuses_an_agent_it_cannot_load(agent, message, tmp_path, monkeypatch, capsys):
    _agent_module(tmp_path, monkeypatch, "NUMBER = 3\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit) as exc:
        bench_main(["rate", "--task", "solo", "--agent", agent, "--out", str(out)])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_bench_rate_refuses_a_model_of_another_table_size(capsys, tmp_path):
    from shelfie_env.bots.learned.card import models_dir

    with pytest.raises(SystemExit):
        bench_main(["rate", "--task", "field-4p", "--agent", str(models_dir() / "td_2p.npz"),
                    "--out", str(tmp_path / "r.json")])
    assert "trained for 2 player(s), not 4" in capsys.readouterr().err


def test_bench_rate_takes_a_bot_spec_naming_a_model_file_as_a_spec(capsys, tmp_path):
    """``td:path=...npz`` is a bot spec (its option names the file), not a model file called so."""
    from shelfie_env.benchmark.agent_row import load_agent
    from shelfie_env.bots.learned.card import models_dir

    spec = f"td:path={models_dir() / 'td_4p.npz'}"
    assert load_agent(spec, 4) == spec
    out = tmp_path / "r.json"
    assert bench_main(["rate", "--task", "field-4p", "--agent", f"td:path={models_dir() / 'td_2p.npz'}",
                       "--games", "48", "--out", str(out)]) == 2
    assert "this model plays 2-player games, the game has 4" in capsys.readouterr().err
    assert not out.exists()


def test_bench_rate_refuses_fewer_games_than_a_batch_and_cuts_a_long_error(tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit):
        bench_main(["rate", "--task", "field-4p", "--agent", "greedy", "--games", "8", "--out", str(tmp_path / "r.json")])
    assert "--games must be at least one batch of the rating, 48 at 4 players; got 8" in capsys.readouterr().err
    mod = _agent_module(tmp_path, monkeypatch, "import json\n\ndef act(state):\n    return json.dumps(state)\n")
    assert bench_main(["rate", "--task", "solo", "--agent", f"{mod}:act", "--games", "5",
                       "--out", str(tmp_path / "r.json")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "not an action id" in line and "…" in line and len(line) < 300


def test_bench_rate_an_agent_that_plays_illegal_moves(tmp_path, monkeypatch, capsys):
    mod = _agent_module(tmp_path, monkeypatch, "def act(state):\n    return 119\n")
    out = tmp_path / "r.json"
    assert bench_main(["rate", "--task", "solo", "--agent", f"{mod}:act", "--games", "5",
                       "--out", str(out)]) == 2
    assert "illegal" in capsys.readouterr().err
    assert not out.exists()


def test_rate_goes_below_the_first_level_to_random(monkeypatch):
    from shelfie_env.arena import rate_agent

    met = []

    def batch(policy, level, players, first_deal, deals, workers, name):
        met.append(level)
        return 0.005, 0.01, deals * players

    monkeypatch.setattr(rate_agent, "_batch", batch)
    r = rate_agent.rate("greedy", players=2, games=150)  # a stand-in that scores 0.5 % against anything
    assert met[0] == "level-4" and met[1:] == ["random", "random"]
    assert r.level == "level-1" and r.rating < ladder_ends(2)[0]
    assert "lowest rung" in r.note
    met.clear()
    rate_agent.rate("random", players=2, games=150)  # random itself: rated on the rungs above it
    assert met and "random" not in met
    met.clear()
    # a seeded random bot object named "random", as shelfie bench's reference rows pass it
    rate_agent.rate(make("random", seed=1), players=2, games=150, name="random")
    assert met and "random" not in met


def test_bench_gives_a_reference_bot_that_is_an_opponent_its_task_score_alone(monkeypatch, tmp_path):
    """``shelfie bench``'s default reference bots include ``greedy``: it is not played against itself."""
    import shelfie_env.arena.rows as rows_module
    from shelfie_env.benchmark import cli

    asked = []

    def fake_task_row(bot, args, task, players, *, learner, **kw):
        asked.append((learner, args.eval_games, tuple(args.opponents)))
        return {"learner": learner}

    monkeypatch.setattr(rows_module, "task_row", fake_task_row)
    monkeypatch.setattr("shelfie_env.arena.results_file.add_rows", lambda out, rows: None)
    args = cli.build_parser().parse_args(["--steps", "1k", "--algos", "ppo_flat", "--opponents", "greedy", "planner",
                                          "--eval-games", "40", "--out", str(tmp_path / "r.json")])
    args.algos = []
    cli.train_and_rate(args, [("random", make("random")), ("greedy", make("greedy"))], {})
    assert asked == [("random", 40, ("greedy", "planner")), ("greedy", 0, ("greedy", "planner"))]


def test_the_report_expects_the_cells_the_runner_runs():
    import importlib.util
    from pathlib import Path

    from shelfie_env.arena.suite_report import BASELINE

    path = Path(__file__).resolve().parents[1] / "scripts" / "bench_suite.py"
    spec = importlib.util.spec_from_file_location("bench_suite", path)
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    ran = {runner.cell_key(learner, t, seed)[:4] for t, learner, seed in suite.baseline_cells()}
    assert ran == set(BASELINE.cells())
    assert {runner.cell_key("td", "versus-2p", 0)[4]} == {BASELINE.steps}


def test_the_leaderboard_in_the_docs_is_the_results_file_s():
    from pathlib import Path

    from shelfie_env.arena.suite_report import check_leaderboard

    root = Path(__file__).resolve().parents[1]
    rows = load_results(root / "docs" / "benchmark_results.json")["rows"]
    assert check_leaderboard(rows, root / "docs" / "benchmark.md") is None


@pytest.mark.parametrize(
    ("task", "algo", "players"),
    [("field-3p", "ppo_flat", 3), ("solo", "ppo_flat", 1), ("field-4p", "td", 4), ("solo", "maskable_ppo", 1)],
)
def test_a_learner_trains_at_the_task_s_table_size(task, algo, players, tmp_path):
    out = tmp_path / "r.json"
    assert bench_main(["--task", task, "--algos", algo, "--steps", "2000", "--seeds", "0", "--bots",
                       "--eval-games", "0", "--out", str(out), "--run-dir", str(tmp_path / "runs")]) == 0
    (row,) = load_results(out)["rows"]
    assert (row["task"], row["players"], row["mode"]) == (task, players, "stopped")
    assert row["decisions"] >= 2000
    assert (row["train_opponents"] == "none (solo)") == (players == 1)


def test_the_documented_agent_example_is_rated(tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "docs" / "examples"))
    out = tmp_path / "r.json"
    assert bench_main(["rate", "--task", "solo", "--agent", "my_agent:MyAgent", "--name", "my_agent",
                       "--steps", "1M", "--games", "10", "--out", str(out)]) == 0
    (row,) = load_results(out)["rows"]
    assert (row["learner"], row["steps"], row["seed"], row["task"]) == ("my_agent", 1_000_000, 0, "solo")
