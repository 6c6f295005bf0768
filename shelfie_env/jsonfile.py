"""Reading a JSON file someone else may have written: size, encoding and nesting checked first.

``json.loads`` on a text nested tens of thousands of levels deep raises ``RecursionError`` from
inside the C decoder (and leaves CPython 3.11's recursion bookkeeping off for later compiles in
the same process), and a huge file costs memory before anything is said. :func:`read_json_file`
refuses a file over its size limit before reading it and a text nested beyond its depth limit
before parsing it, each in one line; :func:`nesting_exceeds` measures the depth in linear time
and memory (no regular expression with a per-character stack).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a file may have by default (this package's files need 6)."""

_KEEP = b'"[]{}'
_STRING = re.compile(rb'"[^"]*"')
"""A string once its escapes are gone: one repeated character class, which the matcher runs in place."""
_CHUNK = 2**20
_DROP = bytes(b for b in range(256) if b not in _KEEP)


class JSONFileError(ValueError):
    """A JSON file that cannot be read: too big, not UTF-8, nested too deeply or not JSON."""


def nesting_exceeds(text: str | bytes, limit: int) -> bool:
    """Whether arrays and objects in ``text`` nest more than ``limit`` levels (strings skipped).

    Linear in time and memory: escapes and everything but quotes and brackets are dropped by
    byte operations, strings cut out, and the depth is the running sum of the brackets left.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    data = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DROP)
    data = _STRING.sub(b"", data)
    depth = 0
    for start in range(0, len(data), _CHUNK):
        codes = np.frombuffer(data, dtype=np.uint8, count=min(_CHUNK, len(data) - start), offset=start)
        steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
        running = np.cumsum(steps) + depth
        if running.max() > limit:
            return True
        depth = int(running[-1])
    return False


def read_json_file(path: str | Path, what: str, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in ``path``; :class:`JSONFileError` says in one line why it cannot be
    (``what`` names the kind of file: ``"replay"``, ``"model card"``): a missing or unreadable
    file, one over ``max_bytes``, not UTF-8, nested beyond ``max_depth``, or not JSON."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise JSONFileError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise JSONFileError(f"cannot read {what} {path}: it is over the {_size(max_bytes)} a {what} may have")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JSONFileError(f"cannot read {what} {path}: it is not a text file (a {what} is UTF-8 JSON)") from None
    if nesting_exceeds(raw, max_depth):
        raise JSONFileError(f"cannot read {what} {path}: its JSON is nested too deeply")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONFileError(f"cannot read {what} {path}: not JSON ({exc})") from None
    except RecursionError:  # unreachable past the depth check; kept so no traceback can escape
        raise JSONFileError(f"cannot read {what} {path}: its JSON is nested too deeply") from None


def _size(n: int) -> str:
    return f"{n // 2**20} MB" if n >= 2**20 else f"{n // 2**10} KB" if n >= 2**10 else f"{n} bytes"


__all__ = ["MAX_DEPTH", "JSONFileError", "nesting_exceeds", "read_json_file"]
