"""League self-play on RLlib: the seat schedule, a tiny run with snapshot, export, evaluation and resume."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib")

from shelfie_env import bots  # noqa: E402
from shelfie_env.arena import run_arena  # noqa: E402
from shelfie_env.rllib.league import LeagueSchedule  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class _Episode:
    def __init__(self, i: int) -> None:
        self.id_ = f"episode-{i}"


def test_the_schedule_seats_the_learner_once_and_draws_opponents_by_their_shares():
    schedule = LeagueSchedule(3, snapshots=4, p_random=0.1, p_greedy=0.3)
    seen: Counter[str] = Counter()
    learner_seats: Counter[int] = Counter()
    for i in range(4000):
        ep = _Episode(i)
        seats = [schedule(f"player_{s}", ep) for s in range(3)]
        assert seats == [schedule(f"player_{s}", ep) for s in range(3)]  # stable within an episode
        assert seats.count("learner") == 1
        learner_seats[seats.index("learner")] += 1
        seen.update(s for s in seats if s != "learner")
    others = sum(seen.values())
    assert abs(seen["random"] / others - 0.1) < 0.02 and abs(seen["greedy"] / others - 0.3) < 0.03
    assert {f"snapshot_{k}" for k in range(4)} <= set(seen)
    assert all(abs(learner_seats[s] / 4000 - 1 / 3) < 0.04 for s in range(3))
    assert LeagueSchedule(1, 2)("player_0", _Episode(0)) == "learner"
    with pytest.raises(ValueError, match="snapshot"):
        LeagueSchedule(2, 0)
    with pytest.raises(ValueError, match="p_random"):
        LeagueSchedule(2, 2, p_random=0.8, p_greedy=0.5)


def _train(argv: list[str]) -> int:
    from shelfie_env.train import cli as train_cli

    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    return train_cli.run(parser.parse_args(argv))


def test_a_tiny_league_run_snapshots_exports_a_playable_card_and_resumes(tmp_path):
    """Ray runs in a process of its own: its runtime (a local cluster's processes, its threads and
    signal handlers) must not live in the test runner's worker, which it could end mid-run."""
    code = f"from pathlib import Path; from tests.test_rllib_train import league_run; league_run(Path({str(tmp_path)!r}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-6000:]
    assert "league run: every check passed" in done.stdout
    # Ray's avoidable notices are configured away; what is left on stderr is no Ray warning or error
    ray_lines = re.findall(r"^.*\b(?:WARNING|ERROR) \w+\.py:\d+ -- .*$", done.stderr, flags=re.M)
    assert not ray_lines, "\n".join(ray_lines)


def test_a_one_player_run_trains_and_evaluates(tmp_path):
    """A solo run reaches its evaluations (mean score) and exports; Ray in a process of its own, as above."""
    code = f"from pathlib import Path; from tests.test_rllib_train import solo_run; solo_run(Path({str(tmp_path)!r}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-6000:]
    assert "solo run: every check passed" in done.stdout


def solo_run(tmp_path: Path) -> None:
    """A tiny one-player run: it trains, evaluates by mean score and exports a solo model."""
    import ray

    run = tmp_path / "solo"
    argv = ["--backend", "rllib", "--players", "1", "--train-batch-size", "200", "--batch-size", "100",
            "--n-epochs", "1", "--n-envs", "2", "--net-arch", "16", "--eval-every", "200", "--eval-games", "2",
            "--save-every", "200", "--total-steps", "400", "--run-dir", str(run), "--export", str(tmp_path / "solo.npz")]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            assert _train(argv) == 0
        evals = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
        assert evals and all(0 <= e["solo"]["mean_score"] <= 190 for e in evals)
        bot = bots.make("ppo", path=str(tmp_path / "solo.npz"))
        assert bot.card["num_players"] == 1
    finally:
        ray.shutdown()
    print("solo run: every check passed")


def league_run(tmp_path: Path) -> None:
    """A tiny league run: snapshot, evaluation, export, the exported bot at the arena and a web
    table, resume, and refused flags (assertions; run by the test above in a fresh process)."""
    import ray

    run = tmp_path / "league"
    small = ["--backend", "rllib", "--players", "2", "--train-batch-size", "200", "--batch-size", "100",
             "--n-epochs", "1", "--n-envs", "2", "--net-arch", "16", "--pool-size", "2", "--snapshot-every", "200",
             "--eval-every", "400", "--eval-games", "4", "--save-every", "200", "--run-dir", str(run)]
    try:
        out_stream = io.StringIO()
        with contextlib.redirect_stdout(out_stream):
            assert _train([*small, "--total-steps", "400", "--export", str(tmp_path / "out.npz")]) == 0
        out = out_stream.getvalue().splitlines()
        assert out[0].startswith("[rllib] PPO league self-play on Ray RLlib, 2 player(s), 400 env steps"), out[0]
        assert out[0].endswith(f"-> {run}")
        evals_shown = [line for line in out if line.startswith("[rllib] eval at ")]
        assert evals_shown and "win rate against greedy" in evals_shown[-1] and "{" not in evals_shown[-1]
        assert out[-2].startswith("[rllib] done: ") and f"model {tmp_path / 'out.npz'} " in out[-2]
        from shelfie_env.train.messages import program

        assert out[-1] == f"play it: {program()} play --bot ppo:path={tmp_path / 'out.npz'}"
        league = json.loads((run / "league.json").read_text())
        assert league["env_steps"] >= 400 and league["cursor"] >= 1  # a snapshot slot was refreshed
        evals = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
        assert evals and evals[-1]["greedy"]["games"] == 4
        bot = bots.make("ppo", path=str(tmp_path / "out.npz"))
        assert bot.card["backend"] == "rllib" and bot.card["train_command"].startswith("shelfie train --backend rllib")
        res = run_arena(["rl", "greedy"], 2, 4, 0, workers=1, ratings=False, bots={"rl": bot})
        assert res["pairings"][0]["games"] == 4
        _plays_a_web_table(tmp_path, tmp_path / "out.npz")
        # resume: the same run goes on from its checkpoint
        assert _train(["--backend", "rllib", "--resume", "--run-dir", str(run), "--total-steps", "800"]) == 0
        assert json.loads((run / "league.json").read_text())["env_steps"] >= 800
        assert len((run / "progress.jsonl").read_text().splitlines()) >= 4
        # a fresh start into a used directory, and flags RLlib does not read, are refused
        err_stream = io.StringIO()
        with contextlib.redirect_stderr(err_stream):
            assert _train([*small, "--total-steps", "400"]) == 2
            assert _train(["--backend", "rllib", "--bc-games", "10", "--run-dir", str(tmp_path / "x")]) == 2
            assert _train(["--num-env-runners", "2", "--run-dir", str(tmp_path / "y")]) == 2
        err = err_stream.getvalue()
        assert "already holds a run" in err and "not used by --backend rllib: --bc-games" in err
        assert "only apply to --backend rllib" in err
    finally:
        ray.shutdown()
    print("league run: every check passed")


def _plays_a_web_table(tmp_path, model) -> None:
    """The exported policy, offered by the server under a name of its own (``shelfie serve --bot``),
    takes a seat in a web game and plays it to the end; a table size it was not trained for is refused."""
    import random

    from starlette.testclient import TestClient

    from shelfie_env.bots.spec import register_spec
    from shelfie_env.play.web.app import create_app
    from tests.test_web_api import create, play_out

    register_spec("rllib_ppo", f"ppo:path={model}")
    try:
        client = TestClient(create_app(tmp_path / "web.sqlite3"))
        assert client.get("/api/meta").json()["bot_tables"]["rllib_ppo"] == [2]
        view = create(client, {"seats": [{"type": "human"}, {"type": "bot", "bot": "rllib_ppo"}]})
        final = play_out(client, view, view["tokens"], random.Random(3))
        moves = client.get(f"/api/games/{view['game_id']}").json()["moves"]
        assert final["over"] and any(m["seat"] == 1 for m in moves)
        assert not any("bot error" in m["name"] for m in moves)
        r = client.post("/api/games", json={"seats": [{"type": "human"}] + [{"type": "bot", "bot": "rllib_ppo"}] * 2})
        assert r.status_code == 400 and "2-player" in r.json()["message"], r.text
        client.app.state.store.close()
    finally:
        bots._REGISTRY.pop("rllib_ppo", None)


def test_ppo_config_is_ready_to_build_and_starts_from_a_card():
    from shelfie_env.bots.learned.bot import shipped_model
    from shelfie_env.rllib import ppo_config

    config = ppo_config(players=2, init_from=str(shipped_model(2)), num_env_runners=1)
    spec = config.rl_module_spec.rl_module_specs["learner"]
    assert spec.model_config["head"] == "expect" and spec.model_config["hidden"] == [512, 512, 512]
    assert config.num_env_runners == 1 and config.policies_to_train == ["learner"]
    assert {"greedy", "random", "snapshot_0"} <= set(config.policies)
