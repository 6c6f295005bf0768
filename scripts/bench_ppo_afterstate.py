"""Throughput of the after-state PPO trainer, next to its update bound and its network's FLOP bound.

    .venv/bin/python scripts/bench_ppo_afterstate.py --games 128 --iterations 2

Plays ``--iterations`` iterations of ``python -m shelfie_env.train.ppo_afterstate``
(rollout of ``--games`` whole games on the batched engine, then the PPO update;
a random network of the recipe's size) and prints, in learner steps
(decisions) per second:

* the whole loop (rollout + update);
* the update alone (the gradient-update bound: what the loop would reach with
  rollouts for free);
* the FLOP bound of the update: this CPU's measured float32 speed on the
  network's forward + backward, divided by the FLOPs the update spends per
  learner step (after-states valued per decision x 3 x forward FLOPs x epochs).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import torch

from shelfie_env.train.afterstate_rollout import play_rollout
from shelfie_env.train.ppo_afterstate import PPOAfterstateConfig, PPOAfterstateTrainer


def mlp_flops_per_s(net: torch.nn.Module, rows: int, repeats: int) -> float:
    """Measured float32 FLOP/s of forward + backward through ``net`` on ``rows`` random inputs."""
    first = next(m for m in net.values if isinstance(m, torch.nn.Linear))
    x = torch.randn(rows, first.in_features)
    flops = 3 * net.flops_per_afterstate() * rows  # backward ~ 2 x forward
    for _ in range(2):
        net(x).sum().backward()
    t = time.perf_counter()
    for _ in range(repeats):
        net(x).sum().backward()
    return flops * repeats / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=128)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--net-arch", type=int, nargs="+", default=[128, 128])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = PPOAfterstateConfig(games=args.games, epochs=args.epochs, net_arch=args.net_arch,
                                  threads=args.threads, seed=args.seed, run_dir=tmp)
        tr = PPOAfterstateTrainer(cfg)
        with torch.no_grad():  # a random, non-constant network (the recipe's output layer starts at zero)
            tr.net.values[-1].weight.normal_(0.0, 0.3)
        play_rollout(tr.net, 4, cfg.players, cfg.opp_greedy, cfg.margin_coef, np.random.default_rng(0))  # warm up
        decisions = afterstates = 0
        t_roll = t_upd = t_fwd = 0.0
        for _ in range(args.iterations):
            t0 = time.perf_counter()
            roll = play_rollout(tr.net, cfg.games, cfg.players, cfg.opp_greedy, cfg.margin_coef, tr.rng)
            t1 = time.perf_counter()
            tr.update(roll)
            t_upd += time.perf_counter() - t1
            t_roll += t1 - t0
            t_fwd += roll.stats["rollout_forward_s"]
            decisions += roll.decisions
            afterstates += int(roll.stats["afterstates"])
        per_step = afterstates / decisions
        flop_step = 3 * tr.net.flops_per_afterstate() * per_step * cfg.epochs
        peak = mlp_flops_per_s(tr.net, 40_000, 5)
    whole = decisions / (t_roll + t_upd)
    update = decisions / t_upd
    print(f"games {args.games} x {args.iterations} iterations, {decisions} learner steps, "
          f"net {args.net_arch}, {args.epochs} epochs, {args.threads} torch thread(s)")
    print(f"after-states valued per learner step: {per_step:.1f}; update FLOPs per step: {flop_step / 1e6:.1f} M")
    print(f"rollout {t_roll:.1f} s (network forward {t_fwd:.1f} s), update {t_upd:.1f} s")
    print("| measure | learner steps/s |")
    print("|---|---:|")
    print(f"| whole loop (rollout + update) | {whole:,.0f} |")
    print(f"| update alone (gradient-update bound) | {update:,.0f} |")
    print(f"| FLOP bound of the update ({peak / 1e9:.1f} GFLOP/s measured on the MLP) | {peak / flop_step:,.0f} |")
    print(f"whole loop / update bound: {whole / update:.0%}; update / FLOP bound: {update / (peak / flop_step):.0%}")


if __name__ == "__main__":
    main()
