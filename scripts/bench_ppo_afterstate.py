"""Throughput of the after-state PPO trainer, next to its update bound and its network's FLOP bound.

    .venv/bin/python scripts/bench_ppo_afterstate.py --games 128 --iterations 2

Runs ``--iterations`` iterations of ``python -m shelfie_env.train.ppo_afterstate``
(``--games`` whole games on the batched engine, played by a worker process while
the PPO update of the previous games runs, or with ``--no-rollout-worker`` in
turn with it; a random network of the recipe's size; checkpoints included) and
prints, in learner steps (decisions) per second:

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

import torch

from shelfie_env.train.ppo_afterstate import PPOAfterstateConfig, PPOAfterstateTrainer, RolloutSource


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
    ap.add_argument("--iterations", type=int, default=3, help="timed iterations (after one untimed)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--net-arch", type=int, nargs="+", default=[128, 128])
    ap.add_argument("--rollout-worker", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = PPOAfterstateConfig(games=args.games, epochs=args.epochs, net_arch=args.net_arch,
                                  threads=args.threads, seed=args.seed, run_dir=tmp, eval_games=0,
                                  rollout_worker=args.rollout_worker, total_steps=10**9)
        tr = PPOAfterstateTrainer(cfg)
        with torch.no_grad():  # a random, non-constant network (the recipe's output layer starts at zero)
            tr.net.values[-1].weight.normal_(0.0, 0.3)
        tr.source = RolloutSource(cfg)
        try:
            tr.iterate(log=lambda s: None)  # untimed: starts the worker, fills the pipeline
            recs = []
            t0 = time.perf_counter()
            for _ in range(args.iterations):
                recs.append(tr.iterate(log=lambda s: None))
            elapsed = time.perf_counter() - t0
        finally:
            tr.source.close()
        decisions = sum(r["decisions"] for r in recs)
        afterstates = sum(r["afterstates"] for r in recs)
        t_upd = sum(r["update_s"] for r in recs)
        t_wait = sum(r["rollout_wait_s"] for r in recs)
        per_step = afterstates / decisions
        flop_step = 3 * tr.net.flops_per_afterstate() * per_step * cfg.epochs
        peak = mlp_flops_per_s(tr.net, 40_000, 5)
    whole = decisions / elapsed
    update = decisions / t_upd
    where = "a worker process" if args.rollout_worker else "this process, between updates"
    print(f"games {args.games} x {args.iterations} iterations, {decisions} learner steps, net {args.net_arch}, "
          f"{args.epochs} epochs, {args.threads} torch thread(s), rollouts in {where}")
    print(f"after-states valued per learner step: {per_step:.1f}; update FLOPs per step: {flop_step / 1e6:.1f} M")
    print(f"wall {elapsed:.1f} s: update {t_upd:.1f} s, waiting for games {t_wait:.1f} s, "
          f"checkpoints and the rest {elapsed - t_upd - t_wait:.1f} s")
    print("| measure | learner steps/s |")
    print("|---|---:|")
    print(f"| whole loop | {whole:,.0f} |")
    print(f"| update alone (gradient-update bound) | {update:,.0f} |")
    print(f"| FLOP bound of the update ({peak / 1e9:.1f} GFLOP/s measured on the MLP) | {peak / flop_step:,.0f} |")
    print(f"whole loop / update bound: {whole / update:.0%}; update / FLOP bound: {update / (peak / flop_step):.0%}")


if __name__ == "__main__":
    main()
