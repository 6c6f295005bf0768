"""What the training commands print around a run: the model written and the command that plays
it, the command that resumes an interrupted run, and option names in config errors.

A printed command runs as printed from where the user is: it names the ``shelfie`` program as
this process found it (``.venv/bin/shelfie`` when ``shelfie`` on the ``PATH`` is another
program or none, see :func:`program`)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def program() -> str:
    """How the user runs the ``shelfie`` command from the current directory: ``shelfie`` when
    that name on the ``PATH`` is this installation's, else the path of this installation's
    script (``.venv/bin/shelfie``: the one that started this process, or the one beside its
    Python), relative to the current directory when it lies below it."""
    started = Path(sys.argv[0]) if sys.argv and Path(sys.argv[0]).name == "shelfie" else None
    script = (
        started if started is not None and started.is_file() else Path(sys.executable).with_name("shelfie")
    )
    if not script.is_file():
        return "shelfie"
    on_path = shutil.which("shelfie")
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "shelfie"
    where = Path(os.path.abspath(script))
    try:
        shown = str(where.relative_to(Path.cwd()))
    except ValueError:
        shown = str(where)
    return shlex.quote(shown)


def play_command(bot: str, model: str | Path, players: int) -> str:
    """The command that plays ``model`` (bot ``ppo`` or ``td``): a game against it in the terminal,
    or, for a solo model (a game with no opponent), an arena run that scores it."""
    spec = shlex.quote(f"{bot}:path={model}")
    if players == 1:
        return f"{program()} arena {spec} --players 1 --games 200"
    table = "" if players == 2 else f" --players {players}"
    return f"{program()} play{table} --bot {spec}"


def done_message(
    tag: str, trained: str, run_dir: str | Path, model: str | Path, origin: str, bot: str, players: int
) -> str:
    """The last two lines of a finished run: ``[tag] done: <trained> in <run_dir>; model <model>
    (<origin>)`` and the command that plays the model."""
    return (
        f"[{tag}] done: {trained} in {run_dir}; model {model} ({origin})\n"
        f"play it: {play_command(bot, model, players)}"
    )


def interrupted_message(run_dir: str | Path, checkpoint: str | None, command: str, *extra: str) -> str:
    """What Ctrl-C prints: where the last checkpoint stands (``checkpoint``, e.g. ``at 512 steps
    (runs/x/latest.pt)``; None before the first) and the command that continues the run."""
    if checkpoint is None:
        return f"\ninterrupted before the first checkpoint of {run_dir}; run the same command again to start over"
    return (
        f"\ninterrupted; the last checkpoint is {checkpoint}. "
        f"Continue with:\n  {resume_command(command, run_dir, *extra)}"
    )


def config_flags(config: Mapping[str, Any]) -> str:
    """The flags that set every field of ``config`` (booleans as ``--x`` / ``--no-x``, lists as
    several words; shell-quoted, so an empty string reads ``''``)."""

    def flag(name: str, value: Any) -> str:
        opt = name.replace("_", "-")
        if isinstance(value, bool):
            return f"--{opt}" if value else f"--no-{opt}"
        words = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return f"--{opt} {' '.join(shlex.quote(w) for w in words)}"

    return " ".join(flag(k, v) for k, v in config.items())


def resume_command(command: str, run_dir: str | Path, *extra: str) -> str:
    """``shelfie <command> --resume --run-dir <run_dir> [extra...]``, shell-quoted (the program as
    :func:`program` names it)."""
    words = [command, "--resume", "--run-dir", str(run_dir), *extra]
    return " ".join([program(), *(shlex.quote(w) for w in words)])


def name_flags(message: str, given: Iterable[str] | Mapping[str, str]) -> str:
    """``message`` with each config field in ``given`` (set by a flag) written as that flag
    (``total_steps must be positive`` -> ``--total-steps must be positive``); a mapping names,
    for each field, the flag that set it (``{"num_epochs": "n_epochs"}`` -> ``--n-epochs``)."""
    flags = dict(given) if isinstance(given, Mapping) else {name: name for name in given}
    for name in sorted(flags, key=len, reverse=True):
        flag = "--" + flags[name].replace("_", "-")
        message = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", flag, message)
    return message


def config_error(
    message: str, given: Iterable[str], source: str | None = None, from_file: Iterable[str] = ()
) -> str:
    """A config error as the command line shows it: fields set by a flag named as the flag, and an
    error about a field read from ``--config source`` prefixed with that source."""
    out = name_flags(message, given)
    first = out.split(" ", 1)[0].rstrip(":")
    if source and first in set(from_file):
        out = f"--config {source}: {out}"
    return out


KERNEL_MODULES = ("shelfie_env.batched._kernels", "shelfie_env.bots.greedy.batched")
"""The modules whose numba kernels the learners run (compiled on first use, ``cache=True``)."""


def compile_notice(modules: Iterable[str] | None = None) -> str | None:
    """The line a run prints before its first use of the compiled kernels when numba has no cached
    copy of them yet (the first run after an install compiles them, for about a minute); ``None``
    when every module (by default :data:`KERNEL_MODULES`) has cached kernels, or numba is not installed."""
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        return None
    caches = [Path(os.environ["NUMBA_CACHE_DIR"])] if os.environ.get("NUMBA_CACHE_DIR") else []
    for name in KERNEL_MODULES if modules is None else modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        source = Path(spec.origin)
        places = [source.parent / "__pycache__", *caches]
        if not any(next(p.rglob(f"{source.stem}.*.nbi"), None) for p in places if p.is_dir()):
            return (
                "[train] compiling the batched engine's kernels first (numba, about a minute; "
                "cached for later runs)"
            )
    return None
