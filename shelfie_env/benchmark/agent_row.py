"""``shelfie bench rate``: rate an agent trained elsewhere on a task and merge its row into a results file.

The agent is a bot spec, ``module:attr`` or a model file with its card, read as ``shelfie rate`` and
``shelfie errors`` read theirs (:func:`~shelfie_env.arena.agent_arg.load_agent`); the row is named
``--name``, by default :func:`~shelfie_env.arena.agent_arg.agent_name` (``my_pkg.agents.MyAgent`` for
``my_pkg.agents:MyAgent``).

The row is scored exactly as ``shelfie bench --task T`` scores a trained learner
(:func:`~shelfie_env.arena.rows.task_row`), names its ``task``, and the report tables it beside the
baselines.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from shelfie_env.arena.agent_arg import AgentError, agent_name, load_agent
from shelfie_env.argtypes import output_file
from shelfie_env.clip import one_line

DESCRIPTION = (
    "Rate an agent trained elsewhere on a benchmark task (a bot spec, module:attr, or a model file with its "
    "card) and merge its row into --out; shelfie bench report tables it beside the baselines."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from shelfie_env.arena.results_file import DEFAULT_OUT
    from shelfie_env.benchmark.suite import DEFAULT_TASK, TASKS
    from shelfie_env.benchmark.tasks import budget

    parser.add_argument("--task", default=DEFAULT_TASK, choices=list(TASKS), help=f"the task (default {DEFAULT_TASK})")
    parser.add_argument("--agent", required=True, help="a bot spec, module:attr, or a model file (.npz with its card)")
    parser.add_argument("--name", help="the row's learner name (default: the agent as given; module.attr for "
                        "module:attr)")
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
        parser.error(f"--agent {exc}")
    name = args.name or agent_name(args.agent)
    if not isinstance(agent, str):  # the games name an agent object by the row's name
        problem = name_problem(name)
        if problem:
            parser.error(f"--name {name!r}: {problem}")
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


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name an agent object in the games (``None``: it can): the arena reads a name
    as a bot spec, so it takes no ``:`` options, and the rating plays the ladder's levels by theirs."""
    if not name.strip():
        return "a row needs a name"
    if ":" in name:
        return "a name with ':' reads as a bot spec with options; choose one without it"
    if re.fullmatch(r"level-\d+", name.partition("#")[0]):
        return "a level of the ladder the rating plays against; choose another"
    return None


def _argv_after(command: str) -> list[str]:
    words = sys.argv[1:]
    return words[words.index(command) + 1:] if command in words else words
