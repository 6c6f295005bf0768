"""Benchmark RL algorithms on 2-player shelfie under one fixed protocol (docs/benchmark.md).

    .venv/bin/python scripts/bench_algos.py                  # full protocol
    .venv/bin/python scripts/bench_algos.py --steps 20000 --seeds 0 --eval-games 100   # quick look

Every learner trains from scratch for ``--steps`` learner decisions in
``shelfie/Versus-v0`` against a fixed opponent mix (each episode: ``random``
or ``greedy``, probability 1/2 each, learner seat random, rank reward + the
documented margin shaping), on 8 envs in one process, one torch thread. Then
it plays ``--eval-games`` arena games (:func:`shelfie_env.arena.run_arena`, dice
seeds 20_000_000 + i, seats rotated) against ``greedy`` and against ``random``
with its most likely legal action.

Learners:

* ``maskable_ppo`` - sb3-contrib MaskablePPO, legal-action mask in training and play;
* ``a2c`` - SB3 A2C, which has no masks. In training an illegal action costs
  ``-0.1`` reward and leaves the position unchanged; the 10th illegal action in
  a row ends the game as a loss (-1). In play it takes the most likely legal
  action (masking added at inference only); the ``raw`` row also reports how
  often its unmasked first choice would have been illegal;
* ``random`` and ``greedy`` - the built-in bots, evaluated the same way
  (no training).

Writes ``--out`` (default ``artifacts/benchmark.json``) and prints the Markdown table.
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
from shelfie_env.bots import make
from shelfie_env.bots.learned.bot import PPOBot
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.envs.observation import encode
from shelfie_env.game.engine import Game
from shelfie_env.train.selfplay import OpponentPool, SelfPlayEnv

EVAL_SEED = 20_000_000
N_ENVS = 8


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


def make_env(algo: str, seed: int, i: int):
    def thunk():
        from stable_baselines3.common.monitor import Monitor

        pool = OpponentPool(opp_random=0.5, opp_greedy=0.5, seed=seed * 100 + i)
        env: gym.Env = SelfPlayEnv(2, pool, margin_coef=0.1, seed=seed * 100 + i)
        if algo == "a2c":
            env = IllegalActionPenalty(env)
        return Monitor(env)

    return thunk


def train(algo: str, steps: int, seed: int) -> tuple[NumpyPolicy, float]:
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    venv = DummyVecEnv([make_env(algo, seed, i) for i in range(N_ENVS)])
    kw = {
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "vf": [256, 256]}},
        "seed": seed,
        "device": "cpu",
        "gamma": 0.995,
    }
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        model = MaskablePPO(
            "MlpPolicy",
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
    t0 = time.time()
    model.learn(steps)
    wall = time.time() - t0
    venv.close()
    return NumpyPolicy.from_sb3(model.policy), wall


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
    """An arena run of ``bot`` against ``opponent`` (dice seeds ``EVAL_SEED + i``, seats rotated)."""
    result = run_arena(["learner", opponent], 2, games, EVAL_SEED, workers=1, ratings=False, bots={"learner": bot})
    pair = result["pairings"][0]
    out = {k: pair[k] for k in ("games", "wins", "ties", "losses", "win_rate", "mean_score", "sd_score")}
    out["ci95"] = pair["win_ci95"]
    if isinstance(bot, RawChoiceBot):
        out["illegal_first_choice_rate"] = bot.illegal / max(bot.decisions, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="learner decisions per training run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="training seeds per learner")
    parser.add_argument("--eval-games", type=int, default=1000, help="games against each evaluation opponent")
    parser.add_argument("--algos", nargs="+", default=["maskable_ppo", "a2c"], help="learners to train")
    parser.add_argument(
        "--out", type=Path, default=Path("artifacts/benchmark.json"), help="results JSON (default artifacts/)"
    )
    args = parser.parse_args(argv)

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
            policy, wall = train(algo, args.steps, seed)
            modes = ["masked"] if algo == "maskable_ppo" else ["masked", "raw"]
            for mode in modes:
                rows.append(
                    {
                        "learner": algo,
                        "seed": seed,
                        "steps": args.steps,
                        "train_s": round(wall, 1),
                        "mode": mode,
                        **{
                            f"vs_{o}": play(
                                RawChoiceBot(policy) if mode == "raw" else PPOBot(policy, 2), o, args.eval_games
                            )
                            for o in ("greedy", "random")
                        },
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    result = {
        "protocol": {
            "steps": args.steps,
            "seeds": args.seeds,
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
    return 0


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
