"""The RL benchmark's conventions: budget, training opponents, evaluation and results file (docs/benchmark.md).

``scripts/bench_algos.py`` and your own learners (``docs/examples/my_learner.py``)
use the same pieces, so their rows compare:

* :func:`parser` / :func:`add_arguments` / :func:`parse_args`: the shared options (``--steps`` budget in
  learner decisions, ``--seeds``, ``--eval-games``, ``--opponents``, ``--deals``,
  ``--workers``, ``--out``);
* :func:`train_env`: ``shelfie/Versus-v0`` seen by the learner, against ``random`` or
  ``greedy`` (1/2 each, drawn per episode), learner seat random, rank reward plus the
  score-margin term;
* :func:`evaluate_row`: the luck-aware evaluation (:func:`shelfie_env.arena.evaluate`:
  duplicate matches on the ``test`` deals, raw and luck-corrected score rates with
  95 % intervals) as one results row;
* :func:`curve_point`: a cheap learning-curve point (plain arena games against
  ``greedy`` on the ``selection`` deals);
* :func:`add_rows` / :func:`load_results`: the results JSON that
  ``scripts/bench_report.py`` aggregates (:mod:`shelfie_env.train.benchmark_report`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.deals import deal_start
from shelfie_env.arena.values import DEFAULT_LUCK
from shelfie_env.envs.observation import encode
from shelfie_env.game.engine import Game

PROTOCOL = "duplicate-luck"
"""Protocol id of rows evaluated by :func:`evaluate_row`."""
PLAIN = "plain-arena"
"""Protocol id of rows evaluated by plain arena games (Wilson win rates); rows without a ``protocol`` key."""
PROTOCOLS = {
    PROTOCOL: {
        "evaluation": "shelfie_env.arena.evaluate: duplicate matches (every deal under both seatings), "
        "common dice, luck-corrected with td+planner",
        "deals": "test: dice seeds 30,000,000 + i (or the row's eval.deals)",
        "metrics": "score rate (wins + half the ties), raw and luck-corrected, 95% normal intervals over deals; "
        "variance factor (raw / corrected variance); win rate with its 95% Wilson interval",
        "curve": "plain arena games against greedy on the selection deals (dice seeds 10,000,000 + i), "
        "over learner decisions and training seconds",
    },
    PLAIN: {
        "evaluation": "plain arena games, seats rotated, common dice",
        "metrics": "win rate with its 95% Wilson interval, mean score",
    },
}
TRAIN_OPPONENTS = "random 1/2, greedy 1/2 per episode"
OPPONENTS = ("greedy", "planner", "random")
"""Evaluation opponents a row may have; ``greedy`` is always one (the report ranks on it)."""
DEFAULT_OUT = Path("artifacts/benchmark.json")
CURVE_DEALS = "selection"
MARGIN_COEF = 0.1

_BUDGET = re.compile(r"^(\d+(?:\.\d+)?)([kKmM]?)$")


def budget(text: str) -> int:
    """``argparse`` type of a budget in learner decisions: ``5000``, ``1_000_000``, ``200k``, ``1M``, ``2.5M``."""
    found = _BUDGET.match(text.replace("_", "").replace(",", "").strip())
    if not found:
        raise argparse.ArgumentTypeError(
            f"expected learner decisions such as 200000, 200k or 1M, got {text!r}"
        )
    value = float(found.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[found.group(2).lower()]
    if value != int(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number of decisions, got {text!r}")
    return int(value)


def budget_label(steps: int) -> str:
    """``1000000`` -> ``1M``, ``200000`` -> ``200k``, ``0`` -> ``-`` (no training)."""
    if steps <= 0:
        return "-"
    for size, unit in ((1_000_000, "M"), (1_000, "k")):
        if steps >= size and (steps * 10) % size == 0:
            return f"{steps / size:g}{unit}"
    return f"{steps:,}"


def add_arguments(parser: argparse.ArgumentParser, steps: int = 1_000_000) -> argparse.ArgumentParser:
    """The options every benchmark learner shares (docs/benchmark.md lists them)."""
    parser.add_argument(
        "--steps", type=budget, default=steps, help="budget: learner decisions per training run (e.g. 1M)"
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="training seeds")
    parser.add_argument(
        "--eval-games",
        type=int,
        default=1000,
        help="evaluation games against each opponent (even: every deal under both seatings)",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=["greedy", "planner"],
        choices=OPPONENTS,
        help="evaluation opponents (greedy always among them)",
    )
    parser.add_argument(
        "--deals", default="test", help="deal set of the evaluation: test, selection or a first seed"
    )
    parser.add_argument("--workers", type=int, default=1, help="processes for the evaluation games")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="results JSON (rows are merged into it)"
    )
    return parser


def parser(prog: str | None = None, steps: int = 1_000_000) -> argparse.ArgumentParser:
    """A parser with the shared options alone (your own learner's script)."""
    return add_arguments(
        argparse.ArgumentParser(prog=prog, description="a learner under the RL benchmark"), steps
    )


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None, *, train_only: bool = False
) -> argparse.Namespace:
    """``parser.parse_args`` plus the checks of the shared options (a bad value exits with a usage error);
    ``train_only``: ``--eval-games 0`` (train without evaluating) is allowed."""
    args = parser.parse_args(argv)
    if (args.eval_games <= 0 and not (train_only and args.eval_games == 0)) or args.eval_games % 2:
        zero = " or 0 (train only)" if train_only else ""
        parser.error(
            f"--eval-games must be a positive even number (both seatings of each deal){zero}, "
            f"got {args.eval_games}"
        )
    if "greedy" not in args.opponents:
        parser.error("--opponents must include greedy (the report ranks learners on it)")
    if args.workers <= 0:
        parser.error(f"--workers must be positive, got {args.workers}")
    try:
        deal_start(args.deals)
    except ValueError as exc:
        parser.error(f"--deals: {exc}")
    args.opponents = list(dict.fromkeys(args.opponents))
    args.command = " ".join([parser.prog, *(sys.argv[1:] if argv is None else argv)])
    return args


def train_env(
    seed: int,
    index: int = 0,
    *,
    opp_random: float = 0.5,
    opp_greedy: float = 0.5,
    margin_coef: float = MARGIN_COEF,
) -> Any:
    """The learner's env of the benchmark: ``shelfie/Versus-v0`` at 2 players against ``random`` or ``greedy``
    (probability 1/2 each, drawn per episode), learner seat random, reward = rank reward
    (+1 / 0 / -1) + 0.1 x (own - rival score) / 50 at game end; ``action_masks()`` gives the legal
    actions. Env ``index`` of a vector of envs gets its own stream (seed ``seed * 100 + index``).
    The keywords change the opponent mix and the margin coefficient (ablations; defaults: the protocol)."""
    from shelfie_env.train.selfplay import OpponentPool, SelfPlayEnv

    pool = OpponentPool(opp_random=opp_random, opp_greedy=opp_greedy, seed=seed * 100 + index)
    return SelfPlayEnv(2, pool, margin_coef=margin_coef, seed=seed * 100 + index)


class ObsBot:
    """A bot from ``fn(observation, legal_mask) -> action``: the training env's observation and a boolean
    mask of the legal actions (its ``action_masks()``)."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], int]) -> None:
        self.fn = fn

    def act_game(self, game: Game) -> int:
        return int(self.fn(encode(game, game.current), game.legal_mask().astype(bool)))

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def _side(rate: dict[str, Any]) -> dict[str, Any]:
    return {"score_rate": rate["score_rate"], "ci95": rate["score_rate_ci95"], "mean_reward": rate["mean"]}


def evaluate_row(
    bot: Any,
    args: argparse.Namespace,
    *,
    learner: str,
    seed: int | None,
    train_s: float,
    decisions: int | None = None,
    mode: str = "masked",
    workers: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One results row: ``bot`` (an object with ``act(state)`` or ``act_game(game)``, or a bot spec) evaluated
    by :func:`shelfie_env.arena.evaluate` against each of ``args.opponents``, ``args.eval_games`` games each
    on ``args.deals``, duplicate and luck-corrected. ``args.steps`` is the row's budget (0 and
    ``seed`` None for bots without training); ``decisions`` the learner decisions actually
    trained (default: the budget); ``extra`` fields are stored as they are."""
    from shelfie_env.arena import evaluate

    ev = evaluate(
        bot,
        opponents=args.opponents,
        games=args.eval_games,
        deals=args.deals,
        duplicate=True,
        luck=DEFAULT_LUCK,
        workers=args.workers if workers is None else workers,
        name="candidate",
    )
    row: dict[str, Any] = {
        "learner": learner,
        "seed": seed,
        "steps": int(args.steps) if seed is not None else 0,
        "decisions": int(decisions if decisions is not None else args.steps) if seed is not None else 0,
        "train_s": round(float(train_s), 1),
        "mode": mode,
        "protocol": PROTOCOL,
        "eval": {
            "deals": str(args.deals),
            "first_seed": deal_start(args.deals),
            "duplicate": True,
            "luck": DEFAULT_LUCK,
        },
    }
    for r, res in zip(ev.rows, ev.results):
        pair = res["pairings"][0]
        row[f"vs_{r.opponent}"] = {
            "games": r.games,
            "deals": r.units,
            "raw": _side(r.raw),
            "corrected": _side(r.corrected) if r.corrected is not None else None,
            "variance_ratio": r.variance_ratio,
            **{
                k: pair[k]
                for k in ("wins", "ties", "losses", "win_rate", "win_ci95", "mean_score", "sd_score")
            },
            "opp_mean_score": pair["opp_mean_score"],
        }
    row.update(extra)
    row.setdefault("command", getattr(args, "command", None))
    return row


def curve_point(bot: Any, games: int, decisions: int, train_s: float) -> dict[str, Any]:
    """A learning-curve point: ``games`` plain arena games against ``greedy`` on the ``selection`` deals
    (seats rotated, no duplicate, no luck correction: cheap enough to run while training)."""
    from shelfie_env.arena import run_arena

    res = run_arena(
        ["learner", "greedy"], 2, games, workers=1, ratings=False, bots={"learner": bot}, deals=CURVE_DEALS
    )
    pair = res["pairings"][0]
    return {
        "decisions": int(decisions),
        "train_s": round(float(train_s), 1),
        "games": pair["games"],
        "win_rate": pair["win_rate"],
        "win_ci95": pair["win_ci95"],
        "score_rate": pair["score_rate"],
    }


# ---------------------------------------------------------------- results file
class ResultsFileError(ValueError):
    """A results file that is missing, not JSON, or not shaped like the benchmark's."""


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row.get("protocol", PLAIN),
        row["learner"],
        row.get("variant", ""),
        row["seed"],
        row["steps"],
        row["mode"],
    )


def row_name(row: dict[str, Any]) -> str:
    """A row's learner with its ablation ``variant``, if it has one: ``maskable_ppo (ent_coef=0.0)``."""
    return f"{row['learner']} ({row['variant']})" if row.get("variant") else row["learner"]


def load_results(path: str | Path) -> dict[str, Any]:
    """The results file at ``path``: ``{"protocols": {...}, "rows": [...]}``; :class:`ResultsFileError`
    names the file and what is wrong with it. Rows without a ``protocol`` are :data:`PLAIN`."""
    path = Path(path)
    if not path.is_file():
        raise ResultsFileError(f"{path}: no such file (write it with scripts/bench_algos.py --out {path})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsFileError(f"{path}: not a JSON file ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ResultsFileError(
            f'{path}: expected a JSON object with a "rows" list (a benchmark results file)'
        )
    protocols = dict(data.get("protocols") or {})
    if "protocol" in data and PLAIN not in protocols:  # a file with one protocol block: the plain arena's
        protocols[PLAIN] = data["protocol"]
    for i, row in enumerate(data["rows"]):
        where = f"{path}: row {i}"
        if not isinstance(row, dict):
            raise ResultsFileError(f"{where}: expected an object, got {type(row).__name__}")
        missing = [k for k in ("learner", "seed", "steps", "mode") if k not in row]
        if missing:
            raise ResultsFileError(f"{where}: missing {', '.join(missing)}")
        if not isinstance(row["learner"], str) or not row["learner"]:
            raise ResultsFileError(f"{where}: learner must be a name, got {row['learner']!r}")
        if isinstance(row["steps"], bool) or not isinstance(row["steps"], int) or row["steps"] < 0:
            raise ResultsFileError(
                f"{where} ({row['learner']}): steps must be a whole number >= 0, got {row['steps']!r}"
            )
        if row["seed"] is not None and (isinstance(row["seed"], bool) or not isinstance(row["seed"], int)):
            raise ResultsFileError(
                f"{where} ({row['learner']}): seed must be an integer or null, got {row['seed']!r}"
            )
        row.setdefault("protocol", PLAIN)
        if row["protocol"] == PROTOCOL and row["mode"] != "stopped":
            g = row.get("vs_greedy")
            ok = isinstance(g, dict) and all(
                isinstance(g.get(side), dict) and isinstance(g[side].get("score_rate"), (int, float))
                for side in ("raw", "corrected")
            )
            if not ok:
                raise ResultsFileError(
                    f"{where} ({row['learner']}, seed {row['seed']}): a {PROTOCOL} row needs vs_greedy with "
                    "raw and corrected score rates"
                )
    return {"protocols": protocols, "rows": data["rows"]}


def add_rows(path: str | Path, rows: list[dict[str, Any]]) -> Path:
    """Merge ``rows`` into the results file at ``path`` (created if missing): a new row replaces an old
    one of the same protocol, learner, variant, seed, budget and mode; the others stay. Returns ``path``."""
    path = Path(path)
    old = load_results(path) if path.exists() else {"protocols": {}, "rows": []}
    for row in rows:
        row.setdefault("protocol", PROTOCOL)
    new = {_key(r) for r in rows}
    kept = [r for r in old["rows"] if _key(r) not in new]
    merged = sorted(
        kept + rows,
        key=lambda r: (
            r["protocol"] != PROTOCOL,
            r["steps"] > 0,
            row_name(r),
            r["steps"],
            r["seed"] or 0,
            r["mode"],
        ),
    )
    protocols = {
        **old["protocols"],
        **{p: PROTOCOLS[p] for p in {r["protocol"] for r in rows} if p in PROTOCOLS},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"protocols": protocols, "rows": merged}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
