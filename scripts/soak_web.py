"""Soak and fault test of the web table: tables of people and bots while the server is killed.

Starts ``shelfie serve`` on a fresh SQLite file and, for ``--duration`` seconds,
keeps ``--tables`` tables of a person (random legal moves sent by this script)
against a bot or a second person, and ``--bot-tables`` tables of four bots,
playing; a finished table is replaced by a new one. Meanwhile it

* kills the server with SIGKILL every ``--kill-every`` seconds on average and
  starts it again on the same file (clients retry the same request: a move
  carries ``expect``, so a retry never plays twice);
* holds the database's write lock from another connection for a few seconds,
  every ``--lock-every`` seconds on average (moves then get ``503 storage_busy``);
* sends bad input: malformed JSON, wrong media types, oversized bodies, bad
  tokens, illegal and stale moves, unknown games, and half-open requests that
  stall (the server must cut them after ``--request-timeout``).

At the end the server is stopped and every stored game is replayed move by move
(:func:`~shelfie_env.play.web.service.check_replay`: same states, same dice);
every move the server acknowledged must be stored, no answer may be a 5xx other
than ``503 storage_busy``, and no bot worker process of a killed server may be
left. Prints a JSON report; exits non-zero on any failure.

    python scripts/soak_web.py --duration 180 --tables 12 --bot-tables 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

PERSON_BOTS = ("greedy", "planner", "random", "td")
"""Opponents of the person tables (td plays only 2-seat tables, as these are)."""


@dataclass
class Soak:
    """What the clients saw."""

    statuses: Counter[str] = field(default_factory=Counter)
    acked: dict[tuple[str, int], int] = field(default_factory=dict)
    """(game id, move index) -> action, for every move the server answered 200 to."""
    move_ms: list[float] = field(default_factory=list)
    """A person's move: the attempt the server answered (a retry's time after a restart counts alone)."""
    move_total_ms: list[float] = field(default_factory=list)
    """A person's move, from its first attempt until an answer (server restarts included)."""
    failures: list[str] = field(default_factory=list)
    games_started: int = 0
    games_finished: int = 0
    repeats: int = 0
    busy: int = 0
    kills: int = 0
    locks: int = 0
    stalled_cut: int = 0
    stalled_sent: int = 0
    worker_pids: set[int] = field(default_factory=set)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``shelfie serve`` in a subprocess that can be killed and started again on the same file."""

    def __init__(self, db: Path, log: Path, port: int, extra: list[str]) -> None:
        self.db, self.log, self.port, self.extra = db, log, port, extra
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, soak: Soak) -> None:
        cmd = [sys.executable, "-m", "shelfie_env.play.web.cli", "--port", str(self.port), "--db", str(self.db),
               "--no-browser", "--log-level", "warning", *self.extra]  # fmt: skip
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"server exited at start:\n{self.log.read_text()[-3000:]}")
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/api/meta", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise SystemExit("server did not start within 60 s")
        soak.worker_pids |= children(self.proc.pid)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def children(pid: int) -> set[int]:
    """Child process ids of ``pid`` (Linux /proc), e.g. the bot worker processes."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                out.add(int(entry.name))
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return stat[0] != "Z"


async def send(client: httpx.AsyncClient, soak: Soak, method: str, path: str, stop: asyncio.Event,
               timing: list[float] | None = None, **kwargs: Any) -> httpx.Response | None:  # fmt: skip
    """One request, sent again while the server is down or busy (None if ``stop`` came first);
    the time of the attempt that got the answer goes to ``timing``."""
    while not stop.is_set():
        t0 = time.perf_counter()
        try:
            r = await client.request(method, path, **kwargs)
        except httpx.HTTPError:
            soak.statuses["no answer"] += 1
            await asyncio.sleep(0.3)
            continue
        soak.statuses[str(r.status_code)] += 1
        if timing is not None and r.status_code != 503:
            timing.append((time.perf_counter() - t0) * 1000)
        if r.status_code == 503:
            soak.busy += 1
            await asyncio.sleep(float(r.headers.get("retry-after", "1")) / 4)
            continue
        if r.status_code >= 500:
            soak.failures.append(f"{method} {path}: {r.status_code} {r.text[:200]}")
        return r
    return None


async def person_table(url: str, soak: Soak, rng: random.Random, stop: asyncio.Event) -> None:
    """Tables of a person against a bot (or two people played by this task), one after another."""
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        while not stop.is_set():
            if rng.random() < 0.2:
                seats = [{"type": "human"}, {"type": "human"}]
            else:
                seats = [{"type": "human"}, {"type": "bot", "bot": rng.choice(PERSON_BOTS)}]
            r = await send(client, soak, "POST", "/api/games", stop, json={"seats": seats})
            if r is None:
                return
            if r.status_code != 201:
                soak.failures.append(f"create: {r.status_code} {r.text[:200]}")
                return
            view, tokens = r.json(), r.json()["tokens"]
            gid = view["game_id"]
            soak.games_started += 1
            while not stop.is_set() and not view["over"]:
                seat = str(view["state"]["current_player"])
                if seat not in tokens:  # a bot's turn: poll as the page does
                    await asyncio.sleep(0.3)
                    r = await send(client, soak, "GET", f"/api/games/{gid}?since={view['num_moves']}", stop)
                    if r is None:
                        return
                    view = r.json()
                    continue
                await asyncio.sleep(rng.uniform(0.05, 0.3))
                expect = view["num_moves"]
                action = rng.choice(view["legal"])["action"]
                body = {"seat": int(seat), "token": tokens[seat], "action": action, "expect": expect}
                t0 = time.perf_counter()
                r = await send(client, soak, "POST", f"/api/games/{gid}/actions", stop, soak.move_ms, json=body)
                if r is None:
                    return
                if r.status_code == 200:
                    soak.move_total_ms.append((time.perf_counter() - t0) * 1000)
                    soak.acked[(gid, expect)] = action
                    soak.repeats += bool(r.json().get("repeated"))
                    view = r.json()
                    if view["num_moves"] <= expect:
                        soak.failures.append(f"game {gid}: move {expect} answered 200 but not counted")
                elif r.status_code == 409:  # stale after a restart: look again
                    r = await send(client, soak, "GET", f"/api/games/{gid}", stop)
                    if r is None:
                        return
                    view = r.json()
                else:
                    soak.failures.append(f"move: {r.status_code} {r.text[:200]}")
                    return
            soak.games_finished += view["over"]


async def bot_table(url: str, soak: Soak, rng: random.Random, stop: asyncio.Event) -> None:
    """Tables of four bots, one after another, polled until they end."""
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        while not stop.is_set():
            seats = [{"type": "bot", "bot": rng.choice(("greedy", "planner", "random"))} for _ in range(4)]
            r = await send(client, soak, "POST", "/api/games", stop, json={"seats": seats})
            if r is None:
                return
            gid = r.json()["game_id"]
            soak.games_started += 1
            view = r.json()
            while not stop.is_set() and not view["over"]:
                await asyncio.sleep(1.0)
                r = await send(client, soak, "GET", f"/api/games/{gid}", stop)
                if r is None:
                    return
                view = r.json()
            soak.games_finished += view["over"]


BAD_BODIES: list[tuple[bytes, str]] = [
    (b"{not json", "application/json"),
    (b"", "application/json"),
    (b"[1, 2]", "application/json"),
    (b'{"seats": [{"type": "alien"}]}', "application/json"),
    (b'{"seats": [{"type": "human", "name": "\\ud800"}]}', "application/json"),
    (b"[" * 5000 + b"]" * 5000, "application/json"),
    (b'{"seats": [{"type": "human"}]}', "text/plain"),
    (b"seats=1", "application/x-www-form-urlencoded"),
    (b'{"seats": [{"type": "human"}], "pad": "' + b"x" * 20000 + b'"}', "application/json"),
]


async def bad_inputs(url: str, port: int, soak: Soak, rng: random.Random, stop: asyncio.Event,
                     request_timeout: float) -> None:  # fmt: skip
    """Malformed requests, wrong tokens, illegal or stale moves, and half-open requests."""
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        while not stop.is_set():
            await asyncio.sleep(rng.uniform(0.1, 0.5))
            known = [gid for gid, _ in rng.sample(list(soak.acked), min(3, len(soak.acked)))] or ["nope"]
            gid = rng.choice(known)
            kind = rng.randrange(6)
            if kind == 0:
                body, media = rng.choice(BAD_BODIES)
                r = await send(client, soak, "POST", "/api/games", stop, content=body,
                               headers={"content-type": media})  # fmt: skip
                expected = {400, 413, 415}
            elif kind == 1:
                move = {"seat": 0, "token": "guess", "action": 0, "expect": 0}
                r = await send(client, soak, "POST", f"/api/games/{gid}/actions", stop, json=move)
                expected = {403, 404, 409}
            elif kind == 2:
                move = {"seat": rng.choice([-1, 0, 9]), "token": "x", "action": rng.choice([-5, 999, "1"])}
                r = await send(client, soak, "POST", f"/api/games/{gid}/actions", stop, json=move)
                expected = {400, 403, 404, 409}
            elif kind == 3:
                r = await send(client, soak, "GET", f"/api/games/{gid}?since={rng.choice(['-1', 'x', '1e9'])}", stop)
                expected = {400}
            elif kind == 4:
                r = await send(client, soak, "GET", f"/api/games/{'z' * rng.randrange(1, 300)}", stop)
                expected = {404}
            else:
                await stall(port, soak, rng.randrange(5, 30), request_timeout)
                continue
            if r is not None and r.status_code not in expected:
                soak.failures.append(f"bad input {kind}: {r.status_code} {r.text[:200]}")
            elif r is not None and not r.headers.get("content-type", "").startswith("application/json"):
                soak.failures.append(f"bad input {kind}: a {r.status_code} answer that is not JSON")


async def stall(port: int, soak: Soak, n: int, request_timeout: float) -> None:
    """Open ``n`` connections that send part of a request and stall; count those the server cuts."""
    streams = []
    for _ in range(n):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return  # the server is down right now
        writer.write(b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n")
        streams.append((reader, writer))
    soak.stalled_sent += len(streams)

    async def cut(reader: asyncio.StreamReader) -> bool:
        try:
            return await asyncio.wait_for(reader.read(), request_timeout + 5) is not None
        except ConnectionError:  # reset: the server went down (a kill) with the request still queued
            return True
        except (asyncio.TimeoutError, OSError):
            return False

    results = await asyncio.gather(*(cut(r) for r, _ in streams))
    soak.stalled_cut += sum(results)
    for _, writer in streams:
        writer.close()


async def stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds`` or until ``stop`` is set; whether it was set."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        return stop.is_set()
    return True


async def killer(server: Server, soak: Soak, rng: random.Random, stop: asyncio.Event, every: float) -> None:
    while not await stopped_within(stop, rng.uniform(0.5, 1.5) * every):
        server.kill()
        soak.kills += 1
        await asyncio.sleep(rng.uniform(0.2, 2.0))
        await asyncio.to_thread(server.start, soak)


async def locker(db: Path, soak: Soak, rng: random.Random, stop: asyncio.Event, every: float) -> None:
    """Hold the database's write lock from another connection for 1.5-4 s at a time."""
    while not await stopped_within(stop, rng.uniform(0.5, 1.5) * every):
        con = sqlite3.connect(db, isolation_level=None, timeout=5)
        try:
            con.execute("BEGIN IMMEDIATE")
            soak.locks += 1
            await asyncio.sleep(rng.uniform(1.5, 4.0))
            con.execute("ROLLBACK")
        except sqlite3.OperationalError:
            pass
        finally:
            con.close()


def final_check(db: Path, soak: Soak) -> dict[str, Any]:
    """Replay every stored game and look up every acknowledged move."""
    from shelfie_env.play.web.service import check_replay
    from shelfie_env.play.web.store import GameStore

    store = GameStore(db)
    try:
        ids = [r[0] for r in store._read("SELECT id FROM games")]
        problems = {gid: p for gid in ids if (p := check_replay(store, gid))}
        stored = {(r[0], r[1]): r[2] for r in store._read("SELECT game_id, idx, action FROM moves")}
        moves = len(stored)
        counts = store.count_games()
    finally:
        store.close()
    lost = [key for key, action in soak.acked.items() if stored.get(key) != action]
    return {"games": len(ids), "by_status": counts, "moves": moves, "replay_problems": problems,
            "acknowledged_moves": len(soak.acked), "acknowledged_moves_missing": len(lost)}  # fmt: skip


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 1)


async def soak_run(args: argparse.Namespace, server: Server, soak: Soak) -> None:
    rng = random.Random(args.seed)
    url = f"http://127.0.0.1:{server.port}"
    stop = asyncio.Event()
    tasks = [asyncio.create_task(person_table(url, soak, random.Random(rng.random()), stop))
             for _ in range(args.tables)]  # fmt: skip
    tasks += [asyncio.create_task(bot_table(url, soak, random.Random(rng.random()), stop))
              for _ in range(args.bot_tables)]  # fmt: skip
    tasks.append(asyncio.create_task(bad_inputs(url, server.port, soak, random.Random(rng.random()), stop,
                                                args.request_timeout)))  # fmt: skip
    if args.kill_every > 0:
        tasks.append(asyncio.create_task(killer(server, soak, random.Random(rng.random()), stop, args.kill_every)))
    if args.lock_every > 0:
        tasks.append(asyncio.create_task(locker(server.db, soak, random.Random(rng.random()), stop,
                                                args.lock_every)))  # fmt: skip
    await asyncio.sleep(args.duration)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 60)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=180, help="seconds of play (default 180)")
    parser.add_argument("--tables", type=int, default=12, help="tables with a person (default 12)")
    parser.add_argument("--bot-tables", type=int, default=3, help="tables of four bots (default 3)")
    parser.add_argument("--kill-every", type=float, default=30, help="mean seconds between kill -9 (0: never)")
    parser.add_argument("--lock-every", type=float, default=25, help="mean seconds between database locks (0: never)")
    parser.add_argument("--request-timeout", type=float, default=3.0, help="the server's --request-timeout")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-arg", action="append", default=[], help="extra `shelfie serve` argument")
    parser.add_argument("--json", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)

    soak = Soak()
    with tempfile.TemporaryDirectory() as tmp:
        db, log = Path(tmp) / "soak.sqlite3", Path(tmp) / "server.log"
        extra = ["--games-per-minute", "0", "--hints-per-minute", "0",
                 "--request-timeout", str(args.request_timeout), *args.server_arg]  # fmt: skip
        server = Server(db, log, free_port(), extra)
        server.start(soak)
        t0 = time.monotonic()
        try:
            asyncio.run(soak_run(args, server, soak))
        finally:
            server.stop()
        wall = time.monotonic() - t0
        time.sleep(2.5)  # worker processes of killed servers notice within a second
        left = sorted(pid for pid in soak.worker_pids if alive(pid))
        check = final_check(db, soak)
        text = log.read_text(errors="replace")
        tracebacks = text.count("Traceback")
        excerpts = [block.strip().splitlines()[-1][:300] for block in text.split("Traceback")[1:4]]

    report = {
        "duration_s": round(wall, 1),
        "tables": args.tables,
        "bot_tables": args.bot_tables,
        "kills": soak.kills,
        "database_locks": soak.locks,
        "games_started": soak.games_started,
        "games_finished": soak.games_finished,
        "answers": dict(sorted(soak.statuses.items())),
        "storage_busy_retries": soak.busy,
        "repeated_moves_answered": soak.repeats,
        "person_move_ms": {"n": len(soak.move_ms), "p50": percentile(soak.move_ms, 50),
                           "p99": percentile(soak.move_ms, 99)},  # fmt: skip
        "person_move_with_retries_ms": {"n": len(soak.move_total_ms), "p50": percentile(soak.move_total_ms, 50),
                                        "p99": percentile(soak.move_total_ms, 99),
                                        "max": percentile(soak.move_total_ms, 100)},  # fmt: skip
        "stalled_requests": {"sent": soak.stalled_sent, "cut_by_server": soak.stalled_cut},
        "bot_worker_processes_left": left,
        "server_tracebacks": tracebacks,
        "server_traceback_ends": excerpts,
        **check,
        "failures": soak.failures[:20],
    }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    ok = (
        not soak.failures
        and not check["replay_problems"]
        and check["acknowledged_moves_missing"] == 0
        and not left
        and soak.stalled_cut == soak.stalled_sent
        and tracebacks == 0
    )
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
