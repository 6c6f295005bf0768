"""Cutting text to a width for messages and tables: what was cut ends in an ellipsis."""

from __future__ import annotations


def clip(text: str, width: int) -> str:
    """``text`` itself if it fits in ``width`` characters, else its first ``width - 1`` and ``…``."""
    return text if len(text) <= width else text[: width - 1] + "…"


def one_line(text: str, width: int) -> str:
    """``text`` with its whitespace runs made single spaces, then :func:`clip`-ped (a bad value shown in an
    error message may be a whole state dict)."""
    return clip(" ".join(text.split()), width)


__all__ = ["clip", "one_line"]
