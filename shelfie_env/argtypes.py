"""``argparse`` types for numeric options: a bad value is reported with the option's name
(``argument --port: must be 0..65535, got 70000``), never as a traceback later on."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


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
