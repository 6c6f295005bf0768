"""Run the benchmark suite's baseline cells that have no row yet, one ``shelfie bench`` command each.

Every (task, learner, seed) of ``shelfie_env.benchmark.suite.baseline_cells()`` at 1M decisions; a cell is
done when ``--out`` has its row (same task, learner, variant, seed and budget). Rows merge into ``--out`` as
each command finishes, so a stopped runner resumes where it was by running it again.

    .venv/bin/python scripts/bench_suite.py --list                       # what is still to run
    .venv/bin/python scripts/bench_suite.py --tasks versus-2p field-3p  # run those cells, seed-major
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from shelfie_env.benchmark import suite
from shelfie_env.benchmark.cli import build_parser, settings_of, tag_of

DEFAULT_OUT = Path("docs/benchmark_results.json")


def cell_key(learner: str, task: str, seed: int) -> tuple[str, str, str, int, int]:
    """The (task, learner, variant, seed, budget) the cell's row will have."""
    words = suite.baseline_command(learner, task, seed, "unused.json")
    args = build_parser().parse_args(words)
    from shelfie_env.benchmark.learners.ppo_flat import parse_flat

    algo = args.algos[0]
    flat = parse_flat(args.flat) if args.flat else {}
    return task, algo, tag_of(algo, settings_of(algo, args), flat), seed, args.steps


def done_keys(out: Path) -> set[tuple[str, str, str, int, int]]:
    from shelfie_env.arena.results_file import load_results

    if not out.is_file():
        return set()
    rows = load_results(out)["rows"]
    return {
        (r.get("task", "versus-2p"), r["learner"], r.get("variant", ""), r["seed"], r["steps"])
        for r in rows
        if r.get("seed") is not None and r.get("mode") != "stopped" and ("rating" in r or "solo" in r)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"results file (default {DEFAULT_OUT})")
    parser.add_argument("--tasks", nargs="+", choices=list(suite.TASKS), default=list(suite.TASKS))
    parser.add_argument("--learners", nargs="+", choices=list(suite.BASELINES), default=list(suite.BASELINES))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(suite.BASELINE_SEEDS))
    parser.add_argument("--list", action="store_true", help="print the cells still to run and stop")
    args = parser.parse_args()
    done = done_keys(args.out)
    todo = [
        (t, learner, seed)
        for t, learner, seed in suite.baseline_cells()
        if t in args.tasks and learner in args.learners and seed in args.seeds
        and cell_key(learner, t, seed) not in done
    ]
    for t, learner, seed in todo:
        words = suite.baseline_command(learner, t, seed, str(args.out))
        print(f"{t} {learner} seed {seed}: shelfie bench {' '.join(words)}", flush=True)
        if args.list:
            continue
        code = subprocess.call([str(Path(sys.executable).with_name("shelfie")), "bench", *words])
        if code:
            print(f"{t} {learner} seed {seed}: exit {code}", file=sys.stderr, flush=True)
            return code
    print(f"{len(todo)} cell(s) {'to run' if args.list else 'run'}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
