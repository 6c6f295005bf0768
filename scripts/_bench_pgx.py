"""pgx ``connect_four`` random legal play, jitted and vmapped: the peer of bench_env.py.

Run by bench_env.py with pgx's own Python: ``python _bench_pgx.py N [N ...]``.
It compiles one step function per N, prints a JSON line (versions, compile
times), then answers each stdin line ``N SECONDS`` with a JSON line
``{"n": N, "steps_per_s": ..., "steps_per_cpu_s": ...}`` so the caller can interleave pgx runs with its
own. Each timed call is one jitted function: random legal actions for the N
games plus ``auto_reset(env.step, env.init)``, called from a Python loop.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pgx
from pgx.experimental import auto_reset


class Runner:
    """One batch of N connect_four games with a compiled random-play step."""

    def __init__(self, n: int) -> None:
        env = pgx.make("connect_four")
        step = auto_reset(env.step, env.init)

        def one(state: Any, key: Any) -> tuple[Any, Any]:
            key, k_act, k_step = jax.random.split(key, 3)
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            actions = jax.random.categorical(k_act, logits, axis=-1)
            return jax.vmap(step)(state, actions, jax.random.split(k_step, n)), key

        self.n = n
        self.one: Callable[[Any, Any], tuple[Any, Any]] = jax.jit(one)
        key, k0 = jax.random.split(jax.random.PRNGKey(0))
        self.key = key
        self.state = jax.jit(jax.vmap(env.init))(jax.random.split(k0, n))
        t = time.perf_counter()
        self.state, self.key = self.one(self.state, self.key)
        jax.block_until_ready(self.state)
        self.compile_s = time.perf_counter() - t

    def rate(self, seconds: float) -> tuple[float, float]:
        """(steps per wall second, steps per CPU second of this process, all threads)."""
        calls = 0
        t0, c0 = time.perf_counter(), time.process_time()
        while True:
            for _ in range(20):
                self.state, self.key = self.one(self.state, self.key)
            jax.block_until_ready(self.state)
            calls += 20
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                cpu = max(time.process_time() - c0, 1e-9)
                return calls * self.n / elapsed, calls * self.n / cpu


def main() -> None:
    runners = {int(a): Runner(int(a)) for a in sys.argv[1:]}
    hello = {
        "pgx": pgx.__version__,
        "jax": jax.__version__,
        "devices": [str(d) for d in jax.devices()],
        "compile_s": {n: r.compile_s for n, r in runners.items()},
    }
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        n, seconds = line.split()
        wall, cpu = runners[int(n)].rate(float(seconds))
        print(json.dumps({"n": int(n), "steps_per_s": wall, "steps_per_cpu_s": cpu}), flush=True)


if __name__ == "__main__":
    main()
