"""Stable-Baselines3 learners: ``maskable_ppo``, ``maskable_ppo_expect`` (sb3-contrib) and ``a2c``.

MaskablePPO (``n_steps`` 256 x 8 games, minibatch 512, 4 epochs, lr 3e-4, entropy 0.01, gamma 0.995, separate
2 x 256 tanh actor and critic) trains on the batched SB3 adapter
(:class:`~shelfie_env.envs.sb3_vec.ShelfieVecEnv`, 8 games in one call) against the protocol's opponents,
with the env options ``obs``, ``reroll="keep"`` and ``score_reward`` when the run sets them. Every
``checkpoint_every`` decisions (at the end of an update) it writes ``checkpoint.pkl`` in the run folder:
the model and optimiser (``model.save``), the games in flight, every random stream (the games', the
opponent draws', NumPy's, torch's, Python's) and the curve so far, so that a resumed run
(``MaskablePPO.load`` without a reset, ``learn(reset_num_timesteps=False)``) reaches the parameters of the
run that did not stop, bit for bit.

A2C (``n_steps`` 16), which has no masks, and the diagnostic ``--reroll stop|greedy`` train on a
``DummyVecEnv`` of 8 one-game envs (:func:`~shelfie_env.benchmark.ablations.one_game_env`) and do not
checkpoint.
"""

from __future__ import annotations

import io
import json
import pickle
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback

from shelfie_env.benchmark.ablations import (
    TRAIN_MIXES,
    FixedRerollsBot,
    one_game_env,
    reroll_rule,
    variant,
)
from shelfie_env.benchmark.learners import Run, Trained
from shelfie_env.benchmark.tasks import MixPool, load_seats_state, margin_term, seats_state
from shelfie_env.bots.learned.bot import PPOBot
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.envs.sb3_vec import ShelfieVecEnv

N_ENVS = 8
SOLO_REWARD = 0.02
"""Reward a point of the solo task (the shipped ``ppo_solo`` recipe's scale)."""
CHECKPOINT = "checkpoint.pkl"
FORMAT = 2
"""Checkpoint format: 2 holds the batched seats' public state (with the table size)."""


class BenchVecEnv(ShelfieVecEnv):
    """The batched SB3 adapter against the benchmark's opponents, with the score-margin term at game end."""

    def __init__(self, num_envs: int, seed: int, settings: dict[str, Any], players: int = 2) -> None:
        p_random, _ = TRAIN_MIXES[settings["train_opponents"]]
        self.pool = MixPool(p_random, seed)
        self.solo = players == 1
        self.margin_coef = 0.0 if self.solo else float(settings["margin_coef"])
        super().__init__(
            num_envs,
            num_players=players,
            opponents=() if self.solo else self.pool,
            seed=seed,
            obs=settings["obs"],
            reroll=settings["reroll"],
            score_reward=0.0 if self.solo else settings["score_reward"],
        )

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, dones, infos = super().step_wait()
        if self.solo:  # the solo reward: SOLO_REWARD a point scored
            rewards *= SOLO_REWARD
            for i in np.flatnonzero(dones):
                infos[i]["episode"]["r"] *= SOLO_REWARD
        elif self.margin_coef:
            for i in np.flatnonzero(dones):
                extra = margin_term(infos[i]["scores"], infos[i]["seat"], self.margin_coef)
                rewards[i] += extra
                infos[i]["episode"]["r"] += extra
        return obs, rewards, dones, infos

    def state(self) -> dict[str, Any]:
        return seats_state(self.core, self.pool)

    def load_state(self, state: dict[str, Any]) -> None:
        load_seats_state(self.core, self.pool, state)


def batched(run: Run) -> bool:
    """Whether ``run`` trains on the batched adapter (and checkpoints)."""
    return run.algo != "a2c" and run.settings["reroll"] in ("ids", "keep")


def build(run: Run, venv: Any) -> Any:
    """A fresh model of ``run.algo`` on ``venv``."""
    s = run.settings
    arch = list(s["net_arch"])
    kw: dict[str, Any] = {
        "policy_kwargs": {"net_arch": {"pi": arch, "vf": arch}},
        "seed": run.seed,
        "device": "cpu",
        "gamma": 0.995,
    }
    if run.algo == "a2c":
        from stable_baselines3 import A2C

        return A2C("MlpPolicy", venv, n_steps=16, learning_rate=3e-4, ent_coef=s["ent_coef"], **kw)
    from sb3_contrib import MaskablePPO

    policy: Any = "MlpPolicy"
    if run.algo == "maskable_ppo_expect":
        from shelfie_env.train.maskable_ppo.policy import ExpectHeadPolicy

        policy = ExpectHeadPolicy
        kw["policy_kwargs"].update(players=run.players, set_arch=arch)
    return MaskablePPO(
        policy,
        venv,
        n_steps=256,
        batch_size=s["batch_size"],
        n_epochs=s["n_epochs"],
        learning_rate=3e-4,
        ent_coef=s["ent_coef"],
        **kw,
    )


def save_checkpoint(path: Path, run: Run, model: Any, venv: BenchVecEnv) -> None:
    """The whole run at the end of an update (module docstring), written atomically."""
    buf = io.BytesIO()
    model.save(buf)
    state = {
        "format": FORMAT,
        "algo": run.algo,
        "seed": run.seed,
        "steps": run.steps,
        "settings": run.settings,
        "decisions": int(model.num_timesteps),
        "model": buf.getvalue(),
        "env": venv.state(),
        "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "random": random.getstate()},
        "curve": run.curve.state(),
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)


def load_checkpoint(path: Path, run: Run, venv: BenchVecEnv) -> Any:
    """The model of the checkpoint at ``path``, its env state, random streams and curve restored.

    The checkpoint is a pickle that the run itself wrote: a run folder is trusted like code (``shelfie bench
    --resume``'s help and docs/benchmark.md say so); never resume from a folder someone else gave you.
    """
    from sb3_contrib import MaskablePPO

    try:
        state = pickle.loads(path.read_bytes())  # trusted like code: the run's own folder (docstring)
        if state.get("format") != FORMAT:
            raise ValueError(f"format {state.get('format')!r}")
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError) as exc:
        raise ValueError(f"{path}: not a benchmark checkpoint ({exc})") from None
    saved = (state["algo"], state["seed"], state["steps"], state["settings"])
    if saved != (run.algo, run.seed, run.steps, run.settings):
        raise ValueError(
            f"{path}: a checkpoint of another run ({state['algo']}, seed {state['seed']}, {state['steps']} "
            f"decisions, settings {variant(state['settings']) or 'the protocol'}); resume with the same options"
        )
    venv.load_state(state["env"])
    model = MaskablePPO.load(io.BytesIO(state["model"]), env=venv, device="cpu", force_reset=False)
    torch.set_rng_state(state["rng"]["torch"])
    np.random.set_state(state["rng"]["numpy"])
    random.setstate(state["rng"]["random"])
    run.curve.load_state(state["curve"])
    return model


def train(run: Run) -> Trained | None:
    """Train ``run`` (module docstring); ``None`` when it stopped at ``run.stop_after`` with its checkpoint."""
    torch.set_num_threads(1)
    s = run.settings
    on_batch = batched(run)
    if on_batch:
        venv: Any = BenchVecEnv(N_ENVS, run.seed, s, run.players)
    else:
        from stable_baselines3.common.vec_env import DummyVecEnv

        venv = DummyVecEnv([lambda i=i: one_game_env(run.algo, run.seed, i, s) for i in range(N_ENVS)])
    ckpt = run.run_dir / CHECKPOINT if on_batch and run.run_dir is not None else None
    if ckpt is not None and run.resume and ckpt.is_file():
        model = load_checkpoint(ckpt, run, venv)
        print(json.dumps({"resumed": str(ckpt), "decisions": int(model.num_timesteps)}), flush=True)
    else:
        model = build(run, venv)
    obs_mode = s["obs"] if on_batch else "default"
    card = {"obs": obs_mode, "reroll": s["reroll"] if on_batch else "ids"}
    rule = reroll_rule(s["reroll"])

    def as_bot(policy_np: NumpyPolicy) -> PPOBot:
        return PPOBot(policy_np, run.players, card=card) if rule is None else FixedRerollsBot(policy_np, rule)

    curve = run.curve

    class CurvePoints(BaseCallback):
        def _on_step(self) -> bool:
            if curve.due(self.num_timesteps):
                curve.add(self.num_timesteps, as_bot(NumpyPolicy.from_sb3(self.model.policy)))
            return True

    start = int(model.num_timesteps)
    first = start == 0
    every = run.checkpoint_every if ckpt is not None else 0
    while model.num_timesteps < run.steps:
        target = run.steps
        if every:
            target = min(target, (model.num_timesteps // every + 1) * every)
        if run.stop_after is not None:
            target = min(target, start + run.stop_after)
        model.learn(target - model.num_timesteps, callback=CurvePoints(), reset_num_timesteps=first)
        first = False
        if ckpt is not None:
            run.run_dir.mkdir(parents=True, exist_ok=True)
            save_checkpoint(ckpt, run, model, venv)
        stopped = run.stop_after is not None and model.num_timesteps >= start + run.stop_after
        if stopped and model.num_timesteps < run.steps:
            return None
    wall = curve.train_s()
    venv.close()
    if run.save is not None:
        from shelfie_env.bots.learned.card import make_card
        from shelfie_env.train.checkpoint import export_weights

        config = {"activation": "tanh", "seed": run.seed, "budget": run.steps, **s}
        name = run.export_name()
        meta = make_card(
            run.players,
            algo=run.algo,
            config=config,
            steps=model.num_timesteps,
            wall_time_s=wall,
            obs=obs_mode,
            extra={"reroll": card["reroll"]},
        )
        print(json.dumps({"saved": str(export_weights(model, run.save / name, meta))}), flush=True)
    policy_np = NumpyPolicy.from_sb3(model.policy)
    bot = as_bot(policy_np)
    curve.add(int(model.num_timesteps), bot, final=True)
    env = f"ShelfieVecEnv, {N_ENVS} games" if on_batch else f"DummyVecEnv of {N_ENVS} one-game envs"
    return Trained(bot, wall, int(model.num_timesteps), {"env": env}, policy=policy_np)
