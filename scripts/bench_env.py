"""Throughput benchmark of shelfie-env (random legal play), printed as a table and saved as JSON.

Measured side by side in one run, each figure the median of ``--repeats`` runs
of ``--seconds`` seconds:

1. PettingZoo AEC: ``shelfie_v0.env()`` vs ``connect_four_v3.env()``, the same
   ``agent_iter`` loop with a uniformly random legal action (steps/s, ratio).
2. The batched engine (``shelfie_env.batched.BatchedGame``, 2 players) at
   N = 1, 64, 1024, 4096: one call draws a random legal action per game, one
   call steps all games, finished games are reset; with and without computing
   the (N, 184) observations each step; peak memory (tracemalloc) of the engine.
3. Gymnasium vector envs (Solo, Versus vs ``random``) and the SB3 adapter at
   N = 64 with random legal actions.
4. MaskablePPO fps: through the SB3 adapter (64 games) vs on a ``DummyVecEnv``
   of 8 scalar ``shelfie/Versus-v0`` envs (same hyperparameters, same number
   of samples per rollout, one torch thread for both), with SB3's default
   hyperparameters and with this project's training recipe (minibatches of
   1024, 4 epochs, a 256x256 network), against ``random`` and (recipe) ``greedy``
   opponents; plus the rate of the gradient updates alone, which bounds the
   whole-loop ratio any env could reach.
5. pgx ``connect_four`` random play, jitted + vmapped, at N = 64 and 1024, run
   by ``--pgx-python`` (a Python with ``pgx`` and ``jax``) in a subprocess
   that stays up, its timed runs taken in turns with the batched engine's at
   the same N (so both see the same machine load); skipped with the reason
   printed when that Python is missing.

    python scripts/bench_env.py [--json artifacts/bench.json] [--pgx-python .pgx-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PGX = str(ROOT / ".pgx-venv" / "bin" / "python")


def one_rate(run: Callable[[], int], seconds: float) -> tuple[float, float]:
    """(steps per wall second, steps per CPU second of this process) of calling ``run()`` for ``seconds``.

    ``run()`` returns its step count. The CPU-second rate does not depend on
    how much of the machine other processes take.
    """
    steps = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while True:
        steps += run()
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return steps / elapsed, steps / max(time.process_time() - c0, 1e-9)


def summarize(runs: list[tuple[float, float]]) -> dict[str, Any]:
    """Medians of timed runs."""
    return {
        "steps_per_s": statistics.median(r[0] for r in runs),
        "steps_per_cpu_s": statistics.median(r[1] for r in runs),
        "repeats": runs,
    }


def timed_rate(run: Callable[[], int], seconds: float, repeats: int) -> dict[str, Any]:
    """Medians of ``repeats`` timed runs (after one warm-up call: compilation, caches)."""
    run()
    return summarize([one_rate(run, seconds) for _ in range(repeats)])


# ---------------------------------------------------------------- 1. AEC envs
def aec_chunk(env: Any, rng: np.random.Generator, episodes: int = 5) -> Callable[[], int]:
    """Random legal play over ``episodes`` whole games (the loop is the same for every env)."""
    state = {"seed": 0}

    def run() -> int:
        steps = 0
        for _ in range(episodes):
            env.reset(seed=state["seed"])
            state["seed"] += 1
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    action = None
                else:
                    legal = np.flatnonzero(obs["action_mask"])
                    action = int(legal[rng.integers(len(legal))])
                env.step(action)
                steps += 1
        return steps

    return run


def bench_aec(seconds: float, repeats: int) -> dict[str, Any]:
    from pettingzoo.classic import connect_four_v3

    from shelfie_env import shelfie_v0

    out: dict[str, Any] = {}
    for name, make in (("connect_four_v3", connect_four_v3.env), ("shelfie_v0", shelfie_v0.env)):
        out[name] = timed_rate(aec_chunk(make(), np.random.default_rng(0)), seconds, repeats)
    out["ratio"] = out["shelfie_v0"]["steps_per_s"] / out["connect_four_v3"]["steps_per_s"]
    out["ratio_per_cpu_s"] = out["shelfie_v0"]["steps_per_cpu_s"] / out["connect_four_v3"]["steps_per_cpu_s"]
    return out


# ------------------------------------------------------------ 2. batched engine
def engine_chunk(n: int, with_obs: bool, calls: int) -> Callable[[], int]:
    from shelfie_env.batched import BatchedGame

    game = BatchedGame(n, 2, seed=0)
    actions = np.empty(n, dtype=np.int64)
    obs = np.empty((n, game.obs_size), dtype=np.float32)

    def run() -> int:
        for _ in range(calls):
            game.random_actions(out=actions)
            if game.step(actions):
                game.reset(which=game.done)
            if with_obs:
                game.observe(out=obs)
        return calls * n

    return run


def engine_peak_memory(n: int) -> int:
    """Peak bytes allocated (tracemalloc) building the engine and playing 50 steps with observations."""
    from shelfie_env.batched import BatchedGame

    tracemalloc.start()
    try:
        game = BatchedGame(n, 2, seed=0)
        actions = np.empty(n, dtype=np.int64)
        obs = np.empty((n, game.obs_size), dtype=np.float32)
        for _ in range(50):
            game.random_actions(out=actions)
            if game.step(actions):
                game.reset(which=game.done)
            game.observe(out=obs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_engine(
    sizes: list[int], seconds: float, repeats: int, peer: PgxPeer | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Engine rows, and pgx rows measured in turns with ours at the same N (one of each per repeat)."""
    rows = []
    pgx_rows = []
    for n in sizes:
        calls = max(1, 4096 // n)
        plain, with_obs = engine_chunk(n, False, calls), engine_chunk(n, True, calls)
        plain()
        with_obs()
        with_pgx = peer is not None and n in peer.sizes
        rates: dict[str, list[tuple[float, float]]] = {"state_mask": [], "with_obs": [], "pgx": []}
        for _ in range(repeats):
            rates["state_mask"].append(one_rate(plain, seconds))
            rates["with_obs"].append(one_rate(with_obs, seconds))
            if with_pgx:
                rates["pgx"].append(peer.rate(n, seconds))  # type: ignore[union-attr]
        row: dict[str, Any] = {"n": n, "peak_bytes": engine_peak_memory(n)}
        for key in ("state_mask", "with_obs"):
            row[key] = summarize(rates[key])
        rows.append(row)
        if with_pgx:
            pgx_rows.append({"n": n, **summarize(rates["pgx"])})
    pgx_info = peer.info if peer is not None else {}
    return rows, {**pgx_info, "results": pgx_rows}


# -------------------------------------------------------------- 3. vector envs
def bench_vector(n: int, seconds: float, repeats: int) -> dict[str, Any]:
    from shelfie_env.batched import random_legal_actions, seed_streams
    from shelfie_env.envs.sb3_vec import ShelfieVecEnv
    from shelfie_env.envs.vector import SoloVectorEnv, VersusVectorEnv

    streams = seed_streams(1, n)
    actions = np.empty(n, dtype=np.int64)
    out: dict[str, Any] = {"n": n}
    envs = (
        ("gym_solo", SoloVectorEnv(n, seed=0)),
        ("gym_versus", VersusVectorEnv(n, seed=0)),
        ("gym_versus_greedy", VersusVectorEnv(n, opponents="greedy", seed=0)),
    )
    for name, env in envs:
        env.reset(seed=0)

        def run(env: Any = env) -> int:
            for _ in range(16):
                random_legal_actions(env.action_masks(), streams, out=actions)
                env.step(actions)
            return 16 * n

        out[name] = timed_rate(run, seconds, repeats)
    for name, players in (("sb3_solo", 1), ("sb3_versus", 2)):
        venv = ShelfieVecEnv(n, num_players=players, seed=0)
        venv.reset()

        def run_sb3(venv: Any = venv) -> int:
            from sb3_contrib.common.maskable.utils import get_action_masks

            for _ in range(16):
                random_legal_actions(get_action_masks(venv), streams, out=actions)
                venv.step(actions)
            return 16 * n

        out[name] = timed_rate(run_sb3, seconds, repeats)
    return out


# ------------------------------------------------------------ 4. MaskablePPO fps
# MaskablePPO settings measured: SB3's defaults (minibatches of 64, 10 epochs) and the
# defaults of `shelfie train --algo maskable_ppo` (TrainConfig in shelfie_env/train/maskable_ppo/config.py:
# minibatches of 1024, 4 epochs, 256x256).
PPO_CONFIGS: dict[str, dict[str, Any]] = {
    "defaults": {"batch_size": 64},
    "recipe": {"batch_size": 1024, "n_epochs": 4, "policy_kwargs": {"net_arch": [256, 256]}},
}


def ppo_fps(
    kind: str, timesteps: int, rollout: int, config: str = "defaults", opponents: str = "random"
) -> tuple[float, float]:
    """(rollout fps, overall fps) of a short MaskablePPO run.

    Rollout fps is what SB3 logs as ``time/fps`` after the first rollout:
    samples collected per second of ``collect_rollouts`` (env steps, masks and
    policy forward passes). Overall fps also counts the gradient updates, which
    cost the same per sample whatever the env.
    """
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    import shelfie_env  # noqa: F401  (registers the gym ids)
    from shelfie_env.envs.sb3_vec import ShelfieVecEnv

    class RolloutClock(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.seconds = 0.0
            self._t = 0.0

        def _on_rollout_start(self) -> None:
            self._t = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.seconds += time.perf_counter() - self._t

        def _on_step(self) -> bool:
            return True

    torch.set_num_threads(1)
    if kind == "adapter":
        env: Any = ShelfieVecEnv(64, num_players=2, opponents=opponents, seed=0)
    else:
        env = DummyVecEnv([lambda: gym.make("shelfie/Versus-v0", opponents=opponents) for _ in range(8)])
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=rollout // env.num_envs, seed=0, device="cpu", **PPO_CONFIGS[config]
    )
    clock = RolloutClock()
    t0 = time.perf_counter()
    model.learn(timesteps, callback=clock)
    total = time.perf_counter() - t0
    return model.num_timesteps / clock.seconds, model.num_timesteps / total


def bench_ppo(
    timesteps: int, rollout: int, repeats: int, config: str = "defaults", opponents: str = "random"
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "timesteps": timesteps,
        "rollout": rollout,
        "config": PPO_CONFIGS[config],
        "opponents": opponents,
    }
    for kind in ("adapter", "dummy8"):
        runs = [ppo_fps(kind, timesteps, rollout, config, opponents) for _ in range(repeats)]
        out[kind] = {
            "rollout_fps": statistics.median(r[0] for r in runs),
            "overall_fps": statistics.median(r[1] for r in runs),
            "repeats": runs,
        }
    out["rollout_ratio"] = out["adapter"]["rollout_fps"] / out["dummy8"]["rollout_fps"]
    out["overall_ratio"] = out["adapter"]["overall_fps"] / out["dummy8"]["overall_fps"]
    # The gradient updates cost the same per sample on both sides: their rate
    # (samples per second of update time) bounds any env's whole-loop fps, so
    # even an env that took no time at all would reach only `overall_ratio_bound`.
    update_s = [
        1 / r[1] - 1 / r[0] for runs in (out["adapter"]["repeats"], out["dummy8"]["repeats"]) for r in runs
    ]
    update_rate = 1 / statistics.median(update_s)
    out["update_samples_per_s"] = update_rate
    out["overall_ratio_bound"] = update_rate / out["dummy8"]["overall_fps"]
    return out


# ------------------------------------------------------------------- 5. pgx
class PgxPeer:
    """pgx's ``_bench_pgx.py`` running in its own Python, answering timed runs on request."""

    def __init__(self, python: str, sizes: list[int]) -> None:
        self.sizes = sizes
        self._err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [python, str(ROOT / "scripts" / "_bench_pgx.py"), *map(str, sizes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
        )
        self.info: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self._err.seek(0)
            tail = self._err.read().strip().splitlines()[-1:]
            raise RuntimeError(f"the pgx process stopped: {tail}")
        return json.loads(line)

    def rate(self, n: int, seconds: float) -> tuple[float, float]:
        """(steps per wall second, steps per CPU second of the pgx process) at batch size ``n``."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{n} {seconds}\n")
        self.proc.stdin.flush()
        out = self._read()
        return float(out["steps_per_s"]), float(out["steps_per_cpu_s"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self._err.close()


def start_pgx(python: str, sizes: list[int]) -> tuple[PgxPeer | None, str | None]:
    """The pgx peer, or None and the reason it cannot run."""
    if not Path(python).exists():
        return None, f"no pgx Python at {python} (pip install pgx jax into a venv, pass --pgx-python)"
    try:
        return PgxPeer(python, sizes), None
    except (OSError, RuntimeError, ValueError) as exc:
        return None, f"pgx could not start: {exc}"


# ------------------------------------------------------------------- report
def machine() -> dict[str, Any]:
    import numba

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "loadavg_at_start": os.getloadavg(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return info


def fmt(x: float) -> str:
    return f"{x:,.0f}"


def table(res: dict[str, Any]) -> str:
    lines = ["| what | N | steps/s | steps/CPU-s | note |", "|---|---:|---:|---:|---|"]

    def add(what: str, n: Any, m: dict[str, Any], note: str = "") -> None:
        lines.append(f"| {what} | {n} | {fmt(m['steps_per_s'])} | {fmt(m['steps_per_cpu_s'])} | {note} |")

    aec = res.get("aec")
    if aec:
        add("PettingZoo `connect_four_v3.env()` (AEC)", 1, aec["connect_four_v3"])
        add("`shelfie_v0.env()` (AEC)", 1, aec["shelfie_v0"], f"{aec['ratio']:.2f}x connect_four")
    pgx = {r["n"]: r for r in res.get("pgx", {}).get("results", [])}
    for row in res.get("engine", []):
        n = row["n"]
        peak = row["peak_bytes"]
        note = f"peak {peak / 2**20:.1f} MiB" if peak >= 2**20 else f"peak {peak / 2**10:.0f} KiB"
        if n in pgx:
            wall = row["state_mask"]["steps_per_s"] / pgx[n]["steps_per_s"]
            cpu = row["state_mask"]["steps_per_cpu_s"] / pgx[n]["steps_per_cpu_s"]
            note += f"; {wall:.2f}x pgx ({cpu:.2f}x per CPU-s)"
        add("batched engine (state + masks)", n, row["state_mask"], note)
        add("batched engine + observations", n, row["with_obs"])
    for n, r in sorted(pgx.items()):
        add(f"pgx `connect_four` jit+vmap ({res['pgx'].get('pgx', '?')})", n, r, "in turns with ours")
    if "skipped" in res.get("pgx", {}):
        lines.append(f"| pgx `connect_four` | | skipped | | {res['pgx']['skipped']} |")
    vec = res.get("vector")
    if vec:
        for key, label in (
            ("gym_solo", "Gymnasium `SoloVectorEnv`"),
            ("gym_versus", "Gymnasium `VersusVectorEnv` (vs random)"),
            ("gym_versus_greedy", "Gymnasium `VersusVectorEnv` (vs compiled greedy)"),
            ("sb3_solo", "SB3 `ShelfieVecEnv` solo"),
            ("sb3_versus", "SB3 `ShelfieVecEnv` 2p (vs random)"),
        ):
            add(label, vec["n"], vec[key], "learner steps")
    for key, label in (
        ("ppo", "SB3 defaults"),
        ("ppo_recipe", "training recipe"),
        ("ppo_recipe_greedy", "training recipe"),
    ):
        ppo = res.get(key)
        if not ppo:
            continue
        a, d = ppo["adapter"], ppo["dummy8"]
        lines.append(
            f"| MaskablePPO ({label}) via SB3 adapter (2p vs {ppo['opponents']}) | 64 | "
            f"{fmt(a['rollout_fps'])} | | "
            f"rollout fps, {ppo['rollout_ratio']:.2f}x DummyVecEnv; with updates {fmt(a['overall_fps'])} "
            f"({ppo['overall_ratio']:.2f}x) |"
        )
        lines.append(
            f"| MaskablePPO ({label}) via `DummyVecEnv` of 8 `shelfie/Versus-v0` "
            f"(vs {ppo['opponents']}) | 8 | "
            f"{fmt(d['rollout_fps'])} | | rollout fps; with updates {fmt(d['overall_fps'])} |"
        )
        lines.append(
            f"| MaskablePPO ({label}) gradient updates alone | | "
            f"{fmt(ppo['update_samples_per_s'])} | | samples/s of update time: caps the whole loop at "
            f"{ppo['overall_ratio_bound']:.2f}x the DummyVecEnv's fps, whatever the env |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", default=str(ROOT / "artifacts" / "bench.json"), help="where to save the results")
    p.add_argument("--pgx-python", default=DEFAULT_PGX, help="a Python with pgx and jax installed")
    p.add_argument("--seconds", type=float, default=1.0, help="length of one timed run")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per figure (the median is reported)")
    p.add_argument(
        "--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096], help="batch sizes of the engine"
    )
    p.add_argument("--ppo-timesteps", type=int, default=4096, help="MaskablePPO samples per fps run")
    p.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["aec", "engine", "vector", "ppo", "ppo_recipe", "ppo_recipe_greedy", "pgx"],
    )
    args = p.parse_args(argv)
    if args.repeats < 1 or args.seconds <= 0:
        p.error("--repeats must be >= 1 and --seconds > 0")
    res: dict[str, Any] = {"machine": machine(), "args": vars(args)}
    pgx_sizes = [n for n in (64, 1024) if n in args.sizes]
    if "pgx" in args.skip or "engine" in args.skip or not pgx_sizes:
        peer, why = None, "skipped (--skip, or no N of 64/1024 in --sizes)"
    else:
        peer, why = start_pgx(args.pgx_python, pgx_sizes)
    if why:
        res["pgx"] = {"skipped": why}
    steps = [
        ("aec", lambda: bench_aec(args.seconds, args.repeats)),
        ("engine", lambda: bench_engine(args.sizes, args.seconds, args.repeats, peer)),
        ("vector", lambda: bench_vector(64, args.seconds, args.repeats)),
        ("ppo", lambda: bench_ppo(args.ppo_timesteps, 2048, args.repeats)),
        ("ppo_recipe", lambda: bench_ppo(4 * args.ppo_timesteps, 2048, args.repeats, "recipe")),
        (
            "ppo_recipe_greedy",
            lambda: bench_ppo(4 * args.ppo_timesteps, 2048, args.repeats, "recipe", "greedy"),
        ),
    ]
    try:
        for name, fn in steps:
            if name in args.skip:
                continue
            t0 = time.perf_counter()
            if name == "engine":
                res["engine"], pgx_res = fn()
                if peer is not None:
                    res["pgx"] = pgx_res
            else:
                res[name] = fn()
            print(f"[{name}] done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    finally:
        if peer is not None:
            peer.close()
    if isinstance(res.get("pgx"), dict) and "skipped" in res["pgx"]:
        print(f"pgx skipped: {res['pgx']['skipped']}")
    m = res["machine"]
    print(
        f"machine: {m.get('cpu_model', m['processor'])}, {m['cpus']} CPUs, "
        f"load average at start {m['loadavg_at_start']}"
    )
    print(table(res))
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=2, default=str))
    print(f"saved {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
