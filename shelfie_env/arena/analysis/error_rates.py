"""Error rates: a bot's mean value lost per decision against the rollout-best action.

On every labelled position (:mod:`.positions`) the bot chooses an action; its **loss** is the
rollout value of the best action minus that of the chosen one (rank-reward units for the player
on turn: at two players 0.01 is half a point of score rate in one decision). Solo positions are
labelled exactly from the solo table, so there a loss is expected final points given away, with
no label noise. The **error rate**
is the mean loss over the positions, with a 95 % interval over positions, by phase, by table size,
and the shares of large errors (losses above :data:`LARGE` and above :data:`HUGE`).

Each action's label is an unbiased rollout estimate, so the difference between two bots' error
rates is unbiased. The best action's value is the largest of noisy estimates and so sits above
the truth: every bot's error rate includes the same offset (docs/errors.md says how large).

``shelfie errors BOT [--players N] [--part test|selection] [--json FILE]`` prints them.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.agent_arg import load_agent
from shelfie_env.arena.analysis.positions import load_positions
from shelfie_env.argtypes import output_file
from shelfie_env.bots import Bot, act_on_game
from shelfie_env.bots.rollout.rollouts import one_blas_thread
from shelfie_env.game.engine import Game

LARGE = 0.1
HUGE = 0.25
"""The two thresholds of the large-error shares at 2-4 players: losses above 0.1 and above 0.25 (a
blunder), in rank reward (at two players 0.1 is 5 points of score rate)."""
SOLO_LARGE = 0.5
SOLO_HUGE = 2.0
"""The same at one player, where a loss is expected final points: above 0.5 and above 2 points."""


def thresholds(players: int | None) -> tuple[float, float]:
    """The large and huge loss thresholds at ``players`` (points at one player, rank reward else)."""
    return (SOLO_LARGE, SOLO_HUGE) if players == 1 else (LARGE, HUGE)


def _summary(losses: np.ndarray, large: float = LARGE, huge: float = HUGE) -> dict[str, Any]:
    n = len(losses)
    sd = float(losses.std(ddof=1)) if n > 1 else float("nan")
    mean = float(losses.mean()) if n else float("nan")
    return {
        "positions": n,
        "error_rate": mean,
        "ci95": [mean - 1.96 * sd / np.sqrt(n), mean + 1.96 * sd / np.sqrt(n)] if n > 1 else [mean, mean],
        "large_share": float((losses > large).mean()) if n else float("nan"),
        "huge_share": float((losses > huge).mean()) if n else float("nan"),
    }


def error_rates(
    bot: Bot | str,
    players: int | None = 2,
    part: str = "test",
    positions: str | Path | Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``bot``'s error rate on the labelled positions of ``part`` at ``players`` players (``None``: all).

    ``bot`` is a bot spec (``"td:depth=2"``) or an object with ``act(state)``; ``positions`` a
    positions file or records (default: the shipped set). Returns a JSON-ready dict with at least
    ``positions``, ``error_rate`` and ``ci95``, and ``by_phase``, ``by_players``, ``large_share``,
    ``best_share`` (decisions that are the label's best), ``ms_per_decision`` and ``losses`` (each
    position's loss by id: two bots' results give their paired difference).
    """
    if part not in ("test", "selection"):
        raise ValueError(f"part must be 'test' or 'selection', got {part!r}")
    if isinstance(positions, (str, Path)) or positions is None:
        records = load_positions(positions, players=players, part=part)
        source = str(positions) if positions is not None else "shipped"
    else:
        records = [r for r in positions if (players is None or r["players"] == players) and r["part"] == part]
        source = "records"
    if not records:
        raise ValueError(f"no labelled {part} positions at {players} players in {source}")
    here = sorted({r["players"] for r in records})
    if 1 in here and len(here) > 1:
        raise ValueError("solo losses are points and the others rank reward: give one table size")
    name = bot if isinstance(bot, str) else getattr(bot, "name", type(bot).__name__)
    bots = _bots(bot, here)
    losses, best, phases, sizes, clock = [], [], [], [], []
    for rec in records:
        lab = rec["label"]
        game = Game.from_dict(rec["state"])
        t0 = time.perf_counter()
        action = act_on_game(bots[rec["players"]](rec["id"]), game)
        clock.append(time.perf_counter() - t0)
        if action not in lab["actions"]:
            raise ValueError(f"{name} played {action} in position {rec['id']}, not a legal action there")
        v = np.array(lab["value"])
        i = lab["actions"].index(action)
        losses.append(float(v.max() - v[i]))
        if lab.get("policy") == "exact":  # exact values: a tie with the best is a best action
            best.append(bool(v[i] >= v.max() - 1e-9))
        else:
            best.append(i == int(np.argmax(v)))
        phases.append(rec["phase"])
        sizes.append(rec["players"])
    loss = np.array(losses)
    large, huge = thresholds(sizes[0])
    out: dict[str, Any] = {"bot": name, "players": players, "part": part, "positions_file": source}
    out.update(_summary(loss, large, huge))
    out["units"] = "expected final points" if sizes[0] == 1 else "rank reward"
    out["exact"] = all(rec["label"].get("policy") == "exact" for rec in records)
    out["large_threshold"] = large
    out["huge_threshold"] = huge
    out["best_share"] = float(np.mean(best))
    out["ms_per_decision"] = 1000 * float(np.mean(clock))
    out["ms_median"] = 1000 * float(np.median(clock))
    out["by_phase"] = {
        ph: _summary(loss[[p == ph for p in phases]], large, huge)
        for ph in ("reroll", "circle", "cross")
        if ph in phases
    }
    out["by_players"] = {
        str(n): _summary(loss[[s == n for s in sizes]], large, huge) for n in sorted(set(sizes))
    }
    out["losses"] = {rec["id"]: round(x, 5) for rec, x in zip(records, losses)}
    return out


def _bots(bot: Bot | str, sizes: list[int]) -> dict[int, Callable[[str], Bot]]:
    """A maker of a fresh bot per table size, called with a position's id (a spec is checked for
    each size): every position is asked of a fresh bot, since bots that follow a game keep state
    from turn to turn. A spec whose bot takes a ``seed`` and names none (``random``) gets one from
    the position's id, so its error rate reproduces and its positions draw independently."""
    if not isinstance(bot, str):
        return {n: (lambda _id: bot) for n in sizes}  # type: ignore[misc]
    import inspect

    from shelfie_env.bots import check_table, factory, make
    from shelfie_env.bots.spec import parse_spec

    name, options = parse_spec(bot)
    params = inspect.signature(factory(name)).parameters
    seeded = "seed" in params and "seed" not in options
    out: dict[int, Callable[[str], Bot]] = {}
    for n in sizes:
        check_table(name, n)
        kwargs = {**options, "num_players": n} if "num_players" in params else dict(options)
        if seeded:
            out[n] = lambda pid, kwargs=kwargs: make(name, **kwargs, seed=position_seed(pid))
        else:
            out[n] = _fresh(make(name, **kwargs), lambda kwargs=kwargs: make(name, **kwargs))
    return out


def position_seed(position_id: str) -> int:
    """A seed of its own for every position id (stable across runs and machines)."""
    return zlib.crc32(position_id.encode("utf-8"))


def _fresh(prototype: Bot, build: Callable[[], Bot]) -> Callable[[str], Bot]:
    """A maker of fresh copies of ``prototype`` (a deep copy; bots that cannot be copied are built anew)."""
    try:
        copy.deepcopy(prototype)
    except Exception:  # a bot holding handles that do not copy
        return lambda _id: build()
    return lambda _id: copy.deepcopy(prototype)


def format_report(r: dict[str, Any]) -> str:
    """A few lines of text of an :func:`error_rates` result."""
    lo, hi = r["ci95"]
    solo = r.get("units") == "expected final points"
    unit = " points" if solo else ""
    labels = "exact labels" if r.get("exact") else "rollout labels"
    table = "solo" if r["players"] == 1 else f"{r['players'] or 'all'} players"
    lines = [
        f"{r['bot']}: error rate {r['error_rate']:.4f}{unit} [{lo:.4f}, {hi:.4f}] per decision over "
        f"{r['positions']} {r['part']} positions ({table}, {labels}); "
        f"losses > {r['large_threshold']} {100 * r['large_share']:.1f} % and > {r['huge_threshold']} "
        f"{100 * r['huge_share']:.1f} % of decisions, the label's best {100 * r['best_share']:.1f} %, "
        f"{r['ms_median']:.1f} ms a decision (median)"
    ]
    for key in ("by_phase", "by_players"):
        for k, s in r[key].items():
            lo, hi = s["ci95"]
            lines.append(f"  {k:>7}: {s['error_rate']:.4f} [{lo:.4f}, {hi:.4f}] ({s['positions']} positions)")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bot", metavar="BOT", help="a bot spec (td, planner, td:depth=2), module:attr or a model file")
    parser.add_argument(
        "--players", type=int, default=2, choices=(1, 2, 3, 4), help="table size (default 2; 1: exact solo labels)"
    )
    parser.add_argument(
        "--part", default="test", choices=("test", "selection"), help="positions part (default test)"
    )
    parser.add_argument("--positions", default=None, help="a positions file (default: the shipped set)")
    parser.add_argument(
        "--json", type=output_file(), default=None, metavar="FILE", help="also write the result as JSON"
    )


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args._parser
    try:
        with one_blas_thread():
            result = error_rates(load_agent(args.bot, args.players), args.players, args.part, args.positions)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    if args.json:  # written first: a reader that closes the printed lines early does not lose it
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(format_report(result))
    return 0


__all__ = ["HUGE", "LARGE", "error_rates", "format_report"]
