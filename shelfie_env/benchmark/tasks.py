"""The benchmark's task: the budget, the options every learner shares, the training env and its reward.

``shelfie bench`` and your own learners (``docs/examples/my_learner.py``) use the same
pieces, so their rows compare:

* :func:`parser` / :func:`add_arguments` / :func:`parse_args`: the shared options (``--steps`` budget in
  learner decisions, ``--seeds``, ``--eval-games``, ``--opponents``, ``--deals``,
  ``--workers``, ``--out``);
* :func:`train_env` (one game at a time, ``shelfie/Versus-v0``) and :func:`train_vec_env` (many games in
  one call, the batched ``VersusVectorEnv``): the learner against ``random`` or ``greedy`` (1/2 each, drawn
  per game), learner seat random, rank reward plus the score-margin term at game end.

A row's evaluation, its learning curve and the results file are the evaluation room's
(:mod:`shelfie_env.arena.rows`, :mod:`shelfie_env.arena.results_file`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from shelfie_env.arena.deals import deal_start
from shelfie_env.arena.results_file import DEFAULT_OUT
from shelfie_env.arena.rows import OPPONENTS
from shelfie_env.argtypes import output_file

TRAIN_OPPONENTS = "random 1/2, greedy 1/2 per episode"
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
        "--out", type=output_file(), default=DEFAULT_OUT, help="results JSON (rows are merged into it)"
    )
    return parser


def parser(prog: str | None = None, steps: int = 1_000_000) -> argparse.ArgumentParser:
    """A parser with the shared options (your own learner's script), and ``--rate-games`` for the rating of
    its ``versus-2p`` row (:func:`~shelfie_env.arena.rows.task_row`)."""
    from shelfie_env.arena.task_score import RATE_GAMES

    p = add_arguments(argparse.ArgumentParser(prog=prog, description="a learner under the RL benchmark"), steps)
    p.add_argument(
        "--rate-games",
        type=int,
        default=None,
        help=f"games of the row's rating on the 2-player ladder (default {RATE_GAMES[2]}; at least 50)",
    )
    return p


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None, *, train_only: bool = False
) -> argparse.Namespace:
    """``parser.parse_args`` plus :func:`check_args` (a bad value exits with a usage error, before any
    training)."""
    args = parser.parse_args(argv)
    rate_games = getattr(args, "rate_games", None)
    if rate_games is not None:
        from shelfie_env.arena.rate_agent import batch_games

        if rate_games < batch_games(2):
            parser.error(f"--rate-games must be at least one batch of the rating, {batch_games(2)}; got {rate_games}")
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
    ``pool``: :meth:`~shelfie_env.envs.vector.BatchedSeats.state` (seat bots coded by the pool) and the
    pool's ``pool_rng`` (a checkpoint's env part)."""
    return {**core.state(pool.code), "pool_rng": pool.rng.bit_generator.state}


def load_seats_state(core: Any, pool: MixPool, state: dict[str, Any]) -> None:
    """Restore :func:`seats_state` into ``core`` and ``pool``; a bad state raises ``ValueError`` and
    changes neither."""
    if not isinstance(state, dict) or "pool_rng" not in state:
        raise ValueError("state: missing key 'pool_rng'")
    pool_rng = np.random.Generator(type(pool.rng.bit_generator)())
    try:
        pool_rng.bit_generator.state = state["pool_rng"]
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"pool_rng: not a {type(pool_rng.bit_generator).__name__} state ({exc})") from None
    core.load_state(state, pool.bot)
    pool.rng.bit_generator.state = pool_rng.bit_generator.state


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
