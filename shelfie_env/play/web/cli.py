"""``shelfie serve``: run the web table with uvicorn.

Also runnable alone: ``python -m shelfie_env.play.web.cli --port 8000``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import threading
import webbrowser
from collections.abc import Sequence

from shelfie_env.bots.spec import register_spec
from shelfie_env.play.web.app import default_db_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``shelfie serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000; 0 picks a free one)")
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
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level (default info; 'warning' hides the access log)",
    )


def run(args: argparse.Namespace) -> int:
    """Start the server and block until it is stopped (Ctrl-C)."""
    try:
        import uvicorn
    except ModuleNotFoundError:
        print("shelfie serve needs the web extra: pip install 'shelfie-env[web]'", file=sys.stderr)
        return 2
    from shelfie_env.play.web.app import create_app

    if not 0 <= args.port <= 65535:
        print(f"--port must be 0..65535, got {args.port}", file=sys.stderr)
        return 2
    for item in args.bot:
        name, eq, spec = item.partition("=")
        if not eq or not spec:
            print(f"--bot expects NAME=SPEC, e.g. mine=ppo:path=model.npz; got {item!r}", file=sys.stderr)
            return 2
        try:
            register_spec(name, spec)
        except (ValueError, OSError, KeyError) as exc:
            print(f"--bot {item}: {exc}", file=sys.stderr)
            return 2
    try:
        args.db = args.db or default_db_path()
        app = create_app(args.db)
    except (OSError, sqlite3.Error, RuntimeError) as exc:  # unreadable file, not a database, newer schema
        print(f"cannot open the games database {args.db}: {exc}", file=sys.stderr)
        return 1
    # Keep idle connections longer than a client's usual keep-alive expiry (5 s in httpx and
    # browsers' polling cadence), so a reused connection is not closed under a request in flight.
    config = uvicorn.Config(
        app, host=args.host, port=args.port, log_level=args.log_level, timeout_keep_alive=20
    )
    server = uvicorn.Server(config)

    def announce() -> None:
        # Wait for the socket to be bound, so --port 0 reports the real port.
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if not server.started:
            return
        port = server.servers[0].sockets[0].getsockname()[1] if server.servers else args.port
        host = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
        if ":" in host:
            host = f"[{host}]"
        url = f"http://{host}:{port}/"
        print(f"Shelfie table at {url}  (games kept in {args.db}; Ctrl-C to stop)", flush=True)
        if not args.no_browser:
            webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shelfie serve", description="Play Shelfie dice in the browser.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
