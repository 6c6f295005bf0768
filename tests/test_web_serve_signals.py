"""``shelfie serve`` stopped with SIGTERM shuts down cleanly: exit status 0, nothing leaked."""

from __future__ import annotations

import signal
import subprocess
import sys
import time


def test_sigterm_stops_the_server_cleanly_with_its_bot_processes(tmp_path) -> None:
    cmd = [sys.executable, "-m", "shelfie_env.play.web.cli", "--port", "0", "--no-browser"]
    cmd += ["--db", str(tmp_path / "games.db"), "--bot-processes", "2", "--log-level", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once the socket is bound
        assert line.startswith("Shelfie table at http://127.0.0.1:"), line
        time.sleep(1.0)  # the bot worker processes start up
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "leaked" not in err and "resource_tracker" not in err, err
    assert "Traceback" not in err, err


def test_sigterm_as_the_server_starts_prints_no_traceback(tmp_path) -> None:
    cmd = [sys.executable, "-m", "shelfie_env.play.web.cli", "--port", "0", "--no-browser"]
    cmd += ["--db", str(tmp_path / "games.db"), "--bot-processes", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # uvicorn's log: the server is starting up
            if "Started server process" in line:
                break
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "leaked" not in err, err
