"""``shelfie bench rate``: rate an agent trained elsewhere on a task and merge its row into a results file.

The agent is one of

* a bot spec (``greedy``, ``level-3``, ``td:path=my_td.npz``);
* ``module:attr`` — an importable object with ``act(state)``, a function of the state dict, or a class
  or factory called with no arguments that returns one of those (``my_pkg.agents:MyAgent``);
* a model file with its card beside it (``my_model.npz`` and ``my_model.json``): a TD(λ) card plays as
  ``td:path=...``, any other as ``ppo:path=...``.

The row is scored exactly as ``shelfie bench --task T`` scores a trained learner
(:func:`~shelfie_env.arena.rows.task_row`), names its ``task``, and the report tables it beside the
baselines.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from shelfie_env.argtypes import output_file
from shelfie_env.clip import one_line

DESCRIPTION = (
    "Rate an agent trained elsewhere on a benchmark task (a bot spec, module:attr, or a model file with its "
    "card) and merge its row into --out; shelfie bench report tables it beside the baselines."
)


class AgentError(ValueError):
    """An agent that cannot be loaded, or that does not fit the task."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from shelfie_env.arena.results_file import DEFAULT_OUT
    from shelfie_env.benchmark.suite import DEFAULT_TASK, TASKS
    from shelfie_env.benchmark.tasks import budget

    parser.add_argument("--task", default=DEFAULT_TASK, choices=list(TASKS), help=f"the task (default {DEFAULT_TASK})")
    parser.add_argument("--agent", required=True, help="a bot spec, module:attr, or a model file (.npz with its card)")
    parser.add_argument("--name", help="the row's learner name (default: the agent as given)")
    parser.add_argument("--steps", type=budget, default=None,
                        help="the agent's training budget in learner decisions (the row's budget; default: none)")
    parser.add_argument("--seed", type=int, default=None, help="the agent's training seed (default: none)")
    parser.add_argument("--games", type=int, default=None,
                        help="games of the task score (default 400 / 360 / 384 at 2-4 players, 500 solo)")
    parser.add_argument("--eval-games", type=int, default=400,
                        help="versus-2p: games against greedy beside the rating (even; 0: the rating alone)")
    parser.add_argument("--workers", type=int, default=1, help="processes for the games (default 1)")
    parser.add_argument(
        "--out", type=output_file(), default=DEFAULT_OUT, help="results JSON the row is merged into"
    )


def load_agent(text: str, players: int) -> Any:
    """The agent named by ``text`` (module doc) for a table of ``players``; :class:`AgentError` says why not."""
    module_name, colon, attr = text.partition(":")
    if colon and "=" in attr:  # a bot spec with options (``td:path=my_td.npz``)
        return _spec(text, players)
    path = Path(text)
    if path.suffix == ".npz":
        return _model_spec(path, players)
    if colon:  # a bot spec's options are key=value: module:attr has none
        if not module_name or not attr:
            raise AgentError(f"--agent {text!r}: expected module:attr, e.g. my_pkg.agents:MyAgent")
        return _imported(module_name, attr)
    return _spec(text, players)


def _spec(text: str, players: int) -> str:
    from shelfie_env.bots import check_table
    from shelfie_env.bots.spec import parse_spec

    try:
        name, _ = parse_spec(text)
        check_table(name, players)
    except ValueError as exc:
        raise AgentError(f"--agent {text!r}: {exc}") from None
    return text


def _model_spec(path: Path, players: int) -> str:
    from shelfie_env.bots.learned.card import load_card

    if not path.is_file():
        raise AgentError(f"--agent {path}: no such model file")
    try:
        card = load_card(path, players)
    except Exception as exc:  # a missing, unreadable or mismatched card says what is wrong
        raise AgentError(f"--agent {path}: {exc}") from None
    kind = "td" if str(card.get("algo", "")).lower().startswith("td") else "ppo"
    return f"{kind}:path={path}"


def _imported(module_name: str, attr: str) -> Any:
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may fail in any way on import
        raise AgentError(f"--agent {module_name}:{attr}: cannot import {module_name} ({type(exc).__name__}: {exc})") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AgentError(f"--agent {module_name}:{attr}: {module_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if callable(getattr(obj, "act", None)) and not isinstance(obj, type):
        return obj
    if isinstance(obj, type) or _is_factory(obj):
        try:
            made = obj()
        except Exception as exc:
            raise AgentError(f"--agent {module_name}:{attr}: calling it failed ({type(exc).__name__}: {exc})") from None
        if callable(getattr(made, "act", None)) or callable(made):
            return made
        raise AgentError(f"--agent {module_name}:{attr}: it returned {type(made).__name__}, which has no act(state)")
    if callable(obj):
        return obj
    raise AgentError(f"--agent {module_name}:{attr}: a {type(obj).__name__} has no act(state) and is not a function")


def _is_factory(obj: Any) -> bool:
    """A function of no arguments (a factory), as opposed to a function of the state."""
    import inspect

    if not callable(obj):
        return False
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie bench rate``."""
    from shelfie_env.arena.results_file import add_rows
    from shelfie_env.arena.rows import task_row
    from shelfie_env.benchmark.suite import task

    parser: argparse.ArgumentParser = args._parser
    t = task(args.task)
    if args.games is not None and args.games <= 0:
        parser.error(f"--games must be positive, got {args.games}")
    if args.games is not None and t.players > 1:
        from shelfie_env.arena.rate_agent import batch_games

        if args.games < batch_games(t.players):
            parser.error(f"--games must be at least one batch of the rating, {batch_games(t.players)} at "
                         f"{t.players} players; got {args.games}")
    if args.eval_games < 0 or args.eval_games % 2:
        parser.error(f"--eval-games must be 0 or a positive even number, got {args.eval_games}")
    if args.workers <= 0:
        parser.error(f"--workers must be positive, got {args.workers}")
    try:
        agent = load_agent(args.agent, t.players)
    except AgentError as exc:
        parser.error(str(exc))
    name = args.name or args.agent
    ns = argparse.Namespace(
        steps=args.steps or 0, eval_games=args.eval_games if t.players == 2 else 0, opponents=["greedy"],
        deals="test", workers=args.workers, rate_games=args.games,
        command=" ".join(["shelfie bench rate", *_argv_after("rate")]),
    )
    seed = (0 if args.seed is None else args.seed) if args.steps else None
    try:
        row = task_row(agent, ns, t.name, t.players, learner=name, seed=seed, train_s=0.0,
                       decisions=args.steps, mode="agent", workers=args.workers)
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # an agent that plays an illegal move
        print(f"{parser.prog}: error: --agent {args.agent}: {type(exc).__name__}: {one_line(str(exc), 160)}", file=sys.stderr)
        return 2
    add_rows(args.out, [row])
    print(json.dumps({k: row[k] for k in ("learner", "task", "players", "normalized") if k in row}
                     | {"score": row.get("rating", row.get("solo"))}, default=str))
    print(f"row merged into {args.out}; table it: shelfie bench report {args.out}")
    return 0


def _argv_after(command: str) -> list[str]:
    words = sys.argv[1:]
    return words[words.index(command) + 1:] if command in words else words
