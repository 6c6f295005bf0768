"""``shelfie train --algo ppo_flat`` / ``python -m shelfie_env.train.ppo_flat``: flags from the config fields.

Every field of :class:`~shelfie_env.train.ppo_flat.ppo.PPOFlatConfig` is a flag
(``--total-steps 10M --obs features --stop-bias 4``); ``--config FILE`` reads a TOML of
fields first (a preset name such as ``ppo_flat_2p`` also works), and ``--resume`` continues
the run in ``--run-dir`` from its checkpoint exactly where it stopped (``--total-steps``
may then be raised to train further).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from pathlib import Path
from typing import Any

from shelfie_env.train.ppo_flat.ppo import PPOFlatConfig, Trainer

_UNITS = {"k": 1_000, "m": 1_000_000}


def decisions(text: str) -> int:
    """``argparse`` type of a step count: ``500000``, ``500k``, ``10M``."""
    t = text.strip().lower().replace("_", "")
    try:
        value = float(t[:-1]) * _UNITS[t[-1]] if t and t[-1] in _UNITS else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a count such as 500000, 500k or 10M, got {text!r}") from None
    if value != int(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text!r}")
    return int(value)


def _flag_type(name: str, hint: Any) -> dict[str, Any]:
    if hint is bool:
        return {"type": lambda v: {"true": True, "false": False}[v.lower()], "metavar": "{true,false}"}
    if typing.get_origin(hint) is list:
        return {"type": int, "nargs": "+"}
    if name in ("total_steps", "snapshot_every", "eval_every"):
        return {"type": decisions}
    return {"type": hint}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The config flags, ``--config`` and ``--resume``."""
    hints = typing.get_type_hints(PPOFlatConfig)
    docs = _field_docs()
    parser.add_argument("--config", help="TOML file (or preset name) of config fields, read before the flags")
    parser.add_argument("--resume", action="store_true", help="continue the run in --run-dir from latest.pt")
    for f in dataclasses.fields(PPOFlatConfig):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        parser.add_argument(
            "--" + f.name.replace("_", "-"),
            dest=f.name,
            default=None,
            help=f"{docs.get(f.name, '')} (default: {default})",
            **_flag_type(f.name, hints[f.name]),
        )


def _field_docs() -> dict[str, str]:
    """Each field's docstring (the string literal under it in the class body)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(PPOFlatConfig))
    body = tree.body[0].body  # type: ignore[attr-defined]
    out = {}
    for a, b in zip(body, body[1:]):
        if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant):
            out[a.target.id] = " ".join(str(b.value.value).split())  # type: ignore[union-attr]
    return out


def read_fields(path: str) -> dict[str, Any]:
    """Fields of a TOML file, or of the preset of that name."""
    from importlib import resources

    import tomllib

    p = Path(path)
    if not p.is_file():
        preset = Path(str(resources.files("shelfie_env.train") / "presets" / f"{path}.toml"))
        if not preset.is_file():
            raise ValueError(f"--config: no file {path} and no preset of that name")
        p = preset
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--config {p}: not valid TOML ({exc})") from None
    data.pop("algo", None)
    names = {f.name for f in dataclasses.fields(PPOFlatConfig)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"--config {p}: unknown field(s) {', '.join(unknown)} of ppo_flat")
    return data


def config_from(args: argparse.Namespace) -> PPOFlatConfig:
    fields = read_fields(args.config) if args.config else {}
    for f in dataclasses.fields(PPOFlatConfig):
        value = getattr(args, f.name, None)
        if value is not None:
            fields[f.name] = value
    config = PPOFlatConfig(**fields)
    config.check()
    return config


def run(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(1)
    try:
        config = config_from(args)
        checkpoint = Path(config.run_dir) / "latest.pt"
        if args.resume:
            if not checkpoint.is_file():
                raise ValueError(f"--resume: no checkpoint {checkpoint}")
            changes = {"total_steps": args.total_steps} if args.total_steps else {}
            trainer = Trainer.resume(checkpoint, **changes)
        else:
            if checkpoint.is_file():
                raise ValueError(f"{checkpoint} exists: add --resume to continue that run, or pick another --run-dir")
            trainer = Trainer(config)
    except (ValueError, TypeError) as exc:
        print(f"shelfie train: error: {exc}", file=sys.stderr)
        return 2
    print(f"algo ppo_flat (flat masked PPO), {trainer.config.total_steps:,} learner decisions, "
          f"obs={trainer.config.obs}, run dir {trainer.config.run_dir}", flush=True)
    try:
        model = trainer.train(out=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print(f"\ninterrupted; resume with the same flags and --resume (checkpoint {checkpoint})", file=sys.stderr)
        return 130
    print(f"model: {model}\nplay it: shelfie play --bot ppo:path={model}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shelfie_env.train.ppo_flat", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))
