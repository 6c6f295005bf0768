"""pgx ``connect_four`` random legal play, jitted and vmapped (run by bench_env.py in pgx's own venv).

Usage: python _bench_pgx.py SECONDS REPEATS N [N ...]; prints one JSON object.
Each measured call is one jitted function: random legal actions for the N games
plus ``auto_reset(env.step, env.init)``, called from a Python loop.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import pgx
from pgx.experimental import auto_reset


def measure(n: int, seconds: float, repeats: int) -> dict:
    env = pgx.make("connect_four")
    step = auto_reset(env.step, env.init)

    def one(state, key):
        key, k_act, k_step = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        actions = jax.random.categorical(k_act, logits, axis=-1)
        state = jax.vmap(step)(state, actions, jax.random.split(k_step, n))
        return state, key

    one = jax.jit(one)
    key = jax.random.PRNGKey(0)
    key, k0 = jax.random.split(key)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(k0, n))
    t = time.perf_counter()
    state, key = one(state, key)
    jax.block_until_ready(state)
    compile_s = time.perf_counter() - t
    rates = []
    for _ in range(repeats):
        calls = 0
        t0 = time.perf_counter()
        while True:
            for _ in range(20):
                state, key = one(state, key)
            jax.block_until_ready(state)
            calls += 20
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                break
        rates.append(calls * n / elapsed)
    return {"n": n, "steps_per_s": statistics.median(rates), "repeats": rates, "compile_s": compile_s}


def main() -> None:
    seconds, repeats = float(sys.argv[1]), int(sys.argv[2])
    sizes = [int(a) for a in sys.argv[3:]]
    out = {
        "pgx": pgx.__version__,
        "jax": jax.__version__,
        "devices": [str(d) for d in jax.devices()],
        "results": [measure(n, seconds, repeats) for n in sizes],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
