"""``argparse`` types for numeric options and output files: a bad value is reported with the
option's name (``argument --port: must be 0..65535, got 70000``; ``argument --out: cannot write
...``), never as a traceback later on."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path


def number(
    kind: type[int] | type[float],
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    positive: bool = False,
) -> Callable[[str], int | float]:
    """A type that reads an ``int`` or a finite ``float`` in ``[minimum, maximum]`` (``positive``: > 0)."""
    word = "an integer" if kind is int else "a number"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {word}, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if positive and value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        if minimum is not None and maximum is not None and not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be {minimum:g}..{maximum:g}, got {text}")
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum:g}, got {text}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum:g}, got {text}")
        return value

    parse.__name__ = word
    return parse


def output_file(*suffixes: str) -> Callable[[str], Path]:
    """A type for a file a command writes when its work is done (``--out``, ``--json``): refused at
    once, with exit status 2, unless it can be written (with ``suffixes``: each of ``OUT.json``,
    ``OUT.md``), so no command plays its games and then fails to save them."""

    def parse(text: str) -> Path:
        path = Path(text)
        try:
            targets = [path.with_suffix(s) for s in suffixes] or [path]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a file name, got {text!r}") from None
        for target in targets:
            problem = _unwritable(target)
            if problem is not None:
                raise argparse.ArgumentTypeError(f"cannot write {target}: {problem}")
        return path

    parse.__name__ = "output file"
    return parse


def _unwritable(target: Path) -> str | None:
    """Why ``target`` cannot be written (None: it can): a folder, a file or folder without write
    permission, or a path through a file. Missing folders are fine (they are created)."""
    if target.is_dir():
        return "it is a folder"
    if target.exists() or target.is_symlink():
        return None if os.access(target, os.W_OK) else "no permission to write it"
    folder = target.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is not a folder"
    return None if os.access(folder, os.W_OK | os.X_OK) else f"no permission to write in {folder}"
