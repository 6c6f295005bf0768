"""Bot specs: ``"name"`` or ``"name:key=value,key=value"``, the way every command names a bot.

A ``#label`` after the name (``greedy#2``) names another seat of the same bot: the
arena needs distinct specs, and the label is dropped when the bot is built.
"""

from __future__ import annotations

from typing import Any

from shelfie_env.bots import Bot, make


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name[#label][:key=value,...]"`` -> ``(name, kwargs)`` (values: int, float, bool, str)."""
    head, _, rest = spec.partition(":")
    name = head.partition("#")[0]
    if not name:
        raise ValueError(f"bot spec {spec!r} has no name")
    kwargs: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise ValueError(f"bot spec {spec!r}: expected key=value, got {item!r}")
        kwargs[key] = _parse_value(raw)
    return name, kwargs


def _parse_value(raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            pass
    return raw


def build_bot(spec: str) -> Bot:
    """Instantiate a bot from its spec."""
    name, kwargs = parse_spec(spec)
    return make(name, **kwargs)
