"""The generated block of a Markdown file: the lines between two marker lines, replaced or compared whole.

:mod:`.suite_report` writes the benchmark's leaderboard into docs/benchmark.md through it.
"""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from pathlib import Path

from shelfie_env.arena.bootstrap import ReportError

START = "<!-- leaderboard:start -->"
END = "<!-- leaderboard:end -->"


class LeaderboardError(ReportError):
    """A Markdown file without a well-formed leaderboard block."""


def _block_span(lines: list[str], where: str) -> tuple[int, int]:
    starts = [i for i, line in enumerate(lines) if line.strip() == START]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(starts) != 1 or len(ends) != 1:
        found = f"{len(starts)} {START} and {len(ends)} {END} line(s)"
        raise LeaderboardError(
            f"{where}: needs exactly one line {START} and one line {END} around the leaderboard ({found})"
        )
    if ends[0] < starts[0]:
        raise LeaderboardError(f"{where}: the line {END} comes before {START}")
    return starts[0], ends[0]


def replace_block(text: str, board: str, where: str = "the file") -> str:
    """``text`` with the lines between :data:`START` and :data:`END` replaced by ``board``; a
    :class:`LeaderboardError` when the markers are missing, repeated or out of order."""
    lines = text.splitlines(keepends=True)
    start, end = _block_span(lines, where)
    body = ["\n", *(line + "\n" for line in board.strip("\n").split("\n")), "\n"]
    return "".join(lines[: start + 1] + body + lines[end:])


def read_doc(doc: Path) -> str:
    """The text of the Markdown file ``doc``; a :class:`LeaderboardError` when it is missing or has no
    well-formed block."""
    if not doc.is_file():
        raise LeaderboardError(f"{doc}: no such file")
    text = doc.read_text(encoding="utf-8")
    _block_span(text.splitlines(), str(doc))
    return text


def write_block(doc_path: str | Path, board: str) -> bool:
    """Put ``board`` between the markers of the Markdown file ``doc_path`` through a temporary file and
    ``os.replace`` (the file is whole at every moment); True when its text changed."""
    doc = Path(doc_path)
    text = read_doc(doc)
    new = replace_block(text, board, str(doc))
    if new == text:
        return False
    fd, tmp = tempfile.mkstemp(dir=doc.parent, prefix=f".{doc.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(new)
        os.chmod(tmp, stat.S_IMODE(doc.stat().st_mode))
        os.replace(tmp, doc)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def compare_block(doc_path: str | Path, board: str) -> str | None:
    """None when the block of ``doc_path`` is ``board``; else a message with the differing lines."""
    doc = Path(doc_path)
    text = read_doc(doc)
    new = replace_block(text, board, str(doc))
    if new == text:
        return None
    diff = difflib.unified_diff(
        text.splitlines(), new.splitlines(), f"{doc} (now)", f"{doc} (generated)", n=1, lineterm=""
    )
    return f"{doc}: the leaderboard block differs from what the results file generates:\n" + "\n".join(diff)


__all__ = ["END", "START", "LeaderboardError", "compare_block", "read_doc", "replace_block", "write_block"]
