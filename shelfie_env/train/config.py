"""Config files, presets and flags, shared by every learner; no learner is imported here.

Each learner's config is a dataclass in its own subpackage (``maskable_ppo.config.TrainConfig``,
``ppo_afterstate.config.PPOAfterstateConfig``, ``td.config.TDConfig``,
``ppo_flat.ppo.PPOFlatConfig``), every field documented by the string under it. This module
reads a preset or a TOML/JSON file into a dict of fields (:func:`read_config`), tells which
algorithm a dict of fields is for among the config classes it is given (:func:`config_algo`),
turns fields into command-line flags (:func:`add_field_flag`, :func:`field_docs`) and builds a
config from a resumed run, a file and flags with errors that name the flag or the file
(:func:`build_config`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shelfie_env.train.messages import config_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


PRESETS = Path(__file__).with_name("presets")
"""The committed recipes (``<name>.toml``, each with its ``algo``); six of the seven shipped models' cards name theirs."""

_UNITS = {"k": 1_000, "m": 1_000_000}
COUNT_FIELDS = ("total_steps", "snapshot_every", "eval_every", "save_every")
"""Fields whose flag also takes ``500k`` or ``10M``."""


def preset_names(algo: str | None = None) -> list[str]:
    """Names ``--config`` accepts besides a file path: every preset, or those whose ``algo`` is ``algo``."""
    names = sorted(p.stem for p in PRESETS.glob("*.toml"))
    if algo is None:
        return names
    return [n for n in names if _parse(PRESETS / f"{n}.toml").get("algo") == algo]


def read_config(source: str | Path) -> dict[str, Any]:
    """Config fields from a preset name, or a ``.toml`` / ``.json`` file; the error names what is wrong."""
    path = Path(source)
    if not path.is_file() and str(source) in preset_names():
        path = PRESETS / f"{source}.toml"
    if not path.is_file():
        raise FileNotFoundError(
            f"--config {source}: no such file, and not a preset (presets: {', '.join(preset_names())})"
        )
    return _parse(path)


def _parse(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"--config {path}: cannot be parsed ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"--config {path}: expected a table of config fields")
    return data


def field_names(config: type) -> set[str]:
    """The field names of dataclass ``config``."""
    return {f.name for f in dataclasses.fields(config)}


def config_algo(data: Mapping[str, Any], configs: Mapping[str, type], default: str) -> str | None:
    """The algorithm config ``data`` (a file, a preset or a run's ``config.json``) is for.

    Its ``algo`` when it has one; otherwise the algorithm of ``configs`` whose config has every
    field of ``data`` (``default`` when it is one of several such); ``None`` when none has them all.
    """
    if data.get("algo") is not None:
        return str(data["algo"])
    keys = set(data)
    fitting = [algo for algo, cls in configs.items() if keys <= field_names(cls)]
    if not fitting:
        return None
    return default if default in fitting else fitting[0]


def check_fields(data: Mapping[str, Any], config: type, algo: str, source: str | Path) -> None:
    """``ValueError`` naming the fields of ``data`` (from ``source``) that ``config`` (of ``algo``) lacks,
    or its ``algo`` when it names another algorithm."""
    if data.get("algo") not in (None, algo):
        raise ValueError(f"{source} is a config of --algo {data['algo']}, not of --algo {algo}")
    unknown = sorted(set(data) - field_names(config) - {"algo"})
    if unknown:
        raise ValueError(f"{source}: not field(s) of --algo {algo}: {', '.join(unknown)}")


def build_config(
    config: type,
    algo: str,
    *,
    resumed: Mapping[str, Any] | None = None,
    source: str | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Any:
    """``config`` from a resumed run's ``config.json`` (``resumed``), then ``--config source``, then the
    flags given (``flags``: field -> value); an error names the flag, or the file a field came from."""
    data: dict[str, Any] = {}
    if resumed is not None:
        check_fields(resumed, config, algo, "--resume: the run's config.json")
        data.update(resumed)
    from_file: dict[str, Any] = {}
    if source:
        from_file = read_config(source)
        check_fields(from_file, config, algo, f"--config {source}")
        data.update(from_file)
    data.pop("algo", None)
    given = dict(flags or {})
    data.update(given)
    try:
        cfg = config(**data)
        check = getattr(cfg, "check", None)  # a config that checks itself later than __post_init__
        if callable(check):
            check()
        return cfg
    except (ValueError, TypeError) as exc:
        raise ValueError(config_error(str(exc), list(given), source, from_file)) from None


def field_docs(config: type) -> dict[str, str]:
    """Docstring of each field of dataclass ``config`` (read from the source), for ``--help`` and the docs."""
    import ast
    import inspect
    import itertools
    import textwrap

    tree = ast.parse(textwrap.dedent(inspect.getsource(config)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in itertools.pairwise(body):
        named = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if named and isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant):
            docs[node.target.id] = " ".join(str(nxt.value.value).split())
    return docs


def count(text: str) -> int:
    """``argparse`` type of a step count: ``500000``, ``500k``, ``10M``."""
    t = text.strip().lower().replace("_", "")
    try:
        value = float(t[:-1]) * _UNITS[t[-1]] if t and t[-1] in _UNITS else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a count such as 500000, 500k or 10M, got {text!r}"
        ) from None
    if value != int(value):
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")
    return int(value)


def add_field_flag(group: Any, field: dataclasses.Field, config: type, help_text: str) -> None:
    """``--field-name`` for dataclass field ``field`` of ``config``: booleans as ``--x`` / ``--no-x``,
    lists as several words, step counts also as ``500k`` / ``10M``; its value is ``None`` when not given."""
    flag = "--" + field.name.replace("_", "-")
    hint = typing.get_type_hints(config)[field.name]
    if hint is bool:
        group.add_argument(
            flag, dest=field.name, action=argparse.BooleanOptionalAction, default=None, help=help_text
        )
    elif typing.get_origin(hint) is list:
        inner = typing.get_args(hint)[0] if typing.get_args(hint) else str
        group.add_argument(flag, dest=field.name, type=inner, nargs="+", default=None, help=help_text)
    elif field.name in COUNT_FIELDS and hint is int:
        group.add_argument(flag, dest=field.name, type=count, default=None, help=help_text)
    else:
        group.add_argument(flag, dest=field.name, type=hint, default=None, help=help_text)


def default_of(field: dataclasses.Field) -> Any:
    """The default value of dataclass field ``field``."""
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def shown(value: Any) -> str:
    """A default as ``--help`` shows it (a list as words)."""
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def flags_given(args: argparse.Namespace, config: type) -> dict[str, Any]:
    """The fields of ``config`` set by a flag in ``args``."""
    return {
        name: getattr(args, name)
        for name in sorted(field_names(config))
        if getattr(args, name, None) is not None
    }


def resumed_config(run_dir: str | Path) -> dict[str, Any]:
    """A run's ``config.json`` (what ``--resume`` continues); ``FileNotFoundError`` saying to start it first."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"--resume: no {path} (start the run without --resume first)")
    return json.loads(path.read_text())
