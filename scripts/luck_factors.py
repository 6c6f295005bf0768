"""How many times fewer games duplicate matches and luck correction need: read arena results, print the factors.

Run ``shelfie arena A B --duplicate --luck --out FILE`` (every deal under every seating,
luck measured), then::

    .venv/bin/python scripts/luck_factors.py docs/results/eval_2p_td_planner.json [more.json ...]

For the first bot of each file (the row bot: ``A``, or the bot alone against a
``--field``) it prints, from the per-game ``raw`` and ``corrected`` rank rewards of
the file's ``games``:

* ``sd``: the standard deviation of one game's result, raw and corrected;
* the **games factor** of each method against plain games (raw results, each game
  counted alone): ``var(raw game) / (k · var(unit))``, where a unit is a game
  (k = 1) or, for duplicate, a deal's mean over its k seatings. A factor of 5
  means the method reaches the interval of 5·N plain games with N games; ``none``
  when either variance is zero (no ratio is defined);
* the 95 % interval half-width (in score-rate points) each method gives at the
  file's number of games.

Each figure comes with a bootstrap 95 % interval over deals (``--boot`` resamples).
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np


def _per_game(res: dict, bot: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bot's raw and corrected result in each of its games, and each game's deal."""
    raw, cor, deal = [], [], []
    for g in res["games"]:
        if bot not in g["seats"]:
            continue
        s = g["seats"].index(bot)
        raw.append(g["raw"][s])
        cor.append(g["corrected"][s])
        deal.append(g["deal"])
    return np.array(raw, float), np.array(cor, float), np.array(deal)


def factors(raw: np.ndarray, cor: np.ndarray, deal: np.ndarray) -> dict[str, float | None]:
    """The four methods' games factors against plain games (module doc); ``None`` where a variance is zero."""
    per_game = method_variances(raw, cor, deal)
    base = per_game["plain"]
    return {m: (base / v if v > 0 and base > 0 else None) for m, v in per_game.items()}


def _factor(f: float | None, ci: list[float] | None = None) -> str:
    """``5.07 [4.34, 5.98]``, or ``none`` (module doc)."""
    if f is None:
        return "none"
    return f"{f:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def method_variances(raw: np.ndarray, cor: np.ndarray, deal: np.ndarray) -> dict[str, float]:
    """Each method's variance per game played (for duplicate: a deal's variance times its k games)."""
    groups: dict[int, list[int]] = defaultdict(list)
    for i, d in enumerate(deal):
        groups[int(d)].append(i)
    k = len(next(iter(groups.values())))
    raw_d = np.array([raw[idx].mean() for idx in groups.values()])
    cor_d = np.array([cor[idx].mean() for idx in groups.values()])
    return {
        "plain": float(raw.var(ddof=1)),
        "luck": float(cor.var(ddof=1)),
        "duplicate": float(k * raw_d.var(ddof=1)),
        "duplicate + luck": float(k * cor_d.var(ddof=1)),
    }


def _bootstrap(raw: np.ndarray, cor: np.ndarray, deal: np.ndarray, n: int, seed: int = 0) -> dict[str, list[float]]:
    deals = np.unique(deal)
    index = {d: np.flatnonzero(deal == d) for d in deals}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = defaultdict(list)
    for _ in range(n):
        pick = rng.choice(deals, size=len(deals))
        idx = np.concatenate([index[d] for d in pick])
        # Relabel resampled deals so that a deal drawn twice counts as two deals.
        new_deal = np.repeat(np.arange(len(pick)), [len(index[d]) for d in pick])
        for key, value in factors(raw[idx], cor[idx], new_deal).items():
            if value is not None:
                draws[key].append(value)
    return {k: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] for k, v in draws.items() if v}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="arena --out JSON files of --duplicate --luck runs")
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples over deals (0: none)")
    parser.add_argument("--markdown", action="store_true", help="print one Markdown table for all files")
    args = parser.parse_args(argv)
    rows = []
    for path in args.files:
        res = json.loads(path.read_text())
        cfg = res["config"]
        if not cfg.get("duplicate") or not cfg.get("luck"):
            print(f"{path}: not a --duplicate --luck run, skipped")
            continue
        bot = cfg["bots"][0]
        opp = cfg["field"] or cfg["bots"][1]
        raw, cor, deal = _per_game(res, bot)
        f = factors(raw, cor, deal)
        ci = _bootstrap(raw, cor, deal, args.boot) if args.boot else {}
        n = len(raw)
        half = {m: 50 * 1.96 * math.sqrt(v / n) for m, v in method_variances(raw, cor, deal).items()}
        rows.append((cfg["players"], bot, opp, n, raw.std(ddof=1), cor.std(ddof=1), f, ci, half, cfg["luck"]))
        if not args.markdown:
            print(f"{path.name}: {bot} against {opp}, {cfg['players']} players, {n} games on {cfg['deals']} deals, luck by {cfg['luck']}")
            print(f"  sd of one game: raw {raw.std(ddof=1):.3f}, corrected {cor.std(ddof=1):.3f}")
            for m in ("luck", "duplicate", "duplicate + luck"):
                print(f"  {m:<17} games factor {_factor(f[m], ci.get(m))}  ±{half[m]:.2f} points at {n} games (plain ±{half['plain']:.2f})")
    if args.markdown:
        print("| players | bot | against | games | games factor: luck | duplicate | duplicate + luck | ± points at these games: plain → duplicate + luck |")
        print("|---:|---|---|---:|---:|---:|---:|---:|")
        for players, bot, opp, n, _, _, f, ci, half, _ in rows:
            cells = [_factor(f[m], ci.get(m)) for m in ("luck", "duplicate", "duplicate + luck")]
            print(f"| {players} | `{bot}` | `{opp}` | {n:,} | " + " | ".join(cells) + f" | ±{half['plain']:.1f} → ±{half['duplicate + luck']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
