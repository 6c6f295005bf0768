"""Throughput of the flat masked PPO loop against its own update bound and against SB3 MaskablePPO.

Run: ``.venv/bin/python scripts/bench_ppo_loop.py [--iterations 3] [--threads 2]``

Both learners use the same network (separate 256x256 tanh actor and critic), the same
batch (256 games x 32 decisions = 8,192 decisions), minibatches of 2,048 and 4 epochs,
2-player games on the batched engine against the training opponents (``random`` or
``greedy``, drawn per game), ``obs="features"``. It prints
one markdown table (docs/performance.md, "The flat PPO loop"):

* ``update bound``: decisions/s if collecting a batch cost nothing (batch / time of one
  PPO update of ppo_flat);
* ``ppo_flat loop``: ``shelfie train --algo ppo_flat``'s whole loop (rollout, GAE, update);
* ``SB3 MaskablePPO loop``: ``MaskablePPO.learn`` on the SB3 adapter ``ShelfieVecEnv``;
* ``FLOP bound``: the network's multiply-adds per decision (one rollout forward of both
  nets, then per epoch a forward and a backward, counted as 3 forwards) at the matmul
  rate this CPU reaches on a 2048x256 by 256x256 product.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import torch

NUM_ENVS, NUM_STEPS, MINIBATCH, EPOCHS, NET = 256, 32, 2048, 4, [256, 256]


def matmul_flops(seconds: float = 2.0) -> float:
    """FLOP/s of float32 2048x256 @ 256x256 products on this CPU."""
    a, b = torch.randn(2048, 256), torch.randn(256, 256)
    for _ in range(20):
        a @ b
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a @ b
        n += 1
    return n * 2 * 2048 * 256 * 256 / (time.perf_counter() - t0)


def flops_per_decision(obs_dim: int, actions: int = 120) -> float:
    """Multiply-add FLOPs (2 per MAC) of one decision's share of rollout and update (module doc)."""
    sizes = [obs_dim, *NET]
    body = sum(2 * i * o for i, o in zip(sizes, sizes[1:]))
    forward = (body + 2 * NET[-1] * actions) + (body + 2 * NET[-1])
    return forward * (1 + 3 * EPOCHS)


def ppo_flat_rates(iterations: int) -> tuple[float, float, int]:
    """(update bound, whole loop) in decisions/s of ppo_flat, and its observation size."""
    from shelfie_env.train.ppo_flat.ppo import PPOFlatConfig, Trainer

    with tempfile.TemporaryDirectory(prefix="bench_ppo_loop_") as run_dir:  # a timed run keeps nothing
        config = PPOFlatConfig(
            players=2, total_steps=10**9, obs="features", num_envs=NUM_ENVS, num_steps=NUM_STEPS,
            epochs=EPOCHS, minibatch_size=MINIBATCH, eval_every=0, run_dir=run_dir,
        )
        trainer = Trainer(config)
        trainer.update(trainer.rollout(), torch.Generator().manual_seed(0))  # warm-up (compilation)
        batch = trainer.rollout()
        t0 = time.perf_counter()
        for k in range(iterations):
            trainer.update(batch, torch.Generator().manual_seed(k))
        update_s = (time.perf_counter() - t0) / iterations
        t0 = time.perf_counter()
        for k in range(iterations):
            trainer.update(trainer.rollout(), torch.Generator().manual_seed(k))
        loop_s = (time.perf_counter() - t0) / iterations
    return config.batch_size / update_s, config.batch_size / loop_s, trainer.obs_dim


def sb3_rate(iterations: int) -> float:
    """Whole-loop decisions/s of sb3-contrib MaskablePPO on ShelfieVecEnv with the same settings."""
    from sb3_contrib import MaskablePPO

    from shelfie_env.envs.sb3_vec import ShelfieVecEnv
    from shelfie_env.train.ppo_flat.ppo import Opponents, PPOFlatConfig

    pool = Opponents(PPOFlatConfig(players=2), seed=1)  # random or greedy per game, as ppo_flat trains
    env = ShelfieVecEnv(NUM_ENVS, 2, opponents=pool, seed=0, obs="features")
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=NUM_STEPS, batch_size=MINIBATCH, n_epochs=EPOCHS, seed=0, verbose=0,
        policy_kwargs={"net_arch": {"pi": NET, "vf": NET}, "activation_fn": torch.nn.Tanh},
    )
    model.learn(NUM_ENVS * NUM_STEPS)  # warm-up
    t0 = time.perf_counter()
    model.learn(NUM_ENVS * NUM_STEPS * iterations, reset_num_timesteps=False)
    return NUM_ENVS * NUM_STEPS * iterations / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=3, help="PPO iterations timed per learner (default 3)")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = p.parse_args(argv)
    if args.iterations < 1:
        p.error("--iterations must be at least 1")
    if args.threads:
        torch.set_num_threads(args.threads)
    flops = matmul_flops()
    bound, loop, obs_dim = ppo_flat_rates(args.iterations)
    sb3 = sb3_rate(args.iterations)
    flop_bound = flops / flops_per_decision(obs_dim)
    print(f"torch threads {torch.get_num_threads()}, matmul {flops / 1e9:.1f} GFLOP/s, "
          f"{flops_per_decision(obs_dim) / 1e6:.2f} MFLOP per decision, batch {NUM_ENVS * NUM_STEPS}\n")
    print("| measure | decisions/s | share of the update bound |")
    print("|---|---:|---:|")
    for name, rate in (
        ("FLOP bound of the network", flop_bound),
        ("ppo_flat update bound", bound),
        ("ppo_flat whole loop", loop),
        ("SB3 MaskablePPO whole loop (ShelfieVecEnv)", sb3),
    ):
        print(f"| {name} | {rate:,.0f} | {rate / bound:.0%} |")
    print(f"\nppo_flat / SB3: {loop / sb3:.2f}x")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
