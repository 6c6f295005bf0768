"""What ``shelfie play`` and ``shelfie replay`` share on the console: the error line and the
colour choice.

An error is one line on stderr in argparse's form, ``shelfie play: error: ...``, and exit
status 2, as argparse reports a bad option of the same command.
"""

from __future__ import annotations

import argparse
import os
import sys
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


__all__ = ["fail", "use_color"]
