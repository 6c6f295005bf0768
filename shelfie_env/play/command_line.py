"""What ``shelfie play`` and ``shelfie replay`` share on the console: the error line, the
colour choice and how to spell the ``shelfie`` command in a line that tells what to run next.

An error is one line on stderr in argparse's form, ``shelfie play: error: ...``, and exit
status 2, as argparse reports a bad option of the same command.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TextIO


def fail(message: str, command: str) -> int:
    """Print ``shelfie COMMAND: error: MESSAGE`` on stderr; return the exit status 2."""
    print(f"shelfie {command}: error: {message}", file=sys.stderr)
    return 2


def use_color(args: argparse.Namespace, out: TextIO) -> bool:
    """Colour only on a terminal, and never with ``--no-color`` or ``$NO_COLOR`` set."""
    if getattr(args, "no_color", False) or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(out, "isatty", lambda: False)())


def shelfie_command() -> str:
    """``shelfie`` when that is the program on ``PATH``, else the path the running one was
    started by (``.venv/bin/shelfie`` without an activated venv), so a printed command runs as printed."""
    started = sys.argv[0] if sys.argv else ""
    if Path(started).stem != "shelfie":
        return "shelfie"
    found = shutil.which("shelfie")
    try:
        if found and os.path.samefile(found, started):
            return "shelfie"
    except OSError:
        pass
    path = os.path.relpath(started)
    if path.startswith(os.pardir):
        path = os.path.abspath(started)
    elif os.sep not in path:
        path = os.curdir + os.sep + path
    return shlex.quote(path)


__all__ = ["fail", "shelfie_command", "use_color"]
