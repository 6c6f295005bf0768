"""The RL benchmark's protocol: budget, training opponents and reward, evaluation, learning curves.

``shelfie bench`` and your own learners (``docs/examples/my_learner.py``) use the same
pieces, so their rows compare:

* :func:`parser` / :func:`add_arguments` / :func:`parse_args`: the shared options (``--steps`` budget in
  learner decisions, ``--seeds``, ``--eval-games``, ``--opponents``, ``--deals``,
  ``--workers``, ``--out``);
* :func:`train_env` (one game at a time, ``shelfie/Versus-v0``) and :func:`train_vec_env` (many games in
  one call, the batched ``VersusVectorEnv``): the learner against ``random`` or ``greedy`` (1/2 each, drawn
  per game), learner seat random, rank reward plus the score-margin term at game end;
* :func:`evaluate_row`: the luck-aware evaluation (:func:`shelfie_env.arena.evaluate`:
  duplicate matches on the ``test`` deals, raw and luck-corrected score rates with
  95 % intervals) as one results row;
* :class:`Curve` / :func:`curve_point`: cheap learning-curve points (plain arena games against
  ``greedy`` on the ``selection`` deals) over learner decisions and training seconds.

The results file is :mod:`shelfie_env.benchmark.results`, the report :mod:`shelfie_env.benchmark.report`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
        "games factor (raw / corrected variance); win rate with its 95% Wilson interval",
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
    """``parser.parse_args`` plus :func:`check_args` (a bad value exits with a usage error)."""
    args = parser.parse_args(argv)
    return check_args(parser, args, sys.argv[1:] if argv is None else argv, train_only=train_only)


def check_args(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    argv: Sequence[str],
    *,
    train_only: bool = False,
) -> argparse.Namespace:
    """Check the shared options of parsed ``args`` (``parser.error`` names a bad one) and record the command
    (``parser.prog`` and ``argv``) in ``args.command``; ``train_only``: ``--eval-games 0`` is allowed."""
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
    args.command = " ".join([parser.prog, *argv])
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
    from shelfie_env.train.maskable_ppo.selfplay import OpponentPool, SelfPlayEnv

    pool = OpponentPool(opp_random=opp_random, opp_greedy=opp_greedy, seed=seed * 100 + index)
    return SelfPlayEnv(2, pool, margin_coef=margin_coef, seed=seed * 100 + index)


class MixPool:
    """The training opponents as a pool of the batched envs (``draw()`` per seat and game): ``random`` with
    probability ``p_random``, else ``greedy``; both play inside the compiled step."""

    def __init__(self, p_random: float = 0.5, seed: int | None = None) -> None:
        from shelfie_env.bots import make

        if not 0.0 <= p_random <= 1.0:
            raise ValueError(f"p_random must be in [0, 1], got {p_random}")
        self.p_random = p_random
        self.rng = np.random.default_rng(None if seed is None else [seed, 1])  # apart from the seat draw's
        self.random = make("random", seed=seed)
        self.greedy = make("greedy")

    def draw(self) -> Any:
        return self.random if self.rng.random() < self.p_random else self.greedy

    def code(self, bot: Any) -> int:
        """-1 the learner's seat, 0 ``random``, 1 ``greedy`` (checkpoints)."""
        return -1 if bot is None else 0 if bot is self.random else 1

    def bot(self, code: int) -> Any:
        return None if code < 0 else (self.random, self.greedy)[code]


def margin_term(scores: Sequence[int], seat: int, coef: float) -> float:
    """``coef x (own - best rival score) / 50``: the reward the benchmark adds to the rank reward at game end."""
    own = scores[seat]
    return coef * (own - max(s for k, s in enumerate(scores) if k != seat)) / 50.0


def seats_state(core: Any, pool: MixPool) -> dict[str, Any]:
    """Everything random or in flight in a :class:`~shelfie_env.envs.vector.BatchedSeats` whose opponents are
    ``pool``: the games, every random stream, the seats and their bots (a checkpoint's env part)."""
    return {
        "S": core.batch.S.copy(),
        "M": core.batch.M.copy(),
        "dice": core.batch.rng.copy(),
        "bot_rng": core.bot_rng.copy(),
        "learner": core.learner.copy(),
        "seat_rng": core._seat_rng.bit_generator.state,
        "seat_bots": np.vectorize(pool.code, otypes=[np.int64])(core._seat_bot),
        "kinds": core._kinds.copy(),
        "ep_return": core.ep_return.copy(),
        "ep_length": core.ep_length.copy(),
        "pool_rng": pool.rng.bit_generator.state,
    }


def load_seats_state(core: Any, pool: MixPool, state: dict[str, Any]) -> None:
    """Restore :func:`seats_state` into ``core`` and ``pool`` (the same shapes)."""
    b = core.batch
    b.S[:], b.M[:], b.rng[:] = state["S"], state["M"], state["dice"]
    core.bot_rng[:], core.learner[:] = state["bot_rng"], state["learner"]
    core._seat_rng.bit_generator.state = state["seat_rng"]
    core._seat_bot[:] = np.vectorize(pool.bot, otypes=[object])(state["seat_bots"])
    core._kinds[:] = state["kinds"]
    core.ep_return[:], core.ep_length[:] = state["ep_return"], state["ep_length"]
    pool.rng.bit_generator.state = state["pool_rng"]


def train_vec_env(
    num_envs: int = 64,
    seed: int = 0,
    *,
    obs: str = "default",
    reroll: str = "ids",
    score_reward: float = 0.0,
    p_random: float = 0.5,
    margin_coef: float = MARGIN_COEF,
    autoreset_mode: Any = "SameStep",
) -> Any:
    """The benchmark's training env as one Gymnasium vector env of ``num_envs`` 2-player games: the batched
    ``VersusVectorEnv`` against ``random`` or ``greedy`` (1/2 each, drawn per game), learner seat drawn per
    game, reward = rank reward (+1 / 0 / -1) + 0.1 x (own - rival score) / 50 at game end (the reward of
    :func:`train_env`); ``action_masks()`` gives the ``(num_envs, 120)`` legal masks. By default a finished
    game restarts in the step that ends it (Gymnasium's ``SAME_STEP``, its last observation in
    ``infos["final_obs"]``), so every step is ``num_envs`` learner decisions of the budget. ``obs``, ``reroll``
    and ``score_reward`` are the env options of ``docs/environment.md``. Needs numba (the ``fast`` or
    ``train`` extra)."""
    from shelfie_env.envs.vector import VersusVectorEnv

    class BenchVectorEnv(VersusVectorEnv):
        """``VersusVectorEnv`` whose end-of-game reward also has the benchmark's score-margin term."""

        def step(self, actions: Any) -> Any:
            obs_, rewards, terminated, truncated, infos = super().step(actions)
            if margin_coef and terminated.any():
                for i in np.flatnonzero(terminated):
                    rewards[i] += margin_term(infos["scores"][i], int(infos["seat"][i]), margin_coef)
            return obs_, rewards, terminated, truncated, infos

    pool = MixPool(p_random, seed)
    env = BenchVectorEnv(
        num_envs,
        2,
        opponents=pool,
        seed=seed,
        obs=obs,
        reroll=reroll,
        score_reward=score_reward,
        autoreset_mode=autoreset_mode,
    )
    env.pool = pool
    return env


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
    row.setdefault("command", row_command(getattr(args, "command", None)))
    return row


_WHERE_AND_WHEN = {"--run-dir": 1, "--out": 1, "--save": 1, "--plot": 1, "--stop-after": 1, "--resume": 0}
"""Options that say where files go or when a run pauses: a row's result does not depend on them."""


def row_command(command: str | None) -> str | None:
    """``command`` as a row records it: without the options of :data:`_WHERE_AND_WHEN`, so the row
    names no folder of one machine and a resumed run records the command of the run it continues."""
    if command is None:
        return None
    words, kept = command.split(), []
    i = 0
    while i < len(words):
        name = words[i].split("=", 1)[0]
        if name in _WHERE_AND_WHEN:
            i += 1 + (_WHERE_AND_WHEN[name] if "=" not in words[i] else 0)
            continue
        kept.append(words[i])
        i += 1
    return " ".join(kept)


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


class Curve:
    """Learning-curve points every ``every`` decisions (:func:`curve_point`), with the training seconds so far
    (curve games not counted); :meth:`state` / :meth:`load_state` carry it through a checkpoint."""

    def __init__(self, every: int, games: int) -> None:
        self.every, self.games = every, games
        self.points: list[dict[str, Any]] = []
        self.next = every
        self.eval_s = 0.0
        self.start = time.time()

    def due(self, decisions: int) -> bool:
        return self.every > 0 and decisions >= self.next

    def train_s(self) -> float:
        """Seconds spent training so far (curve evaluations not counted)."""
        return time.time() - self.start - self.eval_s

    def state(self) -> dict[str, Any]:
        return {"points": list(self.points), "next": self.next, "train_s": self.train_s()}

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue a curve saved by :meth:`state`: its points, schedule and training seconds."""
        self.points, self.next = list(state["points"]), int(state["next"])
        self.eval_s, self.start = 0.0, time.time() - float(state["train_s"])

    def add(self, decisions: int, bot: Any, final: bool = False) -> None:
        if not final:
            while self.next <= decisions:
                self.next += self.every
        elif self.points and self.points[-1]["decisions"] == decisions:
            return
        if self.games <= 0 or (final and self.every <= 0):
            return
        t0 = time.time()
        with _rng_kept():  # a run with curve points trains exactly as one without
            point = curve_point(bot, self.games, decisions, self.train_s())
        self.eval_s += time.time() - t0
        self.points.append(point)
        print(json.dumps({"curve": point}), flush=True)


@contextmanager
def _rng_kept() -> Iterator[None]:
    """The global random states of ``random``, NumPy and torch (if loaded) restored after the block."""
    torch = sys.modules.get("torch")
    states = (random.getstate(), np.random.get_state(), torch.get_rng_state() if torch else None)
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        if torch is not None:
            torch.set_rng_state(states[2])
