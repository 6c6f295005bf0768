"""The JAX twin against the engine at scale: divergences and compile time per table size.

Plays engine games with random legal actions (seeded) in ``--lanes`` lanes and replays them in the
twin under vmap/scan through ``step_decision`` / ``step_chance`` with the engine's dice, comparing
after every decision the legal mask, every state-dict field, every seat's observation vector, the
rewards and ``terminated`` (shelfie_env/jax_env/equivalence.py). Exits 1 on any divergence.

    .venv/bin/python scripts/jax_equivalence.py --decisions 1000000 --players 1 2 3 4
"""

from __future__ import annotations

import argparse
import sys

from shelfie_env.jax_env.equivalence import check


def build_parser() -> argparse.ArgumentParser:
    """The script's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000, help="decisions per table size")
    parser.add_argument("--players", type=int, nargs="+", default=[1, 2, 3, 4], choices=[1, 2, 3, 4])
    parser.add_argument("--lanes", type=int, default=256, help="games played side by side")
    parser.add_argument("--steps", type=int, default=256, help="decisions per lane per compiled call")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.lanes < 1 or args.steps < 1:
        parser.error("--decisions, --lanes and --steps must be positive")
    failed = False
    print("players  decisions  games  divergences  compile_s  twin_dec/s  engine_dec/s", flush=True)
    for n in args.players:
        r = check(n, args.decisions, lanes=args.lanes, steps=args.steps, seed=args.seed)
        print(
            f"{n:7d}  {r.decisions:9d}  {r.games:5d}  {r.divergences:11d}  {r.compile_s:9.1f}"
            f"  {r.decisions / r.twin_s:10.0f}  {r.decisions / r.engine_s:12.0f}",
            flush=True,
        )
        for line in r.examples:
            print("   ", line)
        failed |= r.divergences > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
