"""Bots given to ``shelfie serve --bot NAME=SPEC`` reach the bot worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.bots import spec
from shelfie_env.game.engine import Game

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "shelfie_env" / "models" / "ppo_2p.npz"


@pytest.fixture
def user_bot():
    spec.register_spec("mine-pool-test", f"ppo:path={MODEL}")
    yield "mine-pool-test"
    bots._REGISTRY.pop("mine-pool-test", None)
    spec._SPECS.pop("mine-pool-test", None)


def test_a_bot_registered_by_spec_plays_in_the_worker_process_without_a_traceback(user_bot, capfd):
    from shelfie_env.play.web.botpool import BotPool

    pool = BotPool(lambda game_id: None, workers=1, processes=1, preload=[(user_bot, 2)])
    remote: list[str] = []
    plain = pool._compute_remote
    pool._compute_remote = lambda *a: remote.append(a[2]) or plain(*a)  # type: ignore[method-assign]
    try:
        game = Game.new(2, rng=np.random.default_rng(3))
        while not game.over:
            mover = user_bot if game.current == 1 else "greedy"
            game.step(pool.compute("g1", game.current, mover, 2, game.to_dict()))
    finally:
        pool.stop()
    assert user_bot in remote
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "unknown bot" not in err


def test_serve_with_a_user_bot_starts_without_a_traceback(tmp_path):
    cmd = [
        sys.executable, "-m", "shelfie_env.play.web.cli", "--port", "0", "--no-browser",
        "--db", str(tmp_path / "games.sqlite3"), "--bot", f"mine=ppo:path={MODEL}", "--bot-processes", "2",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "Shelfie table at" in line or not line:
                break
        time.sleep(3)  # the worker processes register and build their bots after start-up
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    text = "".join(lines) + out
    assert "Shelfie table at" in text
    assert "Traceback" not in text, text
    assert "unknown bot" not in text, text
