"""``shelfie bench report`` under its script name (docs/benchmark.md, "Report").

.venv/bin/python scripts/bench_report.py docs/benchmark_results.json   # the same as: shelfie bench report ...
"""

from __future__ import annotations

from shelfie_env.arena.aggregate import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    raise SystemExit(main(prog="scripts/bench_report.py"))
