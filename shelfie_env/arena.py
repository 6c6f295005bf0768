"""Evaluation arena: ``shelfie eval`` / ``shelfie arena``.

Plays a set of bots against each other with fixed seeds and seat rotation,
in parallel over the CPU cores, and reports per pairing wins / ties / losses
with 95% Wilson intervals (overall and by the seat the bot played from) and
mean score ± sd, plus OpenSkill ratings
(Plackett-Luce, mu ± sigma) for the whole field. Results go to JSON and
Markdown; ``--plot RUN_DIR`` draws win rate vs training steps from a run's
``eval.jsonl``.

Protocol: for each group of ``players`` distinct bots (all pairs for two
players, every combination for more), game ``i`` (``i = 0..games-1``) is
dealt from dice seed ``seed + i`` and seats the group rotated by ``i``
places, so every bot sits in every seat equally often (exactly, when
``games`` is a multiple of ``players``) and the same dice are used for every
group. With ``players = 1`` every bot plays solo games on the same seeds.
Bots with a ``seed`` parameter (``random``) get ``seed + i``-derived seeds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bots import Bot, act_on_game, make
from .engine import Game


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion ``k / n``."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def play_game(bots: Sequence[Bot], seed: int, max_steps: int = 10_000) -> list[int]:
    """Play one game, ``bots[s]`` in seat ``s``, dice from ``seed``; returns the final scores."""
    game = Game.new(len(bots), rng=np.random.default_rng(seed))
    steps = 0
    while not game.over:
        game.step(act_on_game(bots[game.current], game))
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"game with seed {seed} did not end after {max_steps} steps")
    return game.scores()


CHUNK = 25  # games per task; fixed so results do not depend on the number of workers


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name"`` or ``"name:key=value,key=value"`` -> ``(name, kwargs)`` (values: int, float, bool, str)."""
    name, _, rest = spec.partition(":")
    if not name:
        raise ValueError(f"bot spec {spec!r} has no name")
    kwargs: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise ValueError(f"bot spec {spec!r}: expected key=value, got {item!r}")
        kwargs[key] = _parse_value(raw)
    return name, kwargs


def _parse_value(raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            pass
    return raw


def build_bot(spec: str) -> Bot:
    """Instantiate a bot from its spec."""
    name, kwargs = parse_spec(spec)
    return make(name, **kwargs)


def _reseed(bot: Bot, seed: Sequence[int]) -> None:
    """Give a bot with a numpy ``rng`` attribute a per-game seed (results stay reproducible)."""
    if isinstance(getattr(bot, "rng", None), np.random.Generator):
        bot.rng = np.random.default_rng(list(seed))  # type: ignore[attr-defined]


_BOT_CACHE: dict[str, Bot] = {}


def _cached_bot(spec: str) -> Bot:
    if spec not in _BOT_CACHE:
        _BOT_CACHE[spec] = build_bot(spec)
    return _BOT_CACHE[spec]


def _play_chunk(task: tuple[tuple[str, ...], tuple[int, ...], int, int, int]) -> list[dict[str, Any]]:
    """Play games ``start..stop-1`` of one group; seat ``s`` of game ``i`` is ``group[(s + i) % n]``."""
    specs, group, seed, start, stop = task
    n = len(group)
    out = []
    for i in range(start, stop):
        seats = [group[(s + i) % n] for s in range(n)]
        bots = [_cached_bot(specs[b]) for b in seats]
        for s, bot in enumerate(bots):
            _reseed(bot, (seed, i, s))
        out.append({"game": i, "seed": seed + i, "seats": seats, "scores": play_game(bots, seed + i)})
    return out


def run_arena(
    specs: Sequence[str],
    players: int = 2,
    games: int = 200,
    seed: int = 0,
    workers: int | None = None,
    ratings: bool = True,
    progress: bool = False,
) -> dict[str, Any]:
    """Play every group of ``players`` bots ``games`` times; returns the results dict (see module doc)."""
    specs = list(specs)
    if not specs:
        raise ValueError("no bots given")
    if len(set(specs)) != len(specs):
        raise ValueError(f"bot specs must be distinct, got {specs}")
    if not 1 <= players <= 4:
        raise ValueError(f"players must be 1..4, got {players}")
    if players > 1 and len(specs) < players:
        raise ValueError(f"{players}-player games need at least {players} bots, got {len(specs)}")
    if games <= 0:
        raise ValueError(f"games must be positive, got {games}")
    for spec in specs:  # fail early, in this process, on unknown names or bad kwargs
        name, _ = parse_spec(spec)
        from .bots import available

        if name not in available():
            raise ValueError(f"unknown bot {name!r} in {spec!r}; available: {', '.join(available())}")
    groups = (
        [(i,) for i in range(len(specs))]
        if players == 1
        else list(itertools.combinations(range(len(specs)), players))
    )
    tasks = [
        (tuple(specs), g, seed, a, min(a + CHUNK, games)) for g in groups for a in range(0, games, CHUNK)
    ]
    workers = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
    t0 = time.time()
    records: list[dict[str, Any]] = []
    if workers == 1:
        for k, task in enumerate(tasks):
            records.extend(_play_chunk(task))
            _progress(progress, k + 1, len(tasks), t0)
    else:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(workers) as pool:
            for k, chunk in enumerate(pool.imap(_play_chunk, tasks)):
                records.extend(chunk)
                _progress(progress, k + 1, len(tasks), t0)
    result = summarise(specs, players, records, ratings=ratings)
    result["config"] = {
        "bots": specs,
        "players": players,
        "games_per_group": games,
        "seed": seed,
        "seeds": f"{seed}..{seed + games - 1}",
        "workers": workers,
        "wall_time_s": round(time.time() - t0, 1),
    }
    return result


def _progress(on: bool, done: int, total: int, t0: float) -> None:
    if on:
        print(
            f"\r{done}/{total} chunks, {time.time() - t0:.0f}s",
            end="" if done < total else "\n",
            file=sys.stderr,
            flush=True,
        )


def _mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    if not xs:
        return (0.0, 0.0)
    return (statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)


def summarise(
    specs: Sequence[str], players: int, records: Iterable[dict[str, Any]], ratings: bool = True
) -> dict[str, Any]:
    """Per-bot and per-pairing statistics (and ratings) from game records."""
    records = sorted(records, key=lambda r: (r["seats"] if players == 1 else sorted(r["seats"]), r["game"]))
    nb = len(specs)
    scores: list[list[int]] = [[] for _ in range(nb)]
    seat_counts = [[0] * players for _ in range(nb)]
    firsts = [0] * nb
    pair: dict[tuple[int, int], dict[str, Any]] = {}
    for rec in records:
        seats, sc = rec["seats"], rec["scores"]
        top = max(sc)
        for s, b in enumerate(seats):
            scores[b].append(sc[s])
            seat_counts[b][s] += 1
            firsts[b] += sc[s] == top
        for s, t in itertools.combinations(range(len(seats)), 2):
            a, b, sa, sb = seats[s], seats[t], sc[s], sc[t]
            if a > b:
                a, b, sa, sb = b, a, sb, sa
            # W / T / L of bot a from each of its seats; the totals and seat counts follow from it.
            p = pair.setdefault(
                (a, b), {"a_scores": [], "b_scores": [], "by_seat": [[0, 0, 0] for _ in range(players)]}
            )
            p["a_scores"].append(sa)
            p["b_scores"].append(sb)
            p["by_seat"][s if seats[s] == a else t][0 if sa > sb else 1 if sa == sb else 2] += 1
    bots = []
    for b, spec in enumerate(specs):
        m, sd = _mean_sd(scores[b])
        bots.append(
            {
                "bot": spec,
                "games": len(scores[b]),
                "mean_score": m,
                "sd_score": sd,
                "first_place_rate": firsts[b] / len(scores[b]) if scores[b] else 0.0,
                "seat_counts": seat_counts[b],
            }
        )
    pairings = []
    for (a, b), p in sorted(pair.items()):
        wins, ties, losses = (sum(col) for col in zip(*p["by_seat"]))
        n = wins + ties + losses
        am, asd = _mean_sd(p["a_scores"])
        bm, bsd = _mean_sd(p["b_scores"])
        pairings.append(
            {
                "bot": specs[a],
                "opponent": specs[b],
                "games": n,
                "wins": wins,
                "ties": ties,
                "losses": losses,
                "win_rate": wins / n,
                "win_ci95": list(wilson(wins, n)),
                "tie_rate": ties / n,
                "loss_rate": losses / n,
                "loss_ci95": list(wilson(losses, n)),
                "score_rate": (wins + 0.5 * ties) / n,
                "mean_score": am,
                "sd_score": asd,
                "opp_mean_score": bm,
                "opp_sd_score": bsd,
                "bot_seat_counts": [sum(wtl) for wtl in p["by_seat"]],
                "by_seat": [_seat_summary(seat, *wtl) for seat, wtl in enumerate(p["by_seat"])],
            }
        )
    out: dict[str, Any] = {"bots": bots, "pairings": pairings}
    if ratings and players > 1:
        out["ratings"] = rate(specs, records)
    return out


def _seat_summary(seat: int, wins: int, ties: int, losses: int) -> dict[str, Any]:
    """The pairing's results for the games its ``bot`` played from ``seat`` (0 moves first)."""
    n = wins + ties + losses
    return {
        "seat": seat,
        "games": n,
        "wins": wins,
        "ties": ties,
        "losses": losses,
        "win_rate": wins / n if n else 0.0,
        "win_ci95": list(wilson(wins, n)) if n else [0.0, 1.0],
    }


def rate(specs: Sequence[str], records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenSkill (Plackett-Luce) ratings from the games in order; higher score ranks higher."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    r = [model.rating(name=s) for s in specs]
    for rec in records:
        seats = rec["seats"]
        new = model.rate([[r[b]] for b in seats], scores=list(rec["scores"]))
        for b, team in zip(seats, new):
            r[b] = team[0]
    table = [{"bot": s, "mu": x.mu, "sigma": x.sigma, "ordinal": x.ordinal()} for s, x in zip(specs, r)]
    return sorted(table, key=lambda t: -t["ordinal"])


def to_markdown(result: dict[str, Any]) -> str:
    """Human-readable tables of a :func:`run_arena` result."""
    cfg = result.get("config", {})
    lines = [f"# Arena: {cfg.get('players', '?')}-player games", ""]
    if cfg:
        lines += [
            (
                f"Bots: {', '.join(f'`{b}`' for b in cfg['bots'])}; "
                f"{cfg['games_per_group']} games per group, "
                f"dice seeds {cfg['seeds']}, seats rotated; "
                f"{cfg['wall_time_s']} s on {cfg['workers']} worker(s)."
            ),
            "",
        ]
    solo = cfg.get("players") == 1
    lines += ["| bot | games | mean score ± sd | first place |", "|---|---:|---:|---:|"]
    for b in result["bots"]:
        first = "—" if solo else f"{100 * b['first_place_rate']:.1f}%"
        lines.append(
            f"| `{b['bot']}` | {b['games']} | {b['mean_score']:.1f} ± {b['sd_score']:.1f} | {first} |"
        )
    if result["pairings"]:
        lines += [
            "",
            "| bot | opponent | games | W / T / L | win rate (95% CI) | by bot's seat (1st / 2nd …) "
            "| score ± sd | opp. score ± sd |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for p in result["pairings"]:
            lo, hi = p["win_ci95"]
            by_seat = " / ".join(
                f"{100 * x['win_rate']:.1f}%" if x["games"] else "—" for x in p.get("by_seat", [])
            )
            lines.append(
                f"| `{p['bot']}` | `{p['opponent']}` | {p['games']} | "
                f"{p['wins']} / {p['ties']} / {p['losses']} | "
                f"{100 * p['win_rate']:.1f}% ({100 * lo:.1f}–{100 * hi:.1f}) | {by_seat or '—'} | "
                f"{p['mean_score']:.1f} ± {p['sd_score']:.1f} | "
                f"{p['opp_mean_score']:.1f} ± {p['opp_sd_score']:.1f} |"
            )
    if result.get("ratings"):
        lines += [
            "",
            "| rank | bot | OpenSkill mu ± sigma | ordinal (mu − 3 sigma) |",
            "|---:|---|---:|---:|",
        ]
        for k, r in enumerate(result["ratings"], 1):
            lines.append(f"| {k} | `{r['bot']}` | {r['mu']:.2f} ± {r['sigma']:.2f} | {r['ordinal']:.2f} |")
    return "\n".join(lines) + "\n"


def plot_run(run: str | Path, out: str | Path | None = None) -> Path:
    """Plot win rate (or solo mean score) vs training steps from a run's ``eval.jsonl``;
    returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(run)
    log = path / "eval.jsonl" if path.is_dir() else path
    if not log.is_file():
        raise FileNotFoundError(f"no evaluation log {log}")
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    if not recs:
        raise ValueError(f"{log} holds no evaluations yet")
    steps = [r["steps"] for r in recs]
    fig, ax = plt.subplots(figsize=(7, 4))
    if "solo" in recs[0]:
        ax.plot(steps, [r["solo"]["mean_score"] for r in recs], marker=".", label="solo mean score")
        ax.set_ylabel("mean score")
    else:
        for opp in ("greedy", "random"):
            if opp in recs[0]:
                ax.plot(steps, [r[opp]["win_rate"] for r in recs], marker=".", label=f"vs {opp}")
                ax.fill_between(
                    steps, [r[opp]["ci95"][0] for r in recs], [r[opp]["ci95"][1] for r in recs], alpha=0.2
                )
        ax.set_ylabel("win rate (95% CI)")
        ax.set_ylim(0, 1)
    ax.set_xlabel("learner steps")
    ax.set_title(f"Evaluation of {log.parent.name}")
    ax.grid(alpha=0.3)
    ax.legend()
    png = Path(out) if out else log.with_name("win_rate.png")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return png


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``shelfie eval`` / ``shelfie arena``."""
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="bot specs: a name (random, greedy, planner, ppo) or name:key=value,... "
        "e.g. ppo:path=models/ppo_2p.zip,deterministic=false",
    )
    parser.add_argument("--players", type=int, default=2, help="players per game, 1-4 (default 2)")
    parser.add_argument("--games", type=int, default=200, help="games per group of bots (default 200)")
    parser.add_argument(
        "--seed", type=int, default=0, help="dice seed of game 0; game i uses seed+i (default 0)"
    )
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--out", type=Path, default=None, help="write OUT.json and OUT.md")
    parser.add_argument("--no-ratings", action="store_true", help="skip the OpenSkill ratings")
    parser.add_argument("--progress", action="store_true", help="print progress to stderr")
    parser.add_argument(
        "--record-card",
        type=Path,
        default=None,
        metavar="MODEL",
        help="also store the results and the command in MODEL's card (MODEL.json)",
    )
    parser.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="RUN",
        help="plot win rate vs steps from RUN/eval.jsonl (a run dir or the file)",
    )
    parser.add_argument(
        "--plot-out", type=Path, default=None, help="PNG path for --plot (default RUN/win_rate.png)"
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``shelfie eval`` / ``shelfie arena``."""
    try:
        if args.plot is not None:
            print(f"wrote {plot_run(args.plot, args.plot_out)}")
            if not args.bots:
                return 0
        if not args.bots:
            print("shelfie arena: give at least one bot (or --plot RUN)", file=sys.stderr)
            return 2
        result = run_arena(
            args.bots,
            players=args.players,
            games=args.games,
            seed=args.seed,
            workers=args.workers,
            ratings=not args.no_ratings,
            progress=args.progress,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"shelfie arena: {exc}", file=sys.stderr)
        return 2
    md = to_markdown(result)
    print(md)
    if args.out is not None:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
        out.with_suffix(".md").write_text(md)
        print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
    if args.record_card is not None:
        print(f"recorded in {record_in_card(args.record_card, result, command_line(args))}")
    return 0


def command_line(args: argparse.Namespace) -> str:
    """The ``shelfie arena`` command that reproduces ``args`` (without output flags)."""
    parts = [
        "shelfie arena",
        *args.bots,
        f"--players {args.players}",
        f"--games {args.games}",
        f"--seed {args.seed}",
    ]
    return " ".join(parts)


def record_in_card(model: str | Path, result: dict[str, Any], command: str) -> Path:
    """Store ``result`` (and the command that produced it) under ``evaluation`` in a model card."""
    from .checkpoint import card_path, load_card, write_card

    card = load_card(model)
    cfg = result["config"]
    key = (
        f"arena_{cfg['players']}p_"
        + "_vs_".join(b.split(":")[0] for b in cfg["bots"])
        + f"_{cfg['games_per_group']}g"
        + (f"_seed{cfg['seed']}" if cfg.get("seed") else "")  # runs on other dice keep their own entry
    )
    card.setdefault("evaluation", {})[key] = {
        "command": command,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **{k: result[k] for k in ("bots", "pairings", "ratings") if k in result},
        "config": cfg,
    }
    write_card(model, card)
    return card_path(model)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shelfie_env.arena", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
