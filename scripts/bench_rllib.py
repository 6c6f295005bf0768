"""Throughput of league self-play on RLlib: env steps/s and learner samples/s (docs/performance.md).

    .venv/bin/python scripts/bench_rllib.py --runners 0 1 2 --iterations 3
    .venv/bin/python scripts/bench_rllib.py --cluster-nodes 2 --runners 1 2 --iterations 3

For each ``--runners`` value it builds the ``ppo_config`` of a 2-player league
(flat 2 x 256 head, ``--batch`` env steps per iteration, 8 games per env
runner), runs one warm-up iteration and then ``--iterations`` timed ones, and
prints env steps sampled per second, learner samples per second (the learner's
own decisions, which it trains on; opponents' moves are sampled but not) and
the time split between sampling, the learner update and the weight sync.

``--cluster-nodes N`` runs the same on a simulated cluster on this machine
(``ray.cluster_utils.Cluster``): a head node that holds the driver and the
learner, and N worker nodes of ``--cpus-per-node`` CPUs each, every node its
own raylet and object store talking over loopback, so env runners on worker
nodes ship their episodes across nodes as they would on a real cluster.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def measure(runners: int, iterations: int, batch: int, seed: int) -> dict[str, Any]:
    from shelfie_env.rllib import ppo_config
    from shelfie_env.rllib.train import RLlibConfig

    cfg = RLlibConfig(num_env_runners=runners, train_batch_size=batch, seed=seed)
    algo = ppo_config(cfg).build_algo()
    try:
        algo.train()  # warm-up: actors start, modules build
        sampled = trained = 0.0
        timers: dict[str, float] = {}
        t0 = time.perf_counter()
        for _ in range(iterations):
            result = algo.train()
            sampled += result["env_runners"]["num_env_steps_sampled"]
            trained += result["env_runners"]["num_module_steps_sampled"]["learner"]
            for key in ("env_runner_sampling_timer", "learner_update_timer", "synch_weights"):
                timers[key] = timers.get(key, 0.0) + float(result["timers"].get(key, 0.0))
        wall = time.perf_counter() - t0
    finally:
        algo.stop()
    return {
        "env_runners": runners,
        "env_steps_per_s": round(sampled / wall, 1),
        "learner_samples_per_s": round(trained / wall, 1),
        "sample_share": round(timers["env_runner_sampling_timer"] / wall, 3),
        "learn_share": round(timers["learner_update_timer"] / wall, 3),
        "sync_share": round(timers["synch_weights"] / wall, 3),
        "seconds": round(wall, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2], help="env runner counts to measure")
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per measurement")
    parser.add_argument("--batch", type=int, default=4000, help="env steps per iteration")
    parser.add_argument("--cluster-nodes", type=int, default=0, help="simulate a cluster of N worker nodes")
    parser.add_argument("--cpus-per-node", type=int, default=1, help="CPUs each simulated worker node offers")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.iterations <= 0 or args.batch <= 0 or min(args.runners) < 0 or args.cluster_nodes < 0:
        parser.error("--iterations and --batch must be positive, --runners and --cluster-nodes >= 0")

    import ray
    import torch

    torch.set_num_threads(1)
    cluster = None
    if args.cluster_nodes:
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        for _ in range(args.cluster_nodes):
            cluster.add_node(num_cpus=args.cpus_per_node)
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(include_dashboard=False, log_to_driver=False)
    setup = {"cluster_nodes": args.cluster_nodes, "nodes": len(ray.nodes()), "cpus": ray.cluster_resources().get("CPU")}
    print(json.dumps({"setup": setup}), flush=True)
    try:
        for k in args.runners:
            print(json.dumps({**measure(k, args.iterations, args.batch, args.seed), **setup}), flush=True)
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
