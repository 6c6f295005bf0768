"""The benchmark's batched training envs and exact resume: a stopped run, resumed in a new process, ends
with the parameters of the run that did not stop, bit for bit."""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shelfie_env.benchmark import train_vec_env
from shelfie_env.benchmark.tasks import margin_term

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[1]


def test_the_vector_env_has_the_benchmarks_opponents_seats_and_reward():
    env = train_vec_env(32, seed=5)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    ended, finals, seats, kinds = 0, [], set(), set()
    while ended < 200:
        masks = env.action_masks()
        kinds |= {int(k) for k in env.core._kinds.ravel()}
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, done, _, infos = env.step(actions)
        assert obs.shape == (32, env.single_observation_space.shape[0])
        assert not rewards[~done].any()  # nothing before a game ends
        for i in np.flatnonzero(done):
            scores, seat = infos["scores"][i], int(infos["seat"][i])
            rank = np.sign(scores[seat] - scores[1 - seat])
            assert rewards[i] == pytest.approx(rank + margin_term(scores, seat, 0.1))
            finals.append(rewards[i])
            seats.add(seat)
        ended += int(done.sum())
        assert "final_obs" in infos or not done.any()  # a finished game restarts in the same step
    assert seats == {0, 1} and {0, 1} <= kinds  # both seats; random (0) and greedy (1) opponents
    assert max(finals) > 0 > min(finals)


def test_the_vector_env_takes_the_env_options():
    env = train_vec_env(4, seed=0, obs="features", reroll="keep", score_reward=0.02)
    obs, _ = env.reset(seed=0)
    assert obs.shape[1] > train_vec_env(4, seed=0).single_observation_space.shape[0]
    assert env.core.reroll == "keep" and env.core.score_reward == 0.02


def _bench(tmp: Path, run_dir: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "shelfie_env.benchmark", "--steps", "6000", "--seeds", "0"]
    cmd += ["--algos", "maskable_ppo", "--eval-games", "0", "--bots", "--checkpoint-every", "2048"]
    cmd += ["--out", str(tmp / "results.json"), "--run-dir", str(tmp / run_dir), *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def _parameters(folder: Path) -> dict[str, np.ndarray]:
    from sb3_contrib import MaskablePPO

    (run,) = folder.iterdir()
    state = pickle.loads((run / "checkpoint.pkl").read_bytes())
    model = MaskablePPO.load(io.BytesIO(state["model"]), device="cpu")
    return {k: v.detach().numpy() for k, v in model.policy.state_dict().items()}


@pytest.mark.slow
def test_a_stopped_maskable_ppo_run_resumes_to_the_same_parameters_bit_for_bit(tmp_path):
    pytest.importorskip("sb3_contrib")
    opts = ("--obs", "features", "--reroll", "keep", "--score-reward", "0.02")
    _bench(tmp_path, "whole", *opts)
    stopped = _bench(tmp_path, "parts", *opts, "--stop-after", "2048")
    line = json.loads(next(x for x in stopped.stdout.splitlines() if x.startswith('{"stopped"')))
    assert line["continue"].endswith("--resume") and "obs-features" in line["stopped"]
    resumed = _bench(tmp_path, "parts", *opts, "--resume")
    assert '"resumed"' in resumed.stdout and '"decisions": 2048' in resumed.stdout
    whole, parts = _parameters(tmp_path / "whole"), _parameters(tmp_path / "parts")
    assert whole.keys() == parts.keys()
    for name in whole:
        assert np.array_equal(whole[name], parts[name]), name
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [r["decisions"] for r in rows] == [6144]  # one row: the stopped run added none
    assert rows[0]["variant"] == "score_reward=0.02,reroll=keep,obs=features"
    # the row names no folder and records the command of the whole run, not of its resumed part
    assert rows[0]["command"].endswith(
        "--steps 6000 --seeds 0 --algos maskable_ppo --eval-games 0 --bots --checkpoint-every 2048 "
        "--obs features --reroll keep --score-reward 0.02"
    )


@pytest.mark.slow
def test_a_stopped_ppo_flat_run_resumes_to_the_same_parameters_bit_for_bit(tmp_path):
    torch = pytest.importorskip("torch")
    from shelfie_env.arena.rows import Curve
    from shelfie_env.benchmark.ablations import ABLATION
    from shelfie_env.benchmark.learners import Run, base, train

    settings = {**ABLATION, **base("ppo_flat")}
    flat = {"num_envs": 32, "num_steps": 16, "minibatch_size": 256}
    steps = 3 * 32 * 16

    def run(folder: str, **kw):
        return train(
            Run("ppo_flat", steps, 0, Curve(0, 0), settings, run_dir=tmp_path / folder, flat=flat, **kw)
        )

    whole = run("whole")
    assert run("parts", stop_after=512) is None
    parts = run("parts", resume=True)
    assert whole.decisions == parts.decisions == steps
    a = torch.load(tmp_path / "whole" / "latest.pt", weights_only=False)["agent"]
    b = torch.load(tmp_path / "parts" / "latest.pt", weights_only=False)["agent"]
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_a_row_records_its_command_without_where_files_go_or_when_the_run_paused():
    from shelfie_env.arena.rows import row_command

    cmd = "shelfie bench --steps 10M --run-dir /x/runs --seeds 1 --out=/x/r.json --stop-after 3M --resume --obs features"
    assert row_command(cmd) == "shelfie bench --steps 10M --seeds 1 --obs features"
    assert row_command(None) is None


def test_a_resume_with_other_options_is_refused_naming_the_checkpoint(tmp_path):
    pytest.importorskip("sb3_contrib")
    _bench(tmp_path, "runs", "--stop-after", "2048")
    folder = tmp_path / "runs" / "maskable_ppo_s0_6k"
    folder.rename(tmp_path / "runs" / "maskable_ppo_s0_8k")  # now the folder of an 8000-decision run
    cmd = [sys.executable, "-m", "shelfie_env.benchmark", "--steps", "8000", "--seeds", "0", "--bots"]
    cmd += ["--algos", "maskable_ppo", "--eval-games", "0", "--resume", "--run-dir", str(tmp_path / "runs")]
    cmd += ["--out", str(tmp_path / "r.json")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert "a checkpoint of another run (maskable_ppo, seed 0, 6000 decisions" in done.stderr
    assert "Traceback" not in done.stderr
