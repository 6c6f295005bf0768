"""Benchmark RL algorithms on 2-player shelfie under one fixed protocol (docs/benchmark.md).

    .venv/bin/python scripts/bench_algos.py                  # full protocol
    .venv/bin/python scripts/bench_algos.py --steps 20000 --seeds 0 --eval-games 100   # quick look

Every learner trains from scratch for ``--steps`` learner decisions in
``shelfie/Versus-v0`` against a fixed opponent mix (each episode: ``random``
or ``greedy``, probability 1/2 each, learner seat random, rank reward + the
documented margin shaping), on 8 envs in one process, one torch thread. Then
it plays ``--eval-games`` arena games (:func:`shelfie_env.arena.run_arena`, the
``--deals`` deal set, ``test`` by default: dice seeds 30,000,000 + i, seats rotated)
against ``greedy`` and against ``random`` with its most likely legal action.

Learners:

* ``maskable_ppo`` - sb3-contrib MaskablePPO, legal-action mask in training and play;
* ``maskable_ppo_expect`` - the same with the expectimax policy head
  (``shelfie_env.train.policy.ExpectHeadPolicy``): learned placement values,
  rerolls by the exact expectation over the dice;
* ``rllib_ppo`` - RLlib PPO (``shelfie_env.rllib``: masked module, 2 x 256,
  the same PPO settings, batches of 4,096 env steps) against the same opponents;
* ``td`` - TD(lambda) on after-state values with the planner's exact search over
  the dice (``shelfie_env.train.td``, the ``td_2p`` network and step sizes),
  trained against the same opponent mix instead of itself;
* ``a2c`` - SB3 A2C, which has no masks. In training an illegal action costs
  ``-0.1`` reward and leaves the position unchanged; the 10th illegal action in
  a row ends the game as a loss (-1). In play it takes the most likely legal
  action (masking added at inference only); the ``raw`` row also reports how
  often its unmasked first choice would have been illegal;
* ``random`` and ``greedy`` - the built-in bots, evaluated the same way
  (no training).

Every ``--curve-every`` learner decisions the learner plays ``--curve-games``
arena games against ``greedy`` (the same dice seeds): the learning curve, over
decisions and training seconds. Writes ``--out`` (default
``artifacts/benchmark.json``; rows of an existing file are kept unless a new run
replaces them), ``--plot`` (the curves) and prints the Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from shelfie_env.arena import run_arena
from shelfie_env.arena.deals import deal_start
from shelfie_env.bots import make
from shelfie_env.bots.learned.bot import PPOBot
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.envs.observation import encode
from shelfie_env.game.engine import Game
from shelfie_env.train.selfplay import OpponentPool, SelfPlayEnv

EVAL_SEED = deal_start("test")
"""First dice seed of the evaluation games (``--deals`` sets it)."""
N_ENVS = 8
LEARNERS = ("maskable_ppo", "maskable_ppo_expect", "a2c", "td", "rllib_ppo")


class IllegalActionPenalty(gym.Wrapper):
    """For learners without masks: an illegal action costs ``penalty`` and changes nothing;
    the ``limit``-th illegal action in a row ends the game as a loss (-1)."""

    def __init__(self, env: gym.Env, penalty: float = 0.1, limit: int = 10) -> None:
        super().__init__(env)
        self.penalty, self.limit = penalty, limit
        self.streak = 0
        self.illegal = 0
        self.total = 0

    def reset(self, **kwargs: Any):
        self.streak = 0
        return self.env.reset(**kwargs)

    def step(self, action: int):
        self.total += 1
        if not self.env.get_wrapper_attr("action_masks")()[int(action)]:
            self.illegal += 1
            self.streak += 1
            obs = encode(self.env.get_wrapper_attr("game"), self.env.get_wrapper_attr("seat"))
            if self.streak >= self.limit:
                return obs, -1.0, True, False, {"illegal_forfeit": True, "win": 0.0}
            return obs, -self.penalty, False, False, {}
        self.streak = 0
        return self.env.step(action)


def make_env(algo: str, seed: int, i: int) -> Any:
    def thunk():
        from stable_baselines3.common.monitor import Monitor

        pool = OpponentPool(opp_random=0.5, opp_greedy=0.5, seed=seed * 100 + i)
        env: gym.Env = SelfPlayEnv(2, pool, margin_coef=0.1, seed=seed * 100 + i)
        if algo == "a2c":
            env = IllegalActionPenalty(env)
        return Monitor(env)

    return thunk


def train(algo: str, steps: int, seed: int, curve: Curve) -> tuple[Any, float]:
    """Train ``algo`` for ``steps`` learner decisions; returns its playing bot and training seconds."""
    if algo == "td":
        return train_td(steps, seed, curve)
    if algo == "rllib_ppo":
        return train_rllib(steps, seed, curve)
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    venv = DummyVecEnv([make_env(algo, seed, i) for i in range(N_ENVS)])
    kw: dict[str, Any] = {
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "vf": [256, 256]}},
        "seed": seed,
        "device": "cpu",
        "gamma": 0.995,
    }
    if algo in ("maskable_ppo", "maskable_ppo_expect"):
        from sb3_contrib import MaskablePPO

        policy: Any = "MlpPolicy"
        if algo == "maskable_ppo_expect":
            from shelfie_env.train.policy import ExpectHeadPolicy

            policy = ExpectHeadPolicy
            kw["policy_kwargs"].update(players=2, set_arch=[256, 256])
        model = MaskablePPO(
            policy,
            venv,
            n_steps=256,
            batch_size=512,
            n_epochs=4,
            learning_rate=3e-4,
            ent_coef=0.01,
            **kw,
        )
    elif algo == "a2c":
        from stable_baselines3 import A2C

        model = A2C("MlpPolicy", venv, n_steps=16, learning_rate=3e-4, ent_coef=0.01, **kw)
    else:
        raise ValueError(f"unknown learner {algo!r}")

    class CurvePoints(BaseCallback):
        def _on_step(self) -> bool:
            if curve.due(self.num_timesteps):
                curve.add(self.num_timesteps, PPOBot(NumpyPolicy.from_sb3(self.model.policy), 2))
            return True

    model.learn(steps, callback=CurvePoints())
    wall = curve.train_s()
    venv.close()
    policy_np = NumpyPolicy.from_sb3(model.policy)
    curve.add(model.num_timesteps, PPOBot(policy_np, 2), final=True)
    return policy_np, wall


def train_td(steps: int, seed: int, curve: Curve) -> tuple[Any, float]:
    """TD(lambda) with the ``td_2p`` network and step sizes, against the benchmark's opponent mix."""
    import tempfile

    from threadpoolctl import threadpool_limits

    from shelfie_env.bots.learned.value import ValueBot
    from shelfie_env.train.config import read_config
    from shelfie_env.train.td import TDConfig, TDTrainer

    recipe = {k: v for k, v in read_config("td_2p").items() if k not in ("algo", "eval_opponents")}
    with tempfile.TemporaryDirectory() as tmp, threadpool_limits(1):
        cfg = TDConfig(
            **{**recipe, "seed": seed, "opp_greedy": 0.5, "opp_random": 0.5, "eval_every": 0, "run_dir": tmp}
        )
        trainer = TDTrainer(cfg)
        with trainer.workers() as pool:
            while trainer.decisions < steps:
                trainer.step(pool, log=lambda s: None)
                if curve.due(trainer.decisions):
                    curve.add(trainer.decisions, ValueBot(trainer.numpy_net()))
        wall = curve.train_s()
        bot = ValueBot(trainer.numpy_net())
    curve.add(trainer.decisions, bot, final=True)
    return bot, wall


def train_rllib(steps: int, seed: int, curve: Curve) -> tuple[Any, float]:
    """RLlib PPO (new API stack, ``shelfie_env.rllib``) with the SB3 learners' settings, against the
    benchmark's opponent mix (no snapshots), sampling in this process."""
    import ray
    import torch

    from shelfie_env.rllib import ppo_config
    from shelfie_env.rllib.train import LEARNER, RLlibConfig, weights_to_arrays

    torch.set_num_threads(1)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    cfg = RLlibConfig(
        players=2,
        num_env_runners=0,
        num_envs_per_env_runner=N_ENVS,
        hidden=[256, 256],
        learning_rate=3e-4,
        entropy_coeff=0.01,
        gamma=0.995,
        train_batch_size=4096,
        minibatch_size=512,
        num_epochs=4,
        p_random=0.5,
        p_greedy=0.5,
        snapshots=1,
        seed=seed,
    )
    algo = ppo_config(cfg).build_algo()

    def bot() -> PPOBot:
        weights = algo.learner_group.get_weights([LEARNER])[LEARNER]
        return PPOBot(NumpyPolicy.from_state_dict(weights_to_arrays(weights), "tanh"), 2)

    decisions = 0
    try:
        while decisions < steps:
            result = algo.train()
            decisions += int(result["env_runners"]["num_module_steps_sampled"][LEARNER])
            if curve.due(decisions):
                curve.add(decisions, bot())
        wall = curve.train_s()
        final = bot()
    finally:
        algo.stop()
        ray.shutdown()
    curve.add(decisions, final, final=True)
    return final, wall


class Curve:
    """Learning-curve points: arena win rate against ``greedy`` every ``every`` decisions."""

    def __init__(self, every: int, games: int) -> None:
        self.every, self.games = every, games
        self.points: list[dict[str, Any]] = []
        self.next = every
        self.start = time.time()
        self.eval_s = 0.0

    def due(self, decisions: int) -> bool:
        return self.every > 0 and decisions >= self.next

    def train_s(self) -> float:
        """Seconds spent training so far (curve evaluations not counted)."""
        return time.time() - self.start - self.eval_s

    def add(self, decisions: int, bot: Any, final: bool = False) -> None:
        if not final:
            while self.next <= decisions:
                self.next += self.every
        elif self.points and self.points[-1]["decisions"] == decisions:
            return
        if self.games <= 0:
            return
        t0 = time.time()
        train_s = self.train_s()
        res = play(bot, "greedy", self.games)
        self.eval_s += time.time() - t0
        self.points.append(
            {"decisions": int(decisions), "train_s": round(train_s, 1), "win_rate": res["win_rate"]}
        )
        print(json.dumps({"curve": self.points[-1]}), flush=True)


class RawChoiceBot(PPOBot):
    """Plays the masked choice but counts how often the unmasked most likely action is illegal."""

    def __init__(self, policy: NumpyPolicy) -> None:
        super().__init__(policy, 2, deterministic=True)
        self.decisions = self.illegal = 0

    def act_game(self, game: Game) -> int:
        self.decisions += 1
        self.illegal += not game.legal_mask()[int(np.argmax(self.policy.logits(encode(game, game.current))))]
        return super().act_game(game)


def play(bot: Any, opponent: str, games: int) -> dict[str, Any]:
    """An arena run of ``bot`` against ``opponent`` (dice seeds ``EVAL_SEED + i``, seats rotated, common dice)."""
    result = run_arena(
        ["learner", opponent], 2, games, EVAL_SEED, workers=1, ratings=False, bots={"learner": bot}
    )
    pair = result["pairings"][0]
    out = {k: pair[k] for k in ("games", "wins", "ties", "losses", "win_rate", "mean_score", "sd_score")}
    out["ci95"] = pair["win_ci95"]
    if isinstance(bot, RawChoiceBot):
        out["illegal_first_choice_rate"] = bot.illegal / max(bot.decisions, 1)
    return out


def build_parser() -> argparse.ArgumentParser:
    """The script's options (docs/benchmark.md lists them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="learner decisions per training run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="training seeds per learner")
    parser.add_argument("--eval-games", type=int, default=1000, help="games against each evaluation opponent")
    parser.add_argument(
        "--deals",
        default="test",
        help="deal set of the evaluation and curve games: test, selection or a first seed",
    )
    parser.add_argument(
        "--algos", nargs="+", default=list(LEARNERS), choices=LEARNERS, help="learners to train"
    )
    parser.add_argument("--curve-every", type=int, default=0, help="decisions between curve points (0: none)")
    parser.add_argument(
        "--curve-games", type=int, default=200, help="games against greedy at each curve point"
    )
    parser.add_argument("--plot", type=Path, help="write the learning curves here (PNG)")
    parser.add_argument(
        "--out", type=Path, default=Path("artifacts/benchmark.json"), help="results JSON (default artifacts/)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    global EVAL_SEED
    try:
        EVAL_SEED = deal_start(args.deals)
    except ValueError as exc:
        parser.error(f"--deals: {exc}")
    if args.steps <= 0 or args.eval_games <= 0 or args.curve_every < 0:
        parser.error("--steps and --eval-games must be positive, --curve-every >= 0")

    rows: list[dict[str, Any]] = []
    for name in ("random", "greedy"):
        bot = make(name, **({"seed": 1} if name == "random" else {}))
        rows.append(
            {
                "learner": name,
                "seed": None,
                "steps": 0,
                "train_s": 0.0,
                "mode": "bot",
                **{f"vs_{o}": play(bot, o, args.eval_games) for o in ("greedy", "random")},
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    for algo in args.algos:
        for seed in args.seeds:
            curve = Curve(args.curve_every, args.curve_games)
            learned, wall = train(algo, args.steps, seed, curve)
            modes = ["raw", "masked"] if algo == "a2c" else ["masked"]
            for mode in modes:
                if algo in ("td", "rllib_ppo"):
                    bot: Any = learned
                else:
                    bot = RawChoiceBot(learned) if mode == "raw" else PPOBot(learned, 2)
                rows.append(
                    {
                        "learner": algo,
                        "seed": seed,
                        "steps": args.steps,
                        "train_s": round(wall, 1),
                        "mode": mode,
                        **{f"vs_{o}": play(bot, o, args.eval_games) for o in ("greedy", "random")},
                        "curve": curve.points,
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    rows = merge(args.out, rows)
    result = {
        "protocol": {
            "curve": f"{args.curve_games} games against greedy every {args.curve_every} decisions",
            "eval_games": args.eval_games,
            "eval_seeds": f"{EVAL_SEED}..{EVAL_SEED + args.eval_games - 1}",
            "train_opponents": "random 1/2, greedy 1/2",
            "n_envs": N_ENVS,
            "command": "scripts/bench_algos.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        },
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(rows))
    if args.plot:
        plot(rows, args.plot)
    return 0


def merge(path: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of an earlier ``path`` that no new row replaces (same learner, seed, steps, mode), then ``rows``."""
    if not path.is_file():
        return rows
    key = lambda r: (r["learner"], r["seed"], r["steps"], r["mode"])  # noqa: E731
    new = {key(r) for r in rows}
    old = [r for r in json.loads(path.read_text())["rows"] if key(r) not in new]
    order = {name: i for i, name in enumerate(("random", "greedy", *LEARNERS))}
    return sorted(
        old + rows, key=lambda r: (order.get(r["learner"], 99), r["steps"], r["seed"] or 0, r["mode"])
    )


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Win rate against greedy over learner decisions and over training hours, one line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for r in rows:
        if not r.get("curve") or r["mode"] == "raw":
            continue
        label = f"{r['learner']} seed {r['seed']}"
        d = [p["decisions"] for p in r["curve"]]
        h = [p["train_s"] / 3600 for p in r["curve"]]
        w = [100 * p["win_rate"] for p in r["curve"]]
        axes[0].plot(d, w, marker=".", label=label)
        axes[1].plot(h, w, marker=".", label=label)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("learner decisions")
    axes[1].set_xlabel("training hours (2-core machine)")
    axes[0].set_ylabel("win rate against greedy (%)")
    for ax in axes:
        ax.axhline(50, color="grey", lw=0.5)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def _percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown results table."""
    out = [
        (
            "| learner | seed | steps | train s | play mode | win vs greedy (95% CI) | "
            "win vs random (95% CI) | score vs greedy | illegal first choices |"
        ),
        "|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        if not r.get("vs_greedy"):  # a run stopped before its budget: its curve only
            continue
        g, rd = r["vs_greedy"], r["vs_random"]
        out.append(
            f"| {r['learner']} | {'-' if r['seed'] is None else r['seed']} | "
            f"{r['steps']:,} | {r['train_s']:.0f} | "
            f"{r['mode']} | {100 * g['win_rate']:.1f}% ({100 * g['ci95'][0]:.1f}–{100 * g['ci95'][1]:.1f}) | "
            f"{100 * rd['win_rate']:.1f}% ({100 * rd['ci95'][0]:.1f}–{100 * rd['ci95'][1]:.1f}) | "
            f"{g['mean_score']:.1f} ± {g['sd_score']:.1f} | "
            f"{_percent(g.get('illegal_first_choice_rate'))} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
