"""Self-play speed of the TD learner, next to the compute bound of its network (docs/benchmark.md).

    .venv/bin/python scripts/bench_selfplay.py --games 200 --lockstep 1 32

For each ``--lockstep`` value it plays ``--games`` self-play games of the
``td_2p`` recipe (a random network of its size, one process, one BLAS thread)
and prints games/s, learner decisions/s and where the time went (after-state
features, network forward, the search over the dice, the rest). Then it
measures this CPU's float32 matrix-product speed on the network's layers and
prints the decisions/s the network alone would allow.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time

import numpy as np
from threadpoolctl import threadpool_limits

from shelfie_env.bots.learned import afterstate
from shelfie_env.train.config import read_config
from shelfie_env.train.td import TDConfig, TDTrainer, play_games

PARTS = {
    "features": ("afterstate.py", "afterstates_many"),
    "network": ("afterstate.py", "__call__"),
    "search": ("search.py", "action_values"),
}


class CountingNet(afterstate.AfterstateNet):
    """The network, counting the after-states it values."""

    rows = calls = 0

    def __call__(self, features: np.ndarray) -> np.ndarray:
        self.rows += len(features)
        self.calls += 1
        return super().__call__(features)


def measure(cfg: TDConfig, seed: int) -> dict[str, float]:
    """One self-play batch of ``cfg``: speed, time shares and after-states per decision."""
    base = TDTrainer(cfg).numpy_net()
    net = CountingNet(base.layers, base.players, base.margin_coef)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    _, _, stats = play_games(net, cfg, np.random.default_rng(seed))
    prof.disable()
    wall = time.perf_counter() - t0
    table = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    out = {"lockstep": cfg.lockstep, "games_per_s": cfg.games / wall, "decisions_per_s": stats["decisions"] / wall}
    out["decisions_per_game"] = stats["decisions"] / cfg.games
    out["afterstates_per_decision"] = net.rows / stats["decisions"]
    out["afterstates_per_forward"] = net.rows / net.calls
    total = sum(v[2] for v in table.values())  # own time of every function
    for part, (file, func) in PARTS.items():
        cum = sum(v[3] for k, v in table.items() if k[0].endswith(file) and k[2] == func)
        out[f"{part}_share"] = cum / max(total, 1e-9)
    return out


def network_bound(cfg: TDConfig, rows: int, per_decision: float) -> dict[str, float]:
    """float32 GFLOP/s of the network on ``rows`` after-states at a time, and the decisions/s it allows."""
    net = TDTrainer(cfg).numpy_net()
    x = np.random.default_rng(0).random((rows, afterstate.feature_size(cfg.players)), dtype=np.float32)
    flops = 2 * sum(w.size for w, _ in net.layers)  # multiply-adds of one after-state
    net(x)
    reps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 1.0:
        net(x)
        reps += 1
    gflops = flops * rows * reps / (time.perf_counter() - t0) / 1e9
    return {
        "flops_per_afterstate": flops,
        "flops_per_decision": flops * per_decision,
        "gflops": gflops,
        "network_bound_decisions_per_s": gflops * 1e9 / (flops * per_decision),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="self-play games per measurement")
    parser.add_argument("--lockstep", type=int, nargs="+", default=[1, 32], help="games played side by side")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games <= 0 or min(args.lockstep) <= 0:
        parser.error("--games and --lockstep must be positive")
    recipe = {k: v for k, v in read_config("td_2p").items() if k not in ("algo", "eval_opponents")}
    with threadpool_limits(1):
        for lockstep in args.lockstep:
            cfg = TDConfig(**{**recipe, "games": args.games, "lockstep": lockstep, "seed": args.seed})
            row = measure(cfg, args.seed)
            row.update(network_bound(cfg, int(row["afterstates_per_forward"]), row["afterstates_per_decision"]))
            print(json.dumps({k: round(v, 3) for k, v in row.items()}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
