"""Aggregate benchmark results across seeds with rliable (docs/benchmark.md, "Report").

    .venv/bin/python scripts/bench_report.py artifacts/benchmark.json --plot artifacts/profiles.png

Groups the luck-aware rows of the results file by learner and budget (1M, 10M, ...),
prints the interquartile mean and the mean of the luck-corrected score rate against
``greedy`` with stratified-bootstrap 95 % intervals as a Markdown table, and writes
the performance profiles (``--plot``) and every number (``--json``). Rows of the
plain-arena protocol are left out of the aggregates.
"""

from __future__ import annotations

from shelfie_env.train.benchmark_report import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
