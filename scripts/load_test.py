"""Load test of the web table: many concurrent games through the HTTP API on loopback.

Starts ``shelfie serve`` (uvicorn) in a subprocess on a free port with a fresh
SQLite file, then plays ``--games`` games at once (asyncio + httpx): each game
is one human seat (random legal moves sent by this script) against a bot seat
played by the server in the background; while the bot is on turn the client
polls the view every ``--poll`` seconds, as the page does. ``--busy-tables``
more tables of four ``--busy-bot`` bots (no person) are kept playing the whole
time (watched as the page watches a table: each poll asks for the moves it has
not seen), so the person's moves are measured while bot search is busy. All games
run at once, spread over ``--workers`` client processes (an asyncio + httpx
client costs more CPU per request than the server). Reports throughput,
latency percentiles (``action``: a person's move, answered before the bots
reply; ``bot_reply``: from that answer until the person is on turn again) and
errors; exits non-zero if any request failed, any game did not finish, or the
person's moves' p99 is over ``--max-action-p99-ms``.

    python scripts/load_test.py --games 200 --bot random
    python scripts/load_test.py --games 50 --bot planner --busy-tables 4 --max-action-p99-ms 100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx


@dataclass
class Stats:
    """Latencies (seconds) per request kind, errors, and counts."""

    latencies: dict[str, list[float]] = field(
        default_factory=lambda: {"create": [], "action": [], "poll": [], "bot_reply": [], "replay": []}
    )
    server_ms: dict[str, list[float]] = field(default_factory=lambda: {"action": [], "poll": []})
    """The server's own time (its Server-Timing header) for a person's moves and the polls."""
    errors: list[str] = field(default_factory=list)
    games_done: int = 0
    human_moves: int = 0
    total_moves: int = 0
    busy_games: int = 0
    busy_moves: int = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, db: Path, log: Path, extra: list[str] | None = None) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "shelfie_env.play.web.cli", "--port", str(port), "--db", str(db),
           "--no-browser", "--log-level", "warning", "--games-per-minute", "0", "--hints-per-minute", "0",
           *(extra or [])]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited early:\n{log.read_text()}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/meta", timeout=1).raise_for_status()
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start within 60 s")


async def timed(stats: Stats, kind: str, coro: Any) -> httpx.Response:
    t0 = time.perf_counter()
    response = await coro
    stats.latencies[kind].append(time.perf_counter() - t0)
    timing = response.headers.get("server-timing", "")
    if kind in stats.server_ms and "dur=" in timing:
        stats.server_ms[kind].append(float(timing.split("dur=")[1].split(";")[0]))
    return response


async def wait_turn(
    client: httpx.AsyncClient, gid: str, view: dict[str, Any], seat: int | None, poll: float, stats: Stats
) -> dict[str, Any]:
    """Poll the game (as the page does) until ``seat`` is on turn (None: until it is over)."""
    while not view["over"] and (seat is None or view["state"]["current_player"] != seat):
        await asyncio.sleep(poll)
        r = await timed(stats, "poll", client.get(f"/api/games/{gid}?since={view['num_moves']}"))
        if r.status_code != 200:
            raise ValueError(f"poll: {r.status_code} {r.text[:200]}")
        view = r.json()
    return view


async def play_game(
    client: httpx.AsyncClient, bot: str, seed: int, stats: Stats, start: asyncio.Event, poll: float,
    think: float,
) -> None:
    """One game: create it, send random legal moves for seat 0 until it is over, fetch the replay."""
    rng = random.Random(seed)
    await start.wait()
    try:
        spec = {"seats": [{"type": "human", "name": f"load {seed}"}, {"type": "bot", "bot": bot}]}
        r = await timed(stats, "create", client.post("/api/games", json=spec))
        if r.status_code != 201:
            stats.errors.append(f"create: {r.status_code} {r.text[:200]}")
            return
        view = r.json()
        gid, token = view["game_id"], view["tokens"]["0"]
        view = await wait_turn(client, gid, view, 0, poll, stats)
        while not view["over"]:
            if think > 0:
                await asyncio.sleep(rng.uniform(0.5, 1.5) * think)  # a person looks before moving
            action = rng.choice(view["legal"])["action"]
            body = {"seat": 0, "token": token, "action": action, "expect": view["num_moves"]}
            r = await timed(stats, "action", client.post(f"/api/games/{gid}/actions", json=body))
            if r.status_code != 200:
                stats.errors.append(f"action: {r.status_code} {r.text[:200]}")
                return
            view = r.json()
            stats.human_moves += 1
            if not view["over"] and view["state"]["current_player"] != 0:
                t0 = time.perf_counter()
                view = await wait_turn(client, gid, view, 0, poll, stats)
                stats.latencies["bot_reply"].append(time.perf_counter() - t0)
        r = await timed(stats, "replay", client.get(f"/api/games/{gid}/replay"))
        if r.status_code != 200 or r.json()["version"] != 1 or len(r.json()["actions"]) != view["num_moves"]:
            stats.errors.append(f"replay: {r.status_code} {r.text[:200]}")
            return
        stats.total_moves += view["num_moves"]
        stats.games_done += 1
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        stats.errors.append(f"{type(exc).__name__}: {exc}")


async def keep_busy(client: httpx.AsyncClient, bot: str, stats: Stats, start: asyncio.Event,
                    stop: asyncio.Event, history: bool = False) -> None:  # fmt: skip
    """Keep one table of four ``bot`` bots playing (a new one after each end) until ``stop``;
    each poll asks for the moves not seen yet, or with ``history`` for the whole log."""
    await start.wait()
    spec = {"seats": [{"type": "bot", "bot": bot}] * 4}
    try:
        while not stop.is_set():
            r = await client.post("/api/games", json=spec)
            if r.status_code != 201:
                stats.errors.append(f"busy create: {r.status_code} {r.text[:200]}")
                return
            view = r.json()
            while not view["over"] and not stop.is_set():
                await asyncio.sleep(0.5)
                since = 0 if history else view["num_moves"]  # the page asks for what it has not seen
                r = await client.get(f"/api/games/{view['game_id']}?since={since}")
                if r.status_code != 200:
                    stats.errors.append(f"busy poll: {r.status_code} {r.text[:200]}")
                    return
                view = r.json()
            stats.busy_moves += view["num_moves"]
            stats.busy_games += view["over"]
    except httpx.HTTPError as exc:
        stats.errors.append(f"busy: {type(exc).__name__}: {exc}")


def merge(parts: list[Stats]) -> Stats:
    total = Stats()
    for st in parts:
        for kind, values in st.latencies.items():
            total.latencies[kind].extend(values)
        for kind, values in st.server_ms.items():
            total.server_ms[kind].extend(values)
        total.errors.extend(st.errors)
        total.games_done += st.games_done
        total.human_moves += st.human_moves
        total.total_moves += st.total_moves
        total.busy_games += st.busy_games
        total.busy_moves += st.busy_moves
    return total


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    import os

    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


async def run_load(
    url: str, seeds: list[int], bot: str, start_at: float, poll: float, busy: int, busy_bot: str, think: float,
    busy_history: bool = False,
) -> tuple[Stats, float]:
    """Play one game per seed at the same time, starting at wall-clock ``start_at``.

    Each game has its own keep-alive connection (its own small client), as each
    browser would; one shared pool of hundreds of connections costs the client
    more CPU than the server spends on the requests.
    """
    stats = Stats()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=10)
    clients = [httpx.AsyncClient(base_url=url, limits=limits, timeout=120) for _ in range(len(seeds) + busy)]
    try:
        start, stop = asyncio.Event(), asyncio.Event()
        tasks = [
            asyncio.create_task(play_game(c, bot, seed, stats, start, poll, think)) for c, seed in zip(clients, seeds)
        ]
        busy_tasks = [
            asyncio.create_task(keep_busy(c, busy_bot, stats, start, stop, busy_history)) for c in clients[len(seeds):]
        ]
        await asyncio.sleep(max(0.0, start_at - time.time()))
        start.set()
        await asyncio.gather(*tasks)
        end = time.time()
        stop.set()
        await asyncio.gather(*busy_tasks)
        return stats, end
    finally:
        for c in clients:
            await c.aclose()


def worker(
    url: str, seeds: list[int], bot: str, start_at: float, poll: float, busy: int, busy_bot: str, think: float,
    nice: int, busy_history: bool = False,
) -> tuple[Stats, float]:
    """One client process (the HTTP client costs more CPU than the server; several processes share it).

    It runs at ``nice`` (the clients stand for browsers on other machines); a niced client measures
    its own scheduling delays too.
    """
    if nice:
        import os

        os.nice(nice)
    return asyncio.run(run_load(url, seeds, bot, start_at, poll, busy, busy_bot, think, busy_history))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games played at the same time (default 200)")
    parser.add_argument("--bot", default="random", help="bot in the second seat (default random)")
    parser.add_argument("--seed", type=int, default=0, help="seed of this script's move choices")
    parser.add_argument(
        "--workers", type=int, default=4, help="client processes sharing the games (default 4)"
    )
    parser.add_argument("--poll", type=float, default=0.1, help="seconds between polls while a bot is on turn")
    parser.add_argument(
        "--think", type=float, default=0.0, help="mean seconds a person waits before each move (default 0)"
    )
    parser.add_argument(
        "--client-nice", type=int, default=0,
        help="scheduling niceness of the client processes (default 0; a niced client's own wake-up delays"
        " count in the latencies it measures)",
    )
    parser.add_argument(
        "--busy-tables", type=int, default=0, help="tables of four bots kept playing meanwhile (default 0)"
    )
    parser.add_argument("--busy-bot", default="planner", help="the bot of the busy tables (default planner)")
    parser.add_argument(
        "--busy-history", action="store_true",
        help="the busy tables' watchers ask for the whole log every poll (as a page reloaded twice a second)",
    )
    parser.add_argument(
        "--max-action-p99-ms", type=float, help="fail if the p99 of a person's move is above this"
    )
    parser.add_argument(
        "--server-arg", action="append", default=[], help="extra `shelfie serve` argument (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.games < 1 or args.workers < 1:
        parser.error("--games and --workers must be >= 1")

    with tempfile.TemporaryDirectory() as tmp:
        db, log = Path(tmp) / "load.sqlite3", Path(tmp) / "server.log"
        port = free_port()
        proc = start_server(port, db, log, args.server_arg)
        try:
            cpu0 = process_cpu_s(proc.pid)
            url = f"http://127.0.0.1:{port}"
            seeds = [args.seed + i for i in range(args.games)]
            slices = [seeds[w :: args.workers] for w in range(args.workers) if seeds[w :: args.workers]]
            busy = [len(range(args.busy_tables)[w :: len(slices)]) for w in range(len(slices))]
            start_at = time.time() + 3.0  # every client process starts its games at this instant
            n = len(slices)
            with ProcessPoolExecutor(n) as pool:
                results = list(pool.map(worker, [url] * n, slices, [args.bot] * n, [start_at] * n,
                                        [args.poll] * n, busy, [args.busy_bot] * n, [args.think] * n,
                                        [args.client_nice] * n, [args.busy_history] * n))  # fmt: skip
            wall = max(end for _, end in results) - start_at
            client_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
            client_cpu_s = client_cpu.ru_utime + client_cpu.ru_stime
            stats = merge([st for st, _ in results])
            cpu1 = process_cpu_s(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
        con = sqlite3.connect(db)
        stored = dict(con.execute("SELECT status, COUNT(*) FROM games GROUP BY status").fetchall())
        stored_moves = con.execute("SELECT COUNT(*) FROM moves").fetchone()[0]
        con.close()
        server_errors = [
            line for line in log.read_text().splitlines() if "Traceback" in line or "ERROR" in line
        ]

    requests = sum(len(v) for v in stats.latencies.values())
    all_lat = [x for v in stats.latencies.values() for x in v]
    report: dict[str, Any] = {
        "games": args.games,
        "client_processes": args.workers,
        "bot": args.bot,
        "games_finished": stats.games_done,
        "requests": requests,
        "errors": len(stats.errors),
        "server_log_errors": len(server_errors),
        "wall_s": round(wall, 2),
        "requests_per_s": round(requests / wall, 1),
        "moves_per_s": round(stats.total_moves / wall, 1),
        "server_cpu_ms_per_request": (
            round((cpu1 - cpu0) / requests * 1000, 2)
            if cpu0 is not None and cpu1 is not None and requests
            else None
        ),
        "client_cpu_ms_per_request": round(client_cpu_s / requests * 1000, 2) if requests else None,
        "human_moves": stats.human_moves,
        "all_moves": stats.total_moves,
        "poll_s": args.poll,
        "think_s": args.think,
        "client_nice": args.client_nice,
        "busy_tables": args.busy_tables,
        "busy_bot": args.busy_bot,
        "busy_history": args.busy_history,
        "busy_games_finished": stats.busy_games,
        "busy_moves": stats.busy_moves,
        "server_args": args.server_arg,
        "stored": {"games": stored, "moves": stored_moves},
        "latency_ms": {
            kind: {
                "n": len(v),
                "p50": round(percentile(v, 50) * 1000, 1),
                "p99": round(percentile(v, 99) * 1000, 1),
                "max": round(max(v) * 1000, 1) if v else None,
            }
            for kind, v in list(stats.latencies.items()) + [("all", all_lat)]
        },
        "server_timing_ms": {
            kind: {"n": len(v), "p50": round(percentile(v, 50), 1), "p99": round(percentile(v, 99), 1),
                   "max": max(v) if v else None}  # fmt: skip
            for kind, v in stats.server_ms.items()
        },
    }
    print(json.dumps(report, indent=2))
    for err in stats.errors[:10]:
        print("error:", err, file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    ok = (
        not stats.errors
        and not server_errors
        and stats.games_done == args.games
        and stored.get("over", 0) >= args.games
    )
    p99 = report["latency_ms"]["action"]["p99"]
    if args.max_action_p99_ms is not None and not p99 <= args.max_action_p99_ms:
        print(f"a person's move: p99 {p99} ms is over {args.max_action_p99_ms} ms", file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
