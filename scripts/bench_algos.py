"""Benchmark RL algorithms on 2-player shelfie under one fixed protocol (docs/benchmark.md).

    .venv/bin/python scripts/bench_algos.py --steps 1M --seeds 0 1 2          # every learner, 1M decisions
    .venv/bin/python scripts/bench_algos.py --steps 5000 --seeds 0 --eval-games 20 --algos ppo_afterstate
    .venv/bin/python scripts/bench_report.py artifacts/benchmark.json         # IQM over seeds (rliable)

Every learner trains from random weights for ``--steps`` learner decisions
(:mod:`shelfie_env.train.benchmark`: ``shelfie/Versus-v0`` against ``random`` or
``greedy``, probability 1/2 each per episode, learner seat random, rank reward +
the documented margin shaping; ``ppo_afterstate`` against its own recipe's
opponents: itself, ``greedy`` in a fifth of the seats), one torch thread. Then
:func:`shelfie_env.arena.evaluate` plays it ``--eval-games`` games against each of
``--opponents`` on the ``--deals`` deal set (``test``: dice seeds 30,000,000 + i),
every deal under both seatings, with common dice, and records the raw and the
luck-corrected score rate with 95 % intervals, the variance factor and the win rate.

Learners:

* ``maskable_ppo`` - sb3-contrib MaskablePPO, legal-action mask in training and play;
* ``maskable_ppo_expect`` - the same with the expectimax policy head
  (``shelfie_env.train.policy.ExpectHeadPolicy``): learned placement values,
  rerolls by the exact expectation over the dice;
* ``ppo_afterstate`` - the no-teacher after-state PPO trainer
  (``shelfie_env.train.ppo_afterstate``, the ``ppo_afterstate_2p`` preset's settings);
* ``rllib_ppo`` - RLlib PPO (``shelfie_env.rllib``: masked module, 2 x 256,
  the same PPO settings, batches of 4,096 env steps) against the same opponents;
* ``td`` - TD(lambda) on after-state values with the planner's exact search over
  the dice (``shelfie_env.train.td``, the ``td_2p`` network and step sizes),
  trained against the same opponent mix instead of itself;
* ``a2c`` - SB3 A2C, which has no masks. In training an illegal action costs
  ``-0.1`` reward and leaves the position unchanged; the 10th illegal action in
  a row ends the game as a loss (-1). In play it takes the most likely legal
  action (masking added at inference only); its row also reports how often its
  unmasked first choice would have been illegal.

``--bots`` adds rows without training (``random``, ``greedy``, ``planner``,
``openspiel-mcts`` with ``--mcts-simulations``), evaluated the same way.

Ablation options (SB3 learners only; defaults are the benchmark's protocol):
``--net-arch``, ``--ent-coef``, ``--batch-size``, ``--n-epochs``, ``--train-opponents``
(``mix``, ``random`` or ``greedy``), ``--margin-coef`` (the score-margin shaping at game
end), ``--score-reward`` (each step also rewards the learner's own score gain, this much a
point) and the diagnostic ``--reroll`` (``stop`` or ``greedy``: the environment plays the
learner's reroll decisions with that rule, in training and in play, so the network only
circles and crosses); a run that changes one is tagged with it (its row's ``variant``).
``--save DIR`` exports every trained SB3 network as an ``.npz`` with its card
(``shelfie arena ppo:path=...`` plays it; a ``--reroll`` model records its rule in the
card), ``--models`` evaluates such files instead of training, and ``--eval-games 0``
trains without evaluating.

Every ``--curve-every`` learner decisions the learner plays ``--curve-games``
plain arena games against ``greedy`` on the ``selection`` deals (cheap: no
duplicate seatings, no luck measurement), recorded over learner decisions and
training seconds. Rows are merged into ``--out`` (default
``artifacts/benchmark.json``; a new row replaces an old one of the same learner,
seed, budget and protocol), ``--plot`` draws the curves, and the script prints
a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from shelfie_env.bots import act_on_game, make
from shelfie_env.bots.learned.bot import PPOBot
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.envs.observation import encode
from shelfie_env.game.actions import STOP
from shelfie_env.game.engine import Game
from shelfie_env.train import benchmark

N_ENVS = 8
LEARNERS = ("maskable_ppo", "maskable_ppo_expect", "a2c", "td", "rllib_ppo", "ppo_afterstate")
BOTS = ("random", "greedy", "planner", "openspiel-mcts")
"""Rows without training ``--bots`` can add."""
AFTERSTATE_PRESET = "ppo_afterstate_2p"
OWN_OPPONENTS = {"ppo_afterstate": "its recipe's: itself, greedy in 1/5 of the seats"}
"""Learners trained against other opponents than :data:`benchmark.TRAIN_OPPONENTS`."""
SB3_LEARNERS = ("maskable_ppo", "maskable_ppo_expect", "a2c")
TRAIN_MIXES = {"mix": (0.5, 0.5), "random": (1.0, 0.0), "greedy": (0.0, 1.0)}
"""``--train-opponents``: (probability of ``random``, of ``greedy``) per training episode."""
ABLATION = {
    "net_arch": [256, 256],
    "ent_coef": 0.01,
    "batch_size": 512,
    "n_epochs": 4,
    "train_opponents": "mix",
    "margin_coef": benchmark.MARGIN_COEF,
    "score_reward": 0.0,
    "reroll": "learner",
}
"""The benchmark's settings of the ablation options; a run that changes one is tagged with it."""


def variant(settings: dict[str, Any]) -> str:
    """The ablation options that differ from the protocol, as ``key=value`` (``""``: the protocol)."""
    diff = [(k, v) for k, v in settings.items() if k in ABLATION and v != ABLATION[k]]
    return ",".join(f"{k}={'x'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in diff)


class RerollRule:
    """``--reroll stop|greedy``: plays a reroll-phase decision (game -> action) by never rerolling or
    with ``greedy``'s choice."""

    def __init__(self, name: str) -> None:
        if name not in ("stop", "greedy"):
            raise ValueError(f"unknown reroll rule {name!r}")
        self.name = name
        self.greedy = make("greedy") if name == "greedy" else None

    def __call__(self, game: Game) -> int:
        return STOP if self.greedy is None else act_on_game(self.greedy, game)


def reroll_rule(rule: str) -> RerollRule | None:
    """``--reroll``: ``None`` (the learner rerolls) or the rule that plays its reroll-phase decisions."""
    return None if rule == "learner" else RerollRule(rule)


class ScoreGain(gym.Wrapper):
    """Adds ``coef`` times the learner's own score gain to every step's reward (a dense reward)."""

    def __init__(self, env: gym.Env, coef: float) -> None:
        super().__init__(env)
        self.coef, self.last = coef, 0

    def _own(self) -> int:
        return self.env.get_wrapper_attr("game").score(self.env.get_wrapper_attr("seat"))

    def reset(self, **kwargs: Any):
        out = self.env.reset(**kwargs)
        self.last = self._own()
        return out

    def step(self, action: int):
        obs, reward, terminated, truncated, info = self.env.step(action)
        own = self._own()
        reward, self.last = reward + self.coef * (own - self.last), own
        return obs, reward, terminated, truncated, info


class FixedRerolls(gym.Wrapper):
    """Diagnostic: the learner's reroll-phase decisions are played by ``rule`` (game -> action),
    so every decision the learner sees is a circle, an end of turn or a cross-out."""

    def __init__(self, env: gym.Env, rule: Any) -> None:
        super().__init__(env)
        self.rule = rule

    def _play_rerolls(self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict):
        game = self.env.get_wrapper_attr("game")
        while not (terminated or truncated) and game.phase_name == "reroll":
            obs, r, terminated, truncated, info = self.env.step(self.rule(game))
            reward += r
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        return self._play_rerolls(obs, 0.0, False, False, info)[::4]

    def step(self, action: int):
        return self._play_rerolls(*self.env.step(action))


class FixedRerollsBot(PPOBot):
    """A trained network that plays with ``--reroll``'s rule in the reroll phase."""

    def __init__(self, policy: NumpyPolicy, rule: Any) -> None:
        super().__init__(policy, 2, deterministic=True)
        self.rule = rule

    def act_game(self, game: Game) -> int:
        return int(self.rule(game)) if game.phase_name == "reroll" else super().act_game(game)


def train_opponents(settings: dict[str, Any]) -> str:
    """The ``train_opponents`` field of an SB3 row: the protocol's mix or ``--train-opponents``'."""
    if settings["train_opponents"] == "mix":
        return benchmark.TRAIN_OPPONENTS
    return "random {:g}, greedy {:g} per episode".format(*TRAIN_MIXES[settings["train_opponents"]])


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


def make_env(algo: str, seed: int, i: int, settings: dict[str, Any] = ABLATION) -> Any:
    def thunk():
        from stable_baselines3.common.monitor import Monitor

        p_random, p_greedy = TRAIN_MIXES[settings["train_opponents"]]
        env: gym.Env = benchmark.train_env(
            seed, i, opp_random=p_random, opp_greedy=p_greedy, margin_coef=settings["margin_coef"]
        )
        if settings["score_reward"]:
            env = ScoreGain(env, settings["score_reward"])
        rule = reroll_rule(settings["reroll"])
        if rule is not None:
            env = FixedRerolls(env, rule)
        if algo == "a2c":
            env = IllegalActionPenalty(env)
        return Monitor(env)

    return thunk


def train(
    algo: str,
    steps: int,
    seed: int,
    curve: Curve,
    settings: dict[str, Any] = ABLATION,
    save: Path | None = None,
) -> tuple[Any, float, int]:
    """Train ``algo`` for ``steps`` learner decisions; returns its playing bot (or numpy policy),
    training seconds and the decisions actually trained. ``settings``: the ablation options (SB3
    learners); ``save``: a folder to export the trained SB3 network to."""
    if algo == "td":
        return train_td(steps, seed, curve)
    if algo == "rllib_ppo":
        return train_rllib(steps, seed, curve)
    if algo == "ppo_afterstate":
        return train_ppo_afterstate(steps, seed, curve)
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    venv = DummyVecEnv([make_env(algo, seed, i, settings) for i in range(N_ENVS)])
    arch = list(settings["net_arch"])
    kw: dict[str, Any] = {
        "policy_kwargs": {"net_arch": {"pi": arch, "vf": arch}},
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
            kw["policy_kwargs"].update(players=2, set_arch=arch)
        model = MaskablePPO(
            policy,
            venv,
            n_steps=256,
            batch_size=settings["batch_size"],
            n_epochs=settings["n_epochs"],
            learning_rate=3e-4,
            ent_coef=settings["ent_coef"],
            **kw,
        )
    elif algo == "a2c":
        from stable_baselines3 import A2C

        model = A2C("MlpPolicy", venv, n_steps=16, learning_rate=3e-4, ent_coef=settings["ent_coef"], **kw)
    else:
        raise ValueError(f"unknown learner {algo!r}")

    rule = reroll_rule(settings["reroll"])

    def as_bot(policy_np: NumpyPolicy) -> PPOBot:
        return PPOBot(policy_np, 2) if rule is None else FixedRerollsBot(policy_np, rule)

    class CurvePoints(BaseCallback):
        def _on_step(self) -> bool:
            if curve.due(self.num_timesteps):
                curve.add(self.num_timesteps, as_bot(NumpyPolicy.from_sb3(self.model.policy)))
            return True

    model.learn(steps, callback=CurvePoints())
    wall = curve.train_s()
    venv.close()
    if save is not None:
        from shelfie_env.bots.learned.card import make_card
        from shelfie_env.train.checkpoint import export_weights

        config = {"activation": "tanh", "seed": seed, "budget": steps, **settings}
        tag = variant(settings).replace(",", "_").replace("=", "-").replace(".", "p")
        name = f"{algo}{'_' + tag if tag else ''}_s{seed}_{steps}"
        card = make_card(2, algo=algo, config=config, steps=model.num_timesteps, wall_time_s=wall)
        print(json.dumps({"saved": str(export_weights(model, save / name, card))}), flush=True)
    policy_np = NumpyPolicy.from_sb3(model.policy)
    curve.add(model.num_timesteps, as_bot(policy_np), final=True)
    return policy_np, wall, int(model.num_timesteps)


def train_td(steps: int, seed: int, curve: Curve) -> tuple[Any, float, int]:
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
    return bot, wall, int(trainer.decisions)


def train_ppo_afterstate(steps: int, seed: int, curve: Curve) -> tuple[Any, float, int]:
    """The after-state PPO trainer with the ``ppo_afterstate_2p`` preset's settings, from random weights,
    against its recipe's opponents (itself, ``greedy`` in a share ``opp_greedy`` of the seats: its batched
    rollouts have no ``random`` seat); its games are played in a worker process while it updates."""
    import tempfile

    import torch

    from shelfie_env.train.config import read_config
    from shelfie_env.train.ppo_afterstate import (
        PPOAfterstateConfig,
        PPOAfterstateTrainer,
        RolloutSource,
        numpy_bot,
    )

    recipe = {k: v for k, v in read_config(AFTERSTATE_PRESET).items() if k != "algo"}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = PPOAfterstateConfig(
            **{**recipe, "seed": seed, "total_steps": steps, "eval_games": 0, "run_dir": tmp}
        )
        torch.set_num_threads(cfg.threads)
        trainer = PPOAfterstateTrainer(cfg, AFTERSTATE_PRESET)
        trainer.source = RolloutSource(cfg)
        try:
            while trainer.steps < steps:
                trainer.iterate(log=lambda s: None)
                if curve.due(trainer.steps):
                    curve.add(trainer.steps, numpy_bot(trainer.net, cfg))
        finally:
            trainer.source.close()
        wall = curve.train_s()
        bot = numpy_bot(trainer.net, cfg)
    curve.add(trainer.steps, bot, final=True)
    return bot, wall, int(trainer.steps)


def train_rllib(steps: int, seed: int, curve: Curve) -> tuple[Any, float, int]:
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
    return final, wall, decisions


class Curve:
    """Learning-curve points every ``every`` decisions: plain arena games against ``greedy`` on the
    ``selection`` deals (:func:`benchmark.curve_point`)."""

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
        if self.games <= 0 or (final and self.every <= 0):
            return
        t0 = time.time()
        point = benchmark.curve_point(playing_bot(bot), self.games, decisions, self.train_s())
        self.eval_s += time.time() - t0
        self.points.append(point)
        print(json.dumps({"curve": point}), flush=True)


class RawChoiceBot(PPOBot):
    """Plays the masked choice but counts how often the unmasked most likely action is illegal."""

    def __init__(self, policy: NumpyPolicy) -> None:
        super().__init__(policy, 2, deterministic=True)
        self.decisions = self.illegal = 0

    def act_game(self, game: Game) -> int:
        self.decisions += 1
        self.illegal += not game.legal_mask()[int(np.argmax(self.policy.logits(encode(game, game.current))))]
        return super().act_game(game)


def playing_bot(learned: Any) -> Any:
    """The bot that plays a learner's result: a numpy policy's most likely legal action, else the bot itself."""
    return PPOBot(learned, 2) if isinstance(learned, NumpyPolicy) else learned


def reference_bot(name: str, simulations: int) -> tuple[str, Any]:
    """A ``--bots`` row's name and bot."""
    if name == "openspiel-mcts":
        return f"openspiel-mcts:simulations={simulations}", make("openspiel-mcts", simulations=simulations)
    return name, make(name, **({"seed": 1} if name == "random" else {}))


def build_parser() -> argparse.ArgumentParser:
    """The script's options (docs/benchmark.md lists them)."""
    parser = argparse.ArgumentParser(prog="scripts/bench_algos.py", description=__doc__.splitlines()[0])
    benchmark.add_arguments(parser)
    parser.add_argument(
        "--algos", nargs="+", default=list(LEARNERS), choices=LEARNERS, help="learners to train"
    )
    parser.add_argument(
        "--bots",
        nargs="*",
        default=["random", "greedy", "openspiel-mcts"],
        choices=BOTS,
        help="rows without training (none: --bots alone)",
    )
    parser.add_argument(
        "--mcts-simulations", type=int, default=100, help="simulations a move of the openspiel-mcts row"
    )
    parser.add_argument("--curve-every", type=int, default=0, help="decisions between curve points (0: none)")
    parser.add_argument(
        "--curve-games", type=int, default=200, help="games against greedy at each curve point"
    )
    parser.add_argument("--plot", type=Path, help="write the learning curves here (PNG)")
    parser.add_argument("--save", type=Path, help="export every trained SB3 network here (.npz and card)")
    parser.add_argument(
        "--models", type=Path, nargs="+", help="evaluate these --save exports instead of training"
    )
    ab = parser.add_argument_group("ablations (SB3 learners; defaults: the protocol)")
    ab.add_argument(
        "--net-arch", type=int, nargs="+", default=ABLATION["net_arch"], help="hidden layer widths"
    )
    ab.add_argument("--ent-coef", type=float, default=ABLATION["ent_coef"], help="entropy coefficient")
    ab.add_argument("--batch-size", type=int, default=ABLATION["batch_size"], help="PPO minibatch size")
    ab.add_argument("--n-epochs", type=int, default=ABLATION["n_epochs"], help="PPO epochs per rollout")
    ab.add_argument(
        "--train-opponents",
        choices=sorted(TRAIN_MIXES),
        default=ABLATION["train_opponents"],
        help="training opponents (mix: random or greedy, 1/2 each)",
    )
    ab.add_argument("--margin-coef", type=float, default=ABLATION["margin_coef"], help="score-margin shaping")
    ab.add_argument(
        "--score-reward",
        type=float,
        default=ABLATION["score_reward"],
        help="reward per point of own score gain",
    )
    ab.add_argument(
        "--reroll",
        choices=("learner", "stop", "greedy"),
        default=ABLATION["reroll"],
        help="diagnostic: who plays the learner's reroll decisions",
    )
    return parser


def model_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``--models``: each ``--save`` export evaluated like a trained learner (a ``--reroll`` model
    plays with the rule its card records)."""
    from shelfie_env.bots.learned.bot import load_policy

    rows = []
    for path in args.models:
        policy, card = load_policy(path, 2)
        config = dict(card.get("config", {}))
        if "opponents" in config:  # exports made before the option was renamed --train-opponents
            config.setdefault("train_opponents", config.pop("opponents"))
        settings = {**ABLATION, **{k: v for k, v in config.items() if k in ABLATION}}
        rule = reroll_rule(settings["reroll"])
        bot = PPOBot(policy, 2) if rule is None else FixedRerollsBot(policy, rule)
        decisions = int(card.get("steps", 0))
        budget = int(config.get("budget") or decisions)
        tag = variant(settings)
        row = benchmark.evaluate_row(
            bot,
            argparse.Namespace(**{**vars(args), "steps": budget}),
            learner=card.get("algo", "maskable_ppo"),
            seed=config.get("seed", 0),
            train_s=float(card.get("wall_time_s", 0.0)),
            decisions=decisions,
            train_opponents=train_opponents(settings),
            model=path.name,
            **({"variant": tag} if tag else {}),
        )
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = benchmark.parse_args(parser, argv, train_only=True)
    if args.curve_every < 0 or args.curve_games < 0:
        parser.error("--curve-every and --curve-games must be >= 0")
    if args.mcts_simulations <= 0:
        parser.error(f"--mcts-simulations must be positive, got {args.mcts_simulations}")
    try:
        bots = [reference_bot(name, args.mcts_simulations) for name in dict.fromkeys(args.bots)]
    except ImportError as exc:
        parser.error(f"--bots: {exc}")
    settings = {k: getattr(args, k) for k in ABLATION}
    tag = variant(settings)
    if tag and not args.models and set(args.algos) - set(SB3_LEARNERS):
        parser.error(f"the ablation options apply to {', '.join(SB3_LEARNERS)} only (--algos)")

    rows: list[dict[str, Any]] = model_rows(args) if args.models and args.eval_games else []
    for name, bot in bots if args.eval_games else ():
        rows.append(
            benchmark.evaluate_row(
                bot, args, learner=name, seed=None, train_s=0.0, mode="bot" if name in BOTS else "search"
            )
        )
        print(json.dumps(rows[-1]), flush=True)
    for algo in args.algos if not args.models else ():
        for seed in args.seeds:
            curve = Curve(args.curve_every, args.curve_games)
            learned, wall, decisions = train(algo, args.steps, seed, curve, settings, args.save)
            extra: dict[str, Any] = {
                "train_opponents": train_opponents(settings)
                if algo in SB3_LEARNERS
                else OWN_OPPONENTS.get(algo, benchmark.TRAIN_OPPONENTS)
            }
            if tag:
                extra["variant"] = tag
            if not args.eval_games:  # --eval-games 0: trained, not evaluated
                rows.append(
                    {
                        "learner": algo,
                        "seed": seed,
                        "steps": args.steps,
                        "decisions": decisions,
                        "train_s": round(wall, 1),
                        "mode": "stopped",
                        **extra,
                        "curve": curve.points,
                        "command": args.command,
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
                continue
            rule = reroll_rule(settings["reroll"]) if algo in SB3_LEARNERS else None
            bot = playing_bot(learned) if rule is None else FixedRerollsBot(learned, rule)
            workers = None
            if algo == "a2c" and rule is None:
                bot, workers = RawChoiceBot(learned), 1  # counts its first choices in this process
            row = benchmark.evaluate_row(
                bot,
                args,
                learner=algo,
                seed=seed,
                train_s=wall,
                decisions=decisions,
                workers=workers,
                **extra,
            )
            if isinstance(bot, RawChoiceBot):
                row["illegal_first_choice_rate"] = bot.illegal / max(bot.decisions, 1)
            row["curve"] = curve.points
            rows.append(row)
            print(json.dumps(row), flush=True)
    benchmark.add_rows(args.out, rows)
    merged = benchmark.load_results(args.out)["rows"]
    print(table(merged, args.opponents))
    print(f"rows merged into {args.out}; aggregate them: scripts/bench_report.py {args.out}")
    if args.plot:
        plot(merged, args.plot)
    return 0


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Curve win rate against greedy (selection deals) over learner decisions and training seconds, a line a run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from shelfie_env.train.benchmark_report import save_curve_figure

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for r in rows:
        if not r.get("curve") or r["mode"] == "raw":
            continue
        label = f"{benchmark.row_name(r)} seed {r['seed']}"
        d = [p["decisions"] for p in r["curve"]]
        t = [p["train_s"] for p in r["curve"]]
        w = [100 * p["win_rate"] for p in r["curve"]]
        axes[0].plot(d, w, marker=".", label=label)
        axes[1].plot(t, w, marker=".", label=label)
    axes[0].set_xscale("log")
    save_curve_figure(fig, axes, path)
    plt.close(fig)


def _percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _rate(side: dict[str, Any] | None) -> str:
    if not side:
        return "-"
    lo, hi = side["ci95"]
    return f"{100 * side['score_rate']:.1f}% ({100 * lo:.1f}–{100 * hi:.1f})"


def table(rows: list[dict[str, Any]], opponents: list[str] | None = None) -> str:
    """Markdown tables: the luck-aware rows, then the plain-arena rows of the same file."""
    new = [r for r in rows if r.get("protocol") == benchmark.PROTOCOL and r.get("vs_greedy")]
    old = [r for r in rows if r.get("protocol", benchmark.PLAIN) == benchmark.PLAIN]
    others = [o for o in (opponents or ["planner", "random"]) if o != "greedy"]
    others = [o for o in others if any(f"vs_{o}" in r for r in new)]
    out = [
        "| learner | seed | budget | decisions | train s | score vs greedy, raw (95% CI) | "
        "luck-corrected (95% CI) | variance factor | games (deals) | win vs greedy (Wilson 95%) | "
        + "".join(f"corrected vs {o} | " for o in others)
        + "illegal first choices |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(others) + "---:|",
    ]
    for r in new:
        g = r["vs_greedy"]
        vr = g.get("variance_ratio")
        out.append(
            f"| {benchmark.row_name(r)} | {'-' if r['seed'] is None else r['seed']} | "
            f"{benchmark.budget_label(r['steps'])} | "
            f"{r.get('decisions', r['steps']):,} | {r['train_s']:,.0f} | {_rate(g['raw'])} | {_rate(g['corrected'])} | "
            f"{f'{vr:.1f}x' if vr else '-'} | {g['games']} ({g['deals']}) | "
            f"{100 * g['win_rate']:.1f}% ({100 * g['win_ci95'][0]:.1f}–{100 * g['win_ci95'][1]:.1f}) | "
            + "".join(f"{_rate(r.get(f'vs_{o}', {}).get('corrected'))} | " for o in others)
            + f"{_percent(r.get('illegal_first_choice_rate'))} |"
        )
    if old:
        out += [
            "",
            "Plain-arena protocol (Wilson win rates; not aggregated by the report):",
            "",
            old_table(old),
        ]
    return "\n".join(out)


def old_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of plain-arena rows."""
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
