"""``shelfie bench`` (also ``python -m shelfie_env.benchmark``): train learners and rate them under the protocol.

``shelfie bench --steps 1M --seeds 0 1 2 --algos maskable_ppo td`` trains each learner from random weights
for the budget (:mod:`shelfie_env.benchmark.learners`), rates it with the luck-aware evaluation
(:func:`~shelfie_env.arena.rows.evaluate_row`) and merges its row into ``--out`` as soon as the
run is done; ``--bots`` adds rows of bots without training. ``shelfie bench report FILE`` aggregates a
results file over seeds (:mod:`shelfie_env.arena.aggregate`). ``docs/benchmark.md`` lists every option.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shelfie_env.arena.rows import budget_label, row_command
from shelfie_env.argtypes import output_file
from shelfie_env.benchmark.ablations import ABLATION, REROLLS, TRAIN_MIXES
from shelfie_env.benchmark.tasks import add_arguments as add_protocol_arguments
from shelfie_env.benchmark.tasks import budget, check_args

LEARNERS = ("maskable_ppo", "maskable_ppo_expect", "a2c", "td", "rllib_ppo", "ppo_afterstate", "ppo_flat")
"""Every learner ``--algos`` takes (:data:`shelfie_env.benchmark.learners.LEARNERS`)."""
BOTS = ("random", "greedy", "planner", "openspiel-mcts")
"""Rows without training ``--bots`` can add."""
DEFAULT_RUN_DIR = Path("artifacts/bench_runs")
EXTRAS = {"ray": "scale", "pyspiel": "openspiel", "open_spiel": "openspiel", "numba": "fast"}
"""The extra that installs a missing top-level module (others: ``train``)."""
USAGE = "shelfie bench"


def _description() -> str:
    return (
        "Train RL learners from random weights for a budget of learner decisions and rate them under the "
        "benchmark's protocol (duplicate deals, luck-corrected, against greedy and planner); each finished "
        "row is merged into --out. `shelfie bench report FILE` aggregates the seeds (docs/benchmark.md)."
    )


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``shelfie bench`` and its ``report`` subcommand (docs/benchmark.md lists them)."""
    from shelfie_env.arena import aggregate as report
    from shelfie_env.benchmark.suite import DEFAULT_TASK, TASKS

    parser.description = _description()
    add_protocol_arguments(parser)
    parser.add_argument(
        "--task",
        default=DEFAULT_TASK,
        choices=list(TASKS),
        help=f"the task to train and rate on (default {DEFAULT_TASK}; shelfie bench tasks lists them)",
    )
    parser.add_argument(
        "--rate-games",
        type=int,
        help="games of each row's task score: rate() at 2-4 players (default 400 / 360 / 384), solo games (500)",
    )
    parser.add_argument(
        "--no-rating-curve",
        action="store_true",
        help="no task-score points at 1/4 and 1/2 of the budget (the report's sample-efficiency curve)",
    )
    parser.add_argument(
        "--algos",
        nargs="*",
        default=list(LEARNERS),
        choices=LEARNERS,
        help="learners to train (default: all; --algos alone: none, reference rows only)",
    )
    parser.add_argument(
        "--bots",
        nargs="*",
        default=None,
        choices=BOTS,
        help="rows without training (default: random greedy openspiel-mcts at versus-2p, random greedy planner "
        "elsewhere; none: --bots alone)",
    )
    parser.add_argument(
        "--mcts-simulations", type=int, default=100, help="simulations a move of the openspiel-mcts row"
    )
    parser.add_argument("--curve-every", type=int, default=0, help="decisions between curve points (0: none)")
    parser.add_argument(
        "--curve-games", type=int, default=200, help="games against greedy at each curve point"
    )
    parser.add_argument("--plot", type=Path, help="write the learning curves here (PNG)")
    parser.add_argument(
        "--save", type=Path, help="export every trained SB3 and ppo_flat network here (.npz and card)"
    )
    parser.add_argument(
        "--models", type=Path, nargs="+", help="evaluate these --save exports instead of training"
    )
    runs = parser.add_argument_group("checkpoints and resume (maskable_ppo, maskable_ppo_expect, ppo_flat)")
    runs.add_argument(
        "--run-dir",
        type=Path,
        default=DEFAULT_RUN_DIR,
        help=f"folder of the run folders, one per learner, variant, seed and budget (default {DEFAULT_RUN_DIR})",
    )
    runs.add_argument(
        "--checkpoint-every",
        type=budget,
        default=200_000,
        help="learner decisions between checkpoints of the whole run (default 200k)",
    )
    runs.add_argument(
        "--stop-after",
        type=budget,
        help="train this many decisions of each run, checkpoint and stop (continue with --resume)",
    )
    runs.add_argument(
        "--resume",
        action="store_true",
        help="continue each run from the checkpoint in its run folder "
        "(a run folder is trusted like code: its checkpoint is a pickle)",
    )
    ab = parser.add_argument_group(
        "settings a run may change (the run is tagged with them; default: the protocol's)"
    )
    ab.add_argument("--obs", choices=("default", "features"), help="observation (ppo_flat: features)")
    ab.add_argument(
        "--reroll",
        choices=REROLLS,
        help="reroll decisions: by SPEC ids (ids, the protocol's), by faces kept (keep), or played by a rule "
        "(stop, greedy: a diagnostic)",
    )
    ab.add_argument("--score-reward", type=float, help="reward per point of own score gain (protocol: 0)")
    ab.add_argument(
        "--margin-coef",
        type=float,
        help=f"score-margin shaping at game end (protocol: {ABLATION['margin_coef']})",
    )
    ab.add_argument(
        "--train-opponents",
        choices=sorted(TRAIN_MIXES),
        help="training opponents (protocol: mix, random or greedy 1/2 each)",
    )
    ab.add_argument("--net-arch", type=int, nargs="+", help="hidden layer widths (protocol: 256 256)")
    ab.add_argument("--ent-coef", type=float, help="entropy coefficient (protocol: 0.01)")
    ab.add_argument("--batch-size", type=int, help="PPO minibatch size of the SB3 learners (protocol: 512)")
    ab.add_argument("--n-epochs", type=int, help="PPO epochs per rollout of the SB3 learners (protocol: 4)")
    ab.add_argument(
        "--flat",
        nargs="+",
        default=[],
        metavar="FIELD=VALUE",
        help="other PPOFlatConfig fields of ppo_flat (e.g. stop_bias=4 ent_coef_reroll=0.05)",
    )
    sub = parser.add_subparsers(dest="bench_command", metavar="{tasks,rate,report}")
    tasks = sub.add_parser("tasks", help="list the benchmark's tasks", description="The benchmark's tasks.")
    tasks.add_argument("--json", type=output_file(), metavar="FILE", help="also write the tasks as JSON")
    tasks.set_defaults(_parser=tasks)
    from shelfie_env.benchmark import agent_row

    rate = sub.add_parser("rate", help="rate an agent trained elsewhere on a task and write its row",
                          description=agent_row.DESCRIPTION)
    agent_row.add_arguments(rate)
    rate.set_defaults(_parser=rate)
    rep = sub.add_parser(
        "report",
        help="aggregate a results file over seeds (IQM with intervals, profiles, curves)",
        description=report.DESCRIPTION,
    )
    report.add_arguments(rep)
    rep.set_defaults(_parser=rep)
    return parser


def build_parser(prog: str = USAGE) -> argparse.ArgumentParser:
    """The ``shelfie bench`` parser on its own (``python -m shelfie_env.benchmark``)."""
    parser = argparse.ArgumentParser(prog=prog)
    add_arguments(parser)
    parser.set_defaults(_parser=parser)
    return parser


def settings_of(algo: str, args: argparse.Namespace) -> dict[str, Any]:
    """``algo``'s settings: its own (:func:`~shelfie_env.benchmark.learners.base`) and the options given."""
    from shelfie_env.benchmark.ablations import reroll_setting
    from shelfie_env.benchmark.learners import base

    out = base(algo)
    for key in ABLATION:
        value = getattr(args, key)
        if value is not None:
            out[key] = reroll_setting(value) if key == "reroll" else value
    return out


def given(args: argparse.Namespace) -> list[str]:
    """The settings options the command sets."""
    return [k for k in ABLATION if getattr(args, k) is not None]


def check_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """Refuse a setting a chosen learner cannot change, or a resume option of one that cannot resume; returns
    the parsed ``--flat`` fields."""
    from shelfie_env.benchmark.learners import RESUMABLE, SETTINGS

    algos = [] if args.models else args.algos
    for key in given(args):
        flag = "--" + key.replace("_", "-")
        cannot = [a for a in algos if key not in SETTINGS.get(a, ())]
        if cannot:
            parser.error(f"{flag} does not apply to {', '.join(cannot)} (--algos)")
    for algo in algos:
        s = settings_of(algo, args)
        if algo == "a2c" and s["reroll"] == "keep":
            parser.error("--reroll keep does not apply to a2c (it trains on one-game envs with SPEC ids)")
        if algo == "ppo_flat" and s["reroll"] in ("stop", "greedy"):
            parser.error(f"--reroll {s['reroll']} does not apply to ppo_flat (ids or keep)")
        if algo in ("maskable_ppo", "maskable_ppo_expect") and s["reroll"] in ("stop", "greedy"):
            if s["obs"] != "default" or s["score_reward"]:
                parser.error(
                    f"--reroll {s['reroll']} trains on one-game envs: no --obs features, --score-reward"
                )
    flat: dict[str, Any] = {}
    if args.flat:
        if algos != ["ppo_flat"]:
            parser.error("--flat applies to ppo_flat alone (--algos ppo_flat)")
        from shelfie_env.benchmark.learners.ppo_flat import parse_flat

        try:
            flat = parse_flat(args.flat)
        except ValueError as exc:
            parser.error(f"--flat: {exc}")
    if args.resume or args.stop_after:
        cannot = [
            a
            for a in algos
            if a not in RESUMABLE
            or (a != "ppo_flat" and settings_of(a, args)["reroll"] in ("stop", "greedy"))
        ]
        if cannot:
            flag = "--resume" if args.resume else "--stop-after"
            parser.error(
                f"{flag}: {', '.join(cannot)} cannot resume (learners that can: {', '.join(RESUMABLE)})"
            )
    return flat


def tag_of(algo: str, settings: dict[str, Any], flat: dict[str, Any]) -> str:
    """The run's ``variant``: its settings that differ from its learner's own, then its ``--flat`` fields."""
    from shelfie_env.benchmark.ablations import variant
    from shelfie_env.benchmark.learners import base

    parts = [variant(settings, base(algo))] + [
        f"{k}={'x'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in flat.items()
    ]
    return ",".join(p for p in parts if p)


def run_folder(root: Path, algo: str, tag: str, seed: int, steps: int, task: str = "versus-2p") -> Path:
    """``root/[<task>_]<learner>[_<variant>]_s<seed>_<budget>`` (the task named unless it is ``versus-2p``)."""
    safe = re.sub(r"[^A-Za-z0-9.]+", "-", tag).strip("-")
    lead = "" if task == "versus-2p" else f"{task}_"
    return root / f"{lead}{algo}{'_' + safe if safe else ''}_s{seed}_{budget_label(steps)}"


def reference_bot(name: str, simulations: int) -> tuple[str, Any]:
    """A ``--bots`` row's name and bot (``random`` seeded; the others as specs, at any table size)."""
    from shelfie_env.bots import make

    if name == "openspiel-mcts":
        return f"openspiel-mcts:simulations={simulations}", make("openspiel-mcts", simulations=simulations)
    return name, make("random", seed=1) if name == "random" else name


def model_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``--models``: each ``--save`` export evaluated like a trained learner (a ``--reroll stop|greedy`` model
    plays with the rule its card records), each row merged into ``--out`` when it is done."""
    from shelfie_env.arena.results_file import add_rows
    from shelfie_env.arena.rows import evaluate_row
    from shelfie_env.benchmark.ablations import FixedRerollsBot, reroll_rule, reroll_setting, train_opponents
    from shelfie_env.benchmark.learners import base
    from shelfie_env.bots.learned.bot import PPOBot, load_policy

    rows = []
    for path in args.models:
        policy, card = load_policy(path, 2)
        config = dict(card.get("config", {}))
        if "opponents" in config:  # exports made before the option was renamed --train-opponents
            config.setdefault("train_opponents", config.pop("opponents"))
        algo = card.get("algo", "maskable_ppo")
        own = base(algo)
        settings = {**own, **{k: v for k, v in config.items() if k in ABLATION}}
        settings["reroll"] = reroll_setting(settings["reroll"])
        settings["obs"] = card.get("obs", settings["obs"])
        rule = reroll_rule(settings["reroll"])
        bot = PPOBot(policy, 2, card=card) if rule is None else FixedRerollsBot(policy, rule)
        decisions = int(card.get("steps", 0))
        steps = int(config.get("budget") or config.get("total_steps") or decisions)
        tag = tag_of(algo, settings, {})
        row = evaluate_row(
            bot,
            argparse.Namespace(**{**vars(args), "steps": steps}),
            learner=algo,
            seed=config.get("seed", 0),
            train_s=float(card.get("wall_time_s", 0.0)),
            decisions=decisions,
            train_opponents=train_opponents(settings),
            model=path.name,
            settings=settings,
            **({"variant": tag} if tag else {}),
        )
        add_rows(args.out, [row])
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def list_tasks(args: argparse.Namespace) -> int:
    """``shelfie bench tasks``: every task's name, env and options, table size and score."""
    from shelfie_env.benchmark.learners import TASKS_OF
    from shelfie_env.benchmark.suite import TASKS

    lines = [
        "| task | env id | env options | players | training opponents | score | normalized | learners |",
        "|---|---|---|---:|---|---|---|---|",
    ]
    out = []
    for t in TASKS.values():
        d = t.describe()
        d["learners"] = [a for a, fits in TASKS_OF.items() if t.name in fits]
        opts = ", ".join(f"{k}={v}" for k, v in d["env_options"].items()) or "-"
        lines.append(f"| {t.name} | {t.env_id} | {opts} | {t.players} | {d['opponents']} | {t.score} | {d['normalized']} | "
                     f"{', '.join(d['learners'])} |")
        out.append(d)
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


def check_task_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse a learner, a reference bot or an option that does not fit ``--task``."""
    from shelfie_env.benchmark.learners import check_task
    from shelfie_env.benchmark.suite import REFERENCE_BOTS, task

    t = task(args.task)
    if args.bots is None:
        args.bots = ["random", "greedy", "openspiel-mcts"] if t.players == 2 else list(REFERENCE_BOTS)
    for algo in [] if args.models else args.algos:
        try:
            check_task(algo, t.name)
        except ValueError as exc:
            parser.error(f"--task {t.name}: {exc}")
    if t.players != 2:
        if args.curve_every:
            parser.error(f"--curve-every: the plain curve is a 2-player one; {t.name}'s curve is its rating "
                         "curve (points at 1/4 and 1/2 of the budget)")
        if "openspiel-mcts" in args.bots:
            parser.error(f"--bots openspiel-mcts plays 2 players only, not {t.name}")
        if args.models:
            parser.error(f"--models: rate exports on {t.name} with shelfie bench rate --task {t.name}")
    if args.rate_games is not None and args.rate_games <= 0:
        parser.error(f"--rate-games must be positive, got {args.rate_games}")


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie bench`` (``shelfie bench report`` goes to the report)."""
    parser: argparse.ArgumentParser = args._parser
    if getattr(args, "bench_command", None) == "report":
        from shelfie_env.arena import aggregate as report

        return report.run(args)
    if getattr(args, "bench_command", None) == "tasks":
        return list_tasks(args)
    if getattr(args, "bench_command", None) == "rate":
        from shelfie_env.benchmark import agent_row

        return agent_row.run(args)
    check_args(parser, args, getattr(args, "_argv", None) or _argv_after("bench"), train_only=True)
    if args.curve_every < 0 or args.curve_games < 0:
        parser.error("--curve-every and --curve-games must be >= 0")
    if args.mcts_simulations <= 0:
        parser.error(f"--mcts-simulations must be positive, got {args.mcts_simulations}")
    flat = check_settings(parser, args)
    check_task_args(parser, args)
    try:
        bots = [reference_bot(name, args.mcts_simulations) for name in dict.fromkeys(args.bots)]
    except ImportError as exc:
        parser.error(f"--bots: {exc}")
    try:
        rows = train_and_rate(args, bots, flat)
    except ValueError as exc:  # a checkpoint of another run, a bad model file
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # a learner's library is not installed
        extra = EXTRAS.get((exc.name or "").split(".")[0], "train")
        print(
            f"{parser.prog}: error: this needs the missing module {exc.name!r} "
            f"(pip install 'shelfie-env[{extra}]')",
            file=sys.stderr,
        )
        return 2
    from shelfie_env.arena.aggregate import plot_runs, rows_table
    from shelfie_env.arena.results_file import load_results

    if not rows:
        return 0
    merged = load_results(args.out)["rows"]
    if args.task == "versus-2p":
        print(rows_table(merged, args.opponents))
    else:
        from shelfie_env.arena.suite_report import summarize, task_runs, task_table

        groups, _ = task_runs(merged, args.deals)
        print(task_table(args.task, summarize({g: r for g, r in groups.items() if g[0] == args.task}, 2000)))
    print(f"rows merged into {args.out}; aggregate them: shelfie bench report {args.out}")
    if args.plot:
        plot_runs(merged, args.plot)
    return 0


def train_and_rate(
    args: argparse.Namespace, bots: list[tuple[str, Any]], flat: dict[str, Any]
) -> list[dict[str, Any]]:
    """The command's rows, each merged into ``args.out`` as soon as it is done."""
    from shelfie_env.arena.results_file import add_rows
    from shelfie_env.arena.rows import Curve, task_row
    from shelfie_env.benchmark.ablations import RawChoiceBot, reroll_rule
    from shelfie_env.benchmark.learners import Run, train, train_opponents_of
    from shelfie_env.benchmark.suite import task

    t = task(args.task)
    rows: list[dict[str, Any]] = model_rows(args) if args.models and args.eval_games else []
    for name, bot in bots if args.eval_games else ():
        mode = "bot" if name in BOTS else "search"
        # a reference bot that is one of the opponents (greedy) gets its task score alone: its score rate
        # against itself is 50 % by definition, and a row's score rates are read against greedy
        bot_args = argparse.Namespace(**{**vars(args), "eval_games": 0}) if name in args.opponents else args
        rows.append(task_row(bot, bot_args, t.name, t.players, learner=name, seed=None, train_s=0.0, mode=mode))
        add_rows(args.out, rows[-1:])
        print(json.dumps(rows[-1]), flush=True)
    marks = () if args.no_rating_curve else (args.steps // 4, args.steps // 2)
    for algo in args.algos if not args.models else ():
        settings = settings_of(algo, args)
        tag = tag_of(algo, settings, flat)
        for seed in args.seeds:
            folder = run_folder(args.run_dir, algo, tag, seed, args.steps, t.name)
            spec = Run(
                algo,
                args.steps,
                seed,
                Curve(args.curve_every, args.curve_games, marks if args.eval_games else (), t.players),
                settings,
                run_dir=folder,
                checkpoint_every=args.checkpoint_every,
                resume=args.resume,
                stop_after=args.stop_after,
                save=args.save,
                flat=flat,
                tag=tag,
                players=t.players,
            )
            trained = train(spec)
            if trained is None:
                again = " ".join(
                    [args.command, "--resume"] if "--resume" not in args.command else [args.command]
                )
                print(json.dumps({"stopped": str(folder), "seed": seed, "continue": again}), flush=True)
                continue
            extra: dict[str, Any] = {
                "train_opponents": train_opponents_of(algo, settings) if t.players > 1 else "none (solo)",
                **(
                    {"settings": settings}
                    if algo in ("maskable_ppo", "maskable_ppo_expect", "a2c", "ppo_flat")
                    else {}
                ),
                **trained.extra,
            }
            if tag:
                extra["variant"] = tag
            if not args.eval_games:  # --eval-games 0: trained, not evaluated
                row = {
                    "learner": algo,
                    "seed": seed,
                    "steps": args.steps,
                    "decisions": trained.decisions,
                    "train_s": round(trained.train_s, 1),
                    "mode": "stopped",
                    "task": t.name,
                    "players": t.players,
                    **extra,
                    "curve": spec.curve.points,
                    "command": row_command(args.command),
                }
            else:
                bot, workers = trained.bot, None
                if algo == "a2c" and reroll_rule(settings["reroll"]) is None:
                    bot, workers = RawChoiceBot(trained.policy), 1  # counts its first choices in this process
                row = task_row(
                    bot,
                    args,
                    t.name,
                    t.players,
                    learner=algo,
                    seed=seed,
                    train_s=trained.train_s,
                    decisions=trained.decisions,
                    workers=workers,
                    rating_curve=spec.curve.ratings,
                    **extra,
                )
                if isinstance(bot, RawChoiceBot):
                    row["illegal_first_choice_rate"] = bot.illegal / max(bot.decisions, 1)
                row["curve"] = spec.curve.points
            add_rows(args.out, [row])
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def _argv_after(command: str) -> list[str]:
    """The words after ``command`` on this process's command line (the row's recorded command)."""
    words = sys.argv[1:]
    return words[words.index(command) + 1 :] if command in words else words


def main(argv: Sequence[str] | None = None, prog: str = USAGE) -> int:
    """``python -m shelfie_env.benchmark`` and the scripts: the command with its own parser."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    args._argv = argv
    try:
        return run(args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
