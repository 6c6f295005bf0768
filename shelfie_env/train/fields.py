"""Type checks of training config fields: a wrong type names the field, the value and the type."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

_WORDS = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string"}


def describe_type(expected: Any) -> str:
    """``int`` -> "an integer", ``list[int]`` -> "a list of integers", ``str | None`` -> "a string or none"."""
    args = typing.get_args(expected)
    if typing.get_origin(expected) in (typing.Union, types.UnionType):
        return " or ".join("none" if a is type(None) else describe_type(a) for a in args)
    if typing.get_origin(expected) is list:
        inner = describe_type(args[0]) if args else "values"
        return "a list of " + inner.split(" ", 1)[-1] + ("s" if not inner.endswith("s") else "")
    return _WORDS.get(expected, getattr(expected, "__name__", str(expected)))


def _fits(value: Any, expected: Any) -> bool:
    origin, args = typing.get_origin(expected), typing.get_args(expected)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if expected is type(None):
        return value is None
    if origin is list:
        return (
            isinstance(value, list) and all(_fits(v, args[0]) for v in value)
            if args
            else isinstance(value, list)
        )
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if expected is str:
        return isinstance(value, str)
    return True


def check_types(config: Any) -> None:
    """Raise ``ValueError`` for the first field of dataclass ``config`` whose value is not of its type;
    an integer given for a float field becomes a float."""
    hints = typing.get_type_hints(type(config))
    for f in dataclasses.fields(config):
        value, expected = getattr(config, f.name), hints[f.name]
        if not _fits(value, expected):
            raise ValueError(
                f"{f.name} must be {describe_type(expected)}, got {value!r} ({type(value).__name__})"
            )
        if expected is float and isinstance(value, int):
            setattr(config, f.name, float(value))
