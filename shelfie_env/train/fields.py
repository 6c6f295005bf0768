"""Checks of training config fields: a wrong type names the field, the value and the type; a value
out of its range names the field, the range and the value."""

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


def check_ranges(
    config: Any,
    *,
    positive: tuple[str, ...] = (),
    nonnegative: tuple[str, ...] = (),
    unit: tuple[str, ...] = (),
) -> None:
    """Raise ``ValueError`` for the first named field of ``config`` out of its range: ``positive``
    (> 0), ``nonnegative`` (>= 0) or ``unit`` (in [0, 1])."""
    for names, ok, words in (
        (positive, lambda v: v > 0, "positive"),
        (nonnegative, lambda v: v >= 0, ">= 0"),
        (unit, lambda v: 0.0 <= v <= 1.0, "in [0, 1]"),
    ):
        for name in names:
            value = getattr(config, name)
            if not ok(value):
                raise ValueError(f"{name} must be {words}, got {value}")


def check_net_arch(net_arch: list[int]) -> None:
    """Raise ``ValueError`` unless ``net_arch`` lists at least one layer, each of positive width."""
    if not net_arch or min(net_arch) <= 0:
        raise ValueError(f"net_arch needs positive layer sizes, got {net_arch}")
