"""Cutting text to a width for messages and tables (what was cut ends in an ellipsis), and showing
text from files safely on a terminal (control characters escaped)."""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029" + _BIDI + "]")


def clip(text: str, width: int) -> str:
    """``text`` itself if it fits in ``width`` characters, else its first ``width - 1`` and ``…``."""
    return text if len(text) <= width else text[: width - 1] + "…"


def one_line(text: str, width: int) -> str:
    """``text`` with its whitespace runs made single spaces, then :func:`clip`-ped (a bad value shown in an
    error message may be a whole state dict)."""
    return clip(" ".join(text.split()), width)


def printable(text: str) -> str:
    """``text`` with its control characters written as escapes (``\\x1b``, ``\\u202e``): C0, DEL and C1
    controls, line and paragraph separators and the bidirectional overrides. A name read from a file
    then cannot move the cursor, clear the screen, set the window title or reorder the line."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


__all__ = ["clip", "one_line", "printable"]
