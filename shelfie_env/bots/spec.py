"""Bot specs: ``"name"`` or ``"name:key=value,key=value"``, the way every command names a bot.

A ``#label`` after the name (``greedy#2``) names another seat of the same bot: the
arena needs distinct specs, and the label is dropped when the bot is built.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Any

from shelfie_env.bots import Bot, available, factory, make


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name[#label][:key=value,...]"`` -> ``(name, kwargs)``.

    For a known bot each value is read as the type its option takes (``threat``: a
    number, ``deterministic``: true or false, ``path``: text), and a value that is not
    one, or a key the bot does not take, raises ``ValueError`` naming the key, the
    value and the type. For an unknown name values are read as int, float, bool or
    text, and the caller says the name is unknown.
    """
    head, _, rest = spec.partition(":")
    name = head.partition("#")[0]
    if not name:
        raise ValueError(f"bot spec {spec!r} has no name")
    raw: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"bot spec {spec!r}: expected key=value, got {item!r}")
        raw[key] = value
    types = option_types(name) if name in available() else None
    if types is None:
        return name, {k: _parse_value(v) for k, v in raw.items()}
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in types:
            known = ", ".join(sorted(types)) or "none"
            raise ValueError(f"bot spec {spec!r}: {name} has no option {key!r} (its options: {known})")
        kwargs[key] = _convert(spec, key, value, types[key])
    return name, kwargs


def option_types(name: str) -> dict[str, Any] | None:
    """The type each spec option of bot ``name`` takes (``None``: any keyword goes).

    A factory may say it with an ``option_types()`` attribute; otherwise its
    signature's annotations (or defaults) are read.
    """
    build = factory(name)
    hook = getattr(build, "option_types", None)
    if callable(hook):
        return dict(hook())
    target = build.__init__ if isinstance(build, type) else build  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # annotations that cannot be resolved: fall back to the defaults
        hints = {}
    out: dict[str, Any] = {}
    for param in inspect.signature(build).parameters.values():
        if param.kind is param.VAR_KEYWORD:
            return None
        if param.kind in (param.VAR_POSITIONAL, param.POSITIONAL_ONLY):
            continue
        default = param.default
        guess = type(default) if default not in (None, inspect.Parameter.empty) else Any
        out[param.name] = hints.get(param.name, guess)
    return out


def _parse_value(raw: str) -> Any:
    """A value of an option whose type is not known: bool, None, int, float, else the text."""
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


_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number"}


def _convert(spec: str, key: str, value: str, expected: Any) -> Any:
    """``value`` of option ``key`` as ``expected``; ``ValueError`` names the key, the value and the type."""
    args = typing.get_args(expected)
    if type(None) in args:
        if value.lower() in ("none", "null"):
            return None
        rest = [a for a in args if a is not type(None)]
        expected = str if str in rest else rest[0] if len(rest) == 1 else Any
    if expected is bool:
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif expected is int:
        try:
            return int(value)
        except ValueError:
            pass
    elif expected is float:
        try:
            return float(value)
        except ValueError:
            pass
    elif expected in (str, Path) or str in args:
        return value
    else:
        return _parse_value(value)
    raise ValueError(f"bot spec {spec!r}: option {key} must be {_TYPE_WORDS[expected]}, got {value!r}")


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
    from shelfie_env.bots import register, table_sizes

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
    build.option_types = lambda: option_types(base_name)  # type: ignore[attr-defined]
    build.__doc__ = f"The bot {spec!r}."
    register(name, build)
    _SPECS[name] = spec


_SPECS: dict[str, str] = {}
"""The bots :func:`register_spec` added in this process: name -> spec."""


def registered_specs() -> dict[str, str]:
    """``name -> spec`` of every bot registered by :func:`register_spec` in this process (so another
    process can register the same bots)."""
    return dict(_SPECS)


def _sizes(sizes: tuple[int, ...]) -> str:
    return ", ".join(map(str, sizes))
