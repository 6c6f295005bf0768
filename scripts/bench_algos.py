"""``shelfie bench`` under its script name (the command older rows of docs/benchmark_results.json record).

.venv/bin/python scripts/bench_algos.py --steps 1M --seeds 0 1 2      # the same as: shelfie bench --steps 1M ...
"""

from __future__ import annotations

from shelfie_env.benchmark.cli import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    raise SystemExit(main(prog="scripts/bench_algos.py"))
