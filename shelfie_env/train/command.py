"""The training command, for any set of learners: flags from their configs, the algorithm of a
command line, its config, the run's first line and the hand-over to the learner.

``shelfie train`` (:mod:`shelfie_env.train.cli`) offers every learner; ``python -m
shelfie_env.train.td`` and the other learners' own entry points offer one. A learner is
described by a :class:`Learner` in its subpackage's ``__init__``, so this module imports none.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shelfie_env.train import messages as console
from shelfie_env.train.config import (
    add_field_flag,
    build_config,
    config_algo,
    default_of,
    field_docs,
    field_names,
    flags_given,
    preset_names,
    read_config,
    resumed_config,
    shown,
)


@dataclass(frozen=True)
class Learner:
    """A learner of the training command: its config class, what it is, and the module whose
    ``train_cli(cfg, preset, resume, export) -> int`` runs a config (imported only to run)."""

    config: type
    name: str
    door: str

    def train_cli(self) -> Callable[..., int]:
        """The learner's ``train_cli`` (importing it pulls in torch and the trainer)."""
        return importlib.import_module(self.door).train_cli


Learners = Mapping[str, Learner]
"""``--algo`` -> its learner; the first is the default."""

RLLIB_FLAGS = ("num_env_runners", "address", "train_batch_size")
"""Flags only ``shelfie train --backend rllib`` reads."""


# ------------------------------------------------------------------------------------ the parser
def add_arguments(parser: argparse.ArgumentParser, learners: Learners) -> None:
    """``--algo`` (with several learners), ``--config``, ``--resume``, ``--export`` and one flag per
    config field (a field of several learners in one group, with each one's default)."""
    algos = tuple(learners)
    several = len(algos) > 1
    if several:
        parser.add_argument(
            "--algo",
            choices=algos,
            default=None,
            help="; ".join(f"{a}: {learners[a].name}" for a in algos)
            + f" (default: {algos[0]}, or the algorithm of --config / of the run --resume continues)",
        )
    presets = [n for a in algos for n in preset_names(a)]
    parser.add_argument(
        "--config",
        help=f"a preset ({', '.join(presets)}) or a TOML/JSON file of config fields (flags override it)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --run-dir from its last checkpoint (config from its config.json); "
        "a run folder is trusted like code: its checkpoints may hold pickles",
    )
    parser.add_argument(
        "--export",
        type=Path,
        default=None,
        help="after training, write the run's model and its card to this .npz path",
    )
    owners: dict[str, list[str]] = {}
    for algo in algos:
        for name in sorted(field_names(learners[algo].config)):
            owners.setdefault(name, []).append(algo)
    shared = parser.add_argument_group("options of several algorithms") if several else parser
    for algo in algos:
        cls = learners[algo].config
        own = parser
        if several:
            own = parser.add_argument_group(
                f"options of --algo {algo}" + (" (the default)" if algo == algos[0] else "")
            )
        for f in dataclasses.fields(cls):
            have = owners[f.name]
            if have[0] == algo:  # declared once, by the first learner that has it
                add_field_flag(own if len(have) == 1 else shared, f, cls, _help(f.name, have, learners))


def _help(name: str, algos: list[str], learners: Learners) -> str:
    """A field's help: its doc and default, or, where the learners differ, each learner's."""
    texts, values = {}, {}
    for algo in algos:
        cls = learners[algo].config
        texts[algo] = field_docs(cls).get(name, "")
        values[algo] = shown(default_of(next(f for f in dataclasses.fields(cls) if f.name == name)))
    first = algos[0]
    if len(set(texts.values())) == 1:
        same = len(set(values.values())) == 1
        default = values[first] if same else ", ".join(f"{values[a]} with {a}" for a in algos)
        return f"{texts[first]} (default: {default})"
    return "; ".join(f"{a}: {texts[a]} (default: {values[a]})" for a in algos)


# ---------------------------------------------------------------------------- the algorithm
def _run_dir(args: argparse.Namespace, learner: Learner) -> Path:
    return Path(getattr(args, "run_dir", None) or learner.config.run_dir)


def choose_algo(
    args: argparse.Namespace, learners: Learners, command: str = "shelfie train"
) -> tuple[str, str]:
    """The algorithm of a command line and what chose it: the run ``--resume`` continues,
    ``--config``, ``--algo``, ``--backend sb3``, the command (one learner), or the default.
    ``ValueError`` when two of them disagree, or a config is for none of ``learners``."""
    algos = tuple(learners)
    default = getattr(args, "algo", None) or algos[0]
    configs = {a: learners[a].config for a in algos}
    said: list[tuple[str, str, str]] = []  # (algo, what chose it, the sentence saying so)
    if getattr(args, "resume", False):
        run_dir = _run_dir(args, learners[default])
        algo = config_algo(resumed_config(run_dir), configs, default)
        said.append((algo or "", f"the run in {run_dir}", f"{run_dir} holds a run of --algo {algo}"))
    config = getattr(args, "config", None)
    if config:
        data = read_config(config)
        algo = config_algo(data, configs, default)
        unknown = sorted(set(data) - {"algo"} - {n for cls in configs.values() for n in field_names(cls)})
        if algo is None and unknown:
            raise ValueError(f"--config {config}: unknown config field(s) {', '.join(unknown)}")
        why = "its algo" if "algo" in data else f"its fields are {algo}'s"
        said.append(
            (algo or "", f"--config {config} ({why})", f"--config {config} is a config of --algo {algo}")
        )
    if getattr(args, "algo", None):
        said.append((args.algo, f"--algo {args.algo}", f"--algo {args.algo} was given"))
    elif len(algos) == 1:
        said.append((algos[0], command, f"{command} trains --algo {algos[0]}"))
    if getattr(args, "backend", None) == "sb3":
        said.append(("maskable_ppo", "--backend sb3", "--backend sb3 is the backend of --algo maskable_ppo"))
    for algo, chosen_by, sentence in said:
        if algo not in algos:
            what = sentence if algo else f"{chosen_by.split(' (')[0]} is for no single algorithm"
            raise ValueError(f"{what}; {command} trains {', '.join(algos)}")
    for algo, _, sentence in said[1:]:
        if algo != said[0][0]:
            raise ValueError(f"{said[0][2]}, but {sentence}")
    if said:
        return said[0][0], said[0][1]
    return algos[0], "the default"


def check_options(args: argparse.Namespace, algo: str, chosen_by: str, learners: Learners) -> None:
    """``ValueError`` naming the flags given that are options of other learners only."""
    mine = field_names(learners[algo].config)
    foreign: dict[str, list[str]] = {}
    for other, learner in learners.items():
        for name in sorted(field_names(learner.config) - mine):
            if getattr(args, name, None) is not None:
                foreign.setdefault("--" + name.replace("_", "-"), []).append(other)
    if not foreign:
        return
    owners = sorted({o for have in foreign.values() for o in have}, key=list(learners).index)
    verb = "is an option" if len(foreign) == 1 else "are options"
    whose = " or ".join(f"--algo {o}" for o in owners)
    hint = f"; add --algo {owners[0]} to train with it" if chosen_by == "the default" else ""
    raise ValueError(f"{', '.join(foreign)} {verb} of {whose}, not of {algo} ({chosen_by}){hint}")


def config_from_args(args: argparse.Namespace, algo: str, learners: Learners) -> Any:
    """The config of ``algo``: the resumed run's ``config.json``, then ``--config``, then the flags given."""
    cls = learners[algo].config
    resumed = resumed_config(_run_dir(args, learners[algo])) if getattr(args, "resume", False) else None
    return build_config(
        cls, algo, resumed=resumed, source=getattr(args, "config", None), flags=flags_given(args, cls)
    )


def header(algo: str, chosen_by: str, learners: Learners, tag: str = "train") -> str:
    """The first line of a run: the algorithm, what it is, and what chose it."""
    return f"[{tag}] --algo {algo}: {learners[algo].name} (chosen by {chosen_by})"


def holds_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a checkpoint of any learner."""
    return (run_dir / "latest.zip").is_file() or (run_dir / "latest.pt").is_file()


# ---------------------------------------------------------------------------------- the run
def run(args: argparse.Namespace, learners: Learners, command: str = "shelfie train") -> int:
    """Choose the algorithm and its config, print the header, and hand the run to the learner;
    the exit status (2 and ``<command>: error: ...`` for a bad command line)."""
    given = [f"--{n.replace('_', '-')}" for n in RLLIB_FLAGS if getattr(args, n, None) is not None]
    resume = bool(getattr(args, "resume", False))
    try:
        if given:
            raise ValueError(f"{', '.join(given)} only apply to --backend rllib")
        algo, chosen_by = choose_algo(args, learners, command)
        check_options(args, algo, chosen_by, learners)
        cfg = config_from_args(args, algo, learners)
        if not resume and holds_run(Path(cfg.run_dir)):
            raise FileExistsError(
                f"{cfg.run_dir} already holds a run; pass --resume or choose another --run-dir"
            )
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"{command}: error: {exc}", file=sys.stderr)
        return 2
    print(header(algo, chosen_by, learners), flush=True)
    notice = console.compile_notice()
    if notice:
        print(notice, flush=True)
    preset = getattr(args, "config", None)
    train_cli = learners[algo].train_cli()
    return train_cli(cfg, str(preset) if preset else None, resume, getattr(args, "export", None))


def main(learners: Learners, prog: str, argv: list[str] | None = None, description: str = "") -> int:
    """A training command of ``learners`` named ``prog`` (``python -m ...``): parse ``argv``, then :func:`run`."""
    parser = argparse.ArgumentParser(prog=prog, description=description or None)
    add_arguments(parser, learners)
    return run(parser.parse_args(argv), learners, prog)
