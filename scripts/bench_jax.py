"""Speed of the JAX twin on whatever device jax finds: random play, compile times, the PPO loop.

Prints, in one run on one machine: random-play env steps/s of the twin (vmapped, jitted, auto-reset,
the observation computed every step as pgx does) at each batch size, the compile time of one
vmapped step per table size (1-4 players), the PPO loop's decisions/s (rollout + GAE + update,
shelfie_env/jax_env/ppo.py) and, when numba is installed, the numba engine's random-play steps/s
(with observations) at the same batch sizes on this machine's CPU.

    .venv/bin/python scripts/bench_jax.py --sizes 1024 4096 16384 65536
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from pgx.experimental import auto_reset

from shelfie_env.jax_env import make
from shelfie_env.jax_env.ppo import PPOConfig, make_train


def random_legal(mask: jax.Array, key: jax.Array) -> jax.Array:
    """One uniformly drawn legal id per row of ``mask`` (B, 120), from one uniform number per row."""
    count = mask.sum(axis=1)
    pick = jnp.floor(jax.random.uniform(key, count.shape) * count).astype(jnp.int32)
    return jnp.argmax(jnp.cumsum(mask, axis=1) > pick[:, None], axis=1)


def random_play(num_players: int, batch: int, calls_steps: int):
    """A jitted ``(states, key) -> states`` playing ``calls_steps`` random legal steps in every game."""
    env = make(num_players)
    step = jax.vmap(auto_reset(env.step, env.init))

    def run(states, key):
        def body(i, states):
            k_act, k_step = jax.random.split(jax.random.fold_in(key, i))
            return step(
                states, random_legal(states.legal_action_mask, k_act), jax.random.split(k_step, batch)
            )

        return jax.lax.fori_loop(0, calls_steps, body, states)

    init = jax.jit(jax.vmap(env.init))
    return init, jax.jit(run)


def bench_random(num_players: int, batch: int, seconds: float, steps: int) -> dict[str, Any]:
    init, run = random_play(num_players, batch, steps)
    states = init(jax.random.split(jax.random.PRNGKey(0), batch))
    t0 = time.perf_counter()
    compiled = run.lower(states, jax.random.PRNGKey(1)).compile()
    compile_s = time.perf_counter() - t0
    states = jax.block_until_ready(compiled(states, jax.random.PRNGKey(2)))  # warm
    calls, t0 = 0, time.perf_counter()
    while True:
        states = compiled(states, jax.random.PRNGKey(3 + calls))
        calls += 1
        jax.block_until_ready(states)
        if time.perf_counter() - t0 >= seconds:
            break
    elapsed = time.perf_counter() - t0
    return {"batch": batch, "steps_per_s": calls * steps * batch / elapsed, "compile_s": compile_s}


def compile_step(num_players: int, batch: int = 1024) -> float:
    """Seconds to compile one vmapped ``env.step`` of a ``num_players`` table."""
    env = make(num_players)
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    actions = jnp.zeros(batch, dtype=jnp.int32)
    keys = jax.random.split(jax.random.PRNGKey(1), batch)
    t0 = time.perf_counter()
    jax.jit(jax.vmap(env.step)).lower(states, actions, keys).compile()
    return time.perf_counter() - t0


def bench_ppo(envs: int, steps: int, updates: int) -> dict[str, Any]:
    cfg = PPOConfig(num_envs=envs, num_steps=steps, total_decisions=envs * steps * updates)
    train = jax.jit(make_train(cfg))
    t0 = time.perf_counter()
    compiled = train.lower(jax.random.PRNGKey(0)).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(jax.random.PRNGKey(0)))
    elapsed = time.perf_counter() - t0
    decisions = cfg.num_updates * envs * steps
    return {
        "envs": envs,
        "decisions": decisions,
        "decisions_per_s": decisions / elapsed,
        "compile_s": compile_s,
    }


def bench_numba(batch: int, seconds: float) -> dict[str, Any] | None:
    try:
        from shelfie_env.batched import BatchedGame
    except ImportError:
        return None
    game = BatchedGame(batch, 2, seed=0)
    actions = np.empty(batch, dtype=np.int64)
    obs = np.empty((batch, game.obs_size), dtype=np.float32)

    def one() -> None:
        game.random_actions(out=actions)
        if game.step(actions):
            game.reset(which=game.done)
        game.observe(out=obs)

    for _ in range(3):
        one()
    calls, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        one()
        calls += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"batch": batch, "steps_per_s": calls * batch / wall, "steps_per_cpu_s": calls * batch / cpu}


def machine() -> str:
    dev = jax.devices()[0]
    kind = getattr(dev, "device_kind", dev.platform)
    return f"jax {jax.__version__} on {dev.platform} ({kind}); {os.cpu_count()} CPU cores, {platform.processor() or platform.machine()}"


def build_parser() -> argparse.ArgumentParser:
    """The script's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 16384, 65536])
    parser.add_argument(
        "--players", type=int, default=2, choices=[1, 2, 3, 4], help="table size of random play"
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement")
    parser.add_argument("--steps", type=int, default=32, help="steps per compiled random-play call")
    parser.add_argument("--ppo-envs", type=int, default=1024)
    parser.add_argument("--ppo-steps", type=int, default=32)
    parser.add_argument("--ppo-updates", type=int, default=4)
    parser.add_argument("--skip-numba", action="store_true")
    parser.add_argument("--json", help="also write the results to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if min(args.sizes) < 1 or args.seconds <= 0 or args.steps < 1 or min(args.ppo_envs, args.ppo_steps) < 1:
        parser.error("sizes, --seconds, --steps and the PPO sizes must be positive")
    out: dict[str, Any] = {"machine": machine()}
    print(out["machine"], flush=True)
    out["compile_step_s"] = {}
    for n in (1, 2, 3, 4):
        out["compile_step_s"][n] = compile_step(n)
        print(f"compile vmapped step, {n} player(s): {out['compile_step_s'][n]:.1f} s", flush=True)
    out["random"] = []
    for batch in args.sizes:
        row = bench_random(args.players, batch, args.seconds, args.steps)
        out["random"].append(row)
        print(
            f"twin random play, {args.players}p, batch {batch:6d}: {row['steps_per_s']:12,.0f} steps/s",
            flush=True,
        )
    if not args.skip_numba:
        out["numba"] = []
        for batch in args.sizes:
            row = bench_numba(batch, args.seconds)
            if row is None:
                print("numba engine: not installed (the fast extra)")
                break
            out["numba"].append(row)
            print(
                f"numba engine random play, 2p, batch {batch:6d}: {row['steps_per_s']:12,.0f} steps/s"
                f" ({row['steps_per_cpu_s']:,.0f} per CPU-s)",
                flush=True,
            )
    ppo = bench_ppo(args.ppo_envs, args.ppo_steps, args.ppo_updates)
    out["ppo"] = ppo
    print(
        f"PPO self-play loop, {ppo['envs']} games x {args.ppo_steps} steps, {ppo['decisions']} decisions: "
        f"{ppo['decisions_per_s']:,.0f} decisions/s (compile {ppo['compile_s']:.1f} s)",
        flush=True,
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
