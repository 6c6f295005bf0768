"""``shelfie serve``: run the web table with uvicorn.

Also runnable alone: ``python -m shelfie_env.play.web.cli --port 8000``.
"""

from __future__ import annotations

import argparse
import gc
import signal
import sqlite3
import sys
import threading
import webbrowser
from collections.abc import Sequence
from types import FrameType
from typing import Any

from shelfie_env.argtypes import number
from shelfie_env.bots import check_name
from shelfie_env.bots.spec import parse_spec, register_spec
from shelfie_env.play.web.app import (
    EXPIRE_DAYS,
    GAMES_PER_MINUTE,
    HINTS_PER_MINUTE,
    INACTIVE_HOURS,
    default_db_path,
)
from shelfie_env.play.web.guard import REQUEST_TIMEOUT

KEEP_ALIVE = 20.0
LIMIT_CONCURRENCY = 500
EXPOSED_WARNING = (
    "warning: listening on {host}: anyone who can reach this machine can open tables and play; "
    "the server speaks plain HTTP (seat tokens travel unencrypted). Use it on a network you trust, "
    "or behind a TLS reverse proxy (docs/web.md, Deployment)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``shelfie serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=number(int, 0, 65535), default=8000, help="TCP port (default 8000; 0 picks a free one)"
    )
    parser.add_argument(
        "--db", default=None, help=f"SQLite file where games are kept (default {default_db_path()})"
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    parser.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="also offer bot SPEC under NAME, e.g. --bot mine=ppo:path=runs/x/export.npz (repeatable)",
    )
    limits = parser.add_argument_group("limits (docs/web.md, Deployment)")
    _add_connection_limits(limits)
    _add_table_limits(limits)
    _add_worker_limits(limits)
    limits.add_argument(
        "--forwarded-allow-ips",
        default="127.0.0.1",
        metavar="IPS",
        help="proxies whose X-Forwarded-For gives the client address (default 127.0.0.1)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level (default info; 'warning' hides the access log)",
    )


def _add_connection_limits(limits: argparse._ArgumentGroup) -> None:
    """How long a client may take and how many may be served at once."""
    limits.add_argument(
        "--request-timeout",
        type=number(float, positive=True),
        default=REQUEST_TIMEOUT,
        metavar="S",
        help=f"seconds a client has to send a whole request before it is disconnected (default {REQUEST_TIMEOUT:g})",
    )
    limits.add_argument(
        "--keep-alive",
        type=number(float, positive=True),
        default=KEEP_ALIVE,
        metavar="S",
        help=f"seconds an idle connection is kept open (default {KEEP_ALIVE:g})",
    )
    limits.add_argument(
        "--limit-concurrency",
        type=number(int, 1),
        default=LIMIT_CONCURRENCY,
        metavar="N",
        help=f"connections or requests at once before new requests get 503 (default {LIMIT_CONCURRENCY})",
    )


def _add_table_limits(limits: argparse._ArgumentGroup) -> None:
    """How many tables and hints a client address may ask for, and how long games are kept."""
    limits.add_argument(
        "--games-per-minute",
        type=number(float, 0),
        default=GAMES_PER_MINUTE,
        metavar="N",
        help=f"new tables per client address and minute, 0 = no limit (default {GAMES_PER_MINUTE:g})",
    )
    limits.add_argument(
        "--hints-per-minute",
        type=number(float, 0),
        default=HINTS_PER_MINUTE,
        metavar="N",
        help=f"hint requests per client address and minute, 0 = no limit (default {HINTS_PER_MINUTE:g})",
    )
    limits.add_argument(
        "--expire-days",
        type=number(float, 0),
        default=EXPIRE_DAYS,
        metavar="D",
        help=f"delete unfinished games with no move for D days, 0 = keep (default {EXPIRE_DAYS:g})",
    )
    limits.add_argument(
        "--inactive-hours",
        type=number(float, 0),
        default=INACTIVE_HOURS,
        metavar="H",
        help="end a game that can move a rating after H hours without a move, as the resignation of the person"
        f" on turn; 0 = only when it expires (default {INACTIVE_HOURS:g})",
    )
    limits.add_argument(
        "--keep-finished-days",
        type=number(float, 0),
        default=0,
        metavar="D",
        help="delete finished games D days after their last move, 0 = keep (default 0)",
    )


def _add_worker_limits(limits: argparse._ArgumentGroup) -> None:
    """The threads and processes running game logic and bots, and the pace of tables of bots."""
    limits.add_argument(
        "--request-threads",
        type=number(int, 1),
        default=8,
        metavar="N",
        help="threads running requests' game logic at once (default 8)",
    )
    limits.add_argument(
        "--bot-workers",
        type=number(int, 1),
        default=2,
        metavar="N",
        help="threads playing the bots' moves in the background (default 2)",
    )
    limits.add_argument(
        "--bot-processes",
        type=number(int, 0),
        default=2,
        metavar="N",
        help="worker processes for the shipped bots' search, 0 = in the bot threads (default 2)",
    )
    limits.add_argument(
        "--bot-table-pace",
        type=number(float, 0),
        default=0.25,
        metavar="S",
        help="seconds between moves at a table of bots only (default 0.25)",
    )


def _terminated(signum: int, frame: FrameType | None) -> None:
    """SIGTERM outside uvicorn's own handling (and after it, when uvicorn raises it again): a
    normal exit, whose clean-up releases the bot worker processes' semaphores."""
    raise SystemExit(0)


def run(args: argparse.Namespace) -> int:
    """Start the server and block until it is stopped (Ctrl-C or SIGTERM: a clean shutdown)."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if main_thread else None
    try:
        return _run(args)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ModuleNotFoundError:
        print("shelfie serve needs the web extra: pip install 'shelfie-env[web]'", file=sys.stderr)
        return 2
    problem = _check_port(args.port) or _register_bots(args.bot) or _check_limits(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    try:
        app = _open_app(args)
    except (OSError, sqlite3.Error, RuntimeError) as exc:  # unreadable file, not a database, newer schema
        print(f"cannot open the games database {args.db}: {exc}", file=sys.stderr)
        return 1
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(EXPOSED_WARNING.format(host=args.host), file=sys.stderr, flush=True)
    _tune_interpreter()
    server = uvicorn.Server(server_config(app, args))
    threading.Thread(target=_announce, args=(server, args), daemon=True).start()
    server.run()
    return 0


def _register_bots(items: list[str]) -> str | None:
    """Register each ``--bot NAME=SPEC``; what is wrong with the first that cannot be (None: all are)."""
    for item in items:
        name, eq, spec = item.partition("=")
        if not eq or not spec:
            return f"--bot expects NAME=SPEC, e.g. mine=ppo:path=model.npz; got {item!r}"
        try:
            check_name(parse_spec(spec)[0])
            register_spec(name, spec)
        except (ValueError, OSError, KeyError) as exc:
            return f"--bot {item}: {exc}"
    return None


def _check_port(port: int) -> str | None:
    """What is wrong with ``--port`` (None: nothing)."""
    return None if 0 <= port <= 65535 else f"--port must be 0..65535, got {port}"


def _check_limits(args: argparse.Namespace) -> str | None:
    """What is wrong with the limits given (None: nothing)."""
    for name in ("request_timeout", "keep_alive"):
        if getattr(args, name) <= 0:
            return f"--{name.replace('_', '-')} must be > 0"
    if min(args.limit_concurrency, args.bot_workers, args.request_threads) < 1 or args.bot_processes < 0:
        return "--limit-concurrency, --request-threads and --bot-workers must be >= 1, --bot-processes >= 0"
    return None


def _open_app(args: argparse.Namespace) -> Any:
    """The app on the games database of ``--db`` (the default one when not given)."""
    from shelfie_env.play.web.app import create_app

    args.db = args.db or default_db_path()
    return create_app(
        args.db,
        worker_threads=args.request_threads,
        bot_workers=args.bot_workers,
        bot_processes=args.bot_processes,
        games_per_minute=args.games_per_minute,
        hints_per_minute=args.hints_per_minute,
        expire_days=args.expire_days or None,
        keep_finished_days=args.keep_finished_days or None,
        inactive_hours=args.inactive_hours or None,
        bot_table_pace=args.bot_table_pace,
    )


def _tune_interpreter() -> None:
    """Settings for a server process: prompt thread switches and a frozen start-up heap."""
    # A thread waiting for the interpreter lock asks for it after 1 ms instead of 5, so a request
    # does not wait out a bot worker's whole time slice each time it needs the lock.
    sys.setswitchinterval(0.001)
    # What start-up loaded (modules, models, tables) lives as long as the server: leaving it out of
    # the collector's full passes keeps those pauses, which every request waits out, short.
    gc.collect()
    gc.freeze()


def _announce(server: Any, args: argparse.Namespace) -> None:
    """Print the table's address once the socket is bound (so ``--port 0`` reports the real port),
    and open it in a browser unless ``--no-browser``."""
    while not server.started and not server.should_exit:
        threading.Event().wait(0.05)
    if not server.started:
        return
    try:
        port = server.servers[0].sockets[0].getsockname()[1] if server.servers else args.port
    except (IndexError, OSError):  # stopped as it started (a signal): no socket to announce
        return
    host = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
    if ":" in host:
        host = f"[{host}]"
    url = f"http://{host}:{port}/"
    print(f"Shelfie table at {url}  (games kept in {args.db}; Ctrl-C to stop)", flush=True)
    if not args.no_browser:
        webbrowser.open(url)


def server_config(app: Any, args: argparse.Namespace) -> Any:
    """The ``uvicorn.Config`` of ``shelfie serve``: the h11 protocol with a deadline for
    receiving each request (:func:`~shelfie_env.play.web.guard.guarded_h11`), idle keep-alive
    connections closed after ``--keep-alive`` and at most ``--limit-concurrency`` at once."""
    import uvicorn

    from shelfie_env.play.web.guard import guarded_h11

    return uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        http=guarded_h11(args.request_timeout),
        # Keep idle connections longer than a client's usual keep-alive expiry (5 s in httpx and
        # browsers' polling cadence), so a reused connection is not closed under a request in flight.
        timeout_keep_alive=args.keep_alive,
        limit_concurrency=args.limit_concurrency,
        forwarded_allow_ips=args.forwarded_allow_ips,
        proxy_headers=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shelfie serve", description="Play Shelfie dice in the browser.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
