"""Bot specs: ``"name"`` or ``"name:key=value,key=value"``, the way every command names a bot.

A ``#label`` after the name (``greedy#2``) names another seat of the same bot: the
arena needs distinct specs, and the label is dropped when the bot is built.
"""

from __future__ import annotations

import inspect
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


def register_spec(name: str, spec: str) -> None:
    """Register ``spec`` (e.g. ``"ppo:path=runs/x/export.npz"``) under its own ``name``.

    The bot is built when first asked for, with the spec's options; a spec naming a
    model file plays the table size its card names (``table_sizes``), others keep the
    sizes of the bot they build on. Unknown bots and a missing file fail here.
    """
    from pathlib import Path

    from shelfie_env.bots import available, factory, register, table_sizes

    if not name or any(c in name for c in ":#=,") or not name.isprintable():
        raise ValueError(f"bot name {name!r}: use letters, digits, '-' or '_'")
    if name in available():
        raise ValueError(f"a bot named {name!r} exists already; choose another name")
    base_name, options = parse_spec(spec)
    base = factory(base_name)
    path = options.get("path")
    if path is not None:
        from shelfie_env.bots.learned.card import load_card

        if not Path(str(path)).is_file():
            raise FileNotFoundError(f"bot {name!r}: no model file {path}")
        sizes: tuple[int, ...] = (int(load_card(str(path))["num_players"]),)
    else:
        sizes = table_sizes(base_name)

    def build(num_players: int | None = None, **more: Any) -> Bot:
        kwargs = {**options, **more}
        if num_players is not None and num_players not in sizes:
            raise ValueError(f"bot {name!r} plays {_sizes(sizes)}-player games, not {num_players}")
        if num_players is not None and path is None and "num_players" in inspect.signature(base).parameters:
            kwargs["num_players"] = num_players
        return base(**kwargs)

    build.table_sizes = lambda: sizes  # type: ignore[attr-defined]
    build.__doc__ = f"The bot {spec!r}."
    register(name, build)


def _sizes(sizes: tuple[int, ...]) -> str:
    return ", ".join(map(str, sizes))
