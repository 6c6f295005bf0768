"""The arena's games: bots played against each other under one protocol, and the summary of their results.

:func:`run_arena` plays a field of bots with fixed deals and seat rotation, in parallel over the
CPU cores, on common dice (:class:`~shelfie_env.game.dice.DiceTape`), optionally under every
seating of each deal (duplicate) and with every roll's luck measured (:mod:`.luck`);
:func:`summarise` reports per pairing wins / ties / losses with 95 % Wilson intervals (overall
and by seat), mean score ± sd, raw and luck-corrected results with their intervals
(:mod:`.results`) and OpenSkill ratings of the field (:mod:`.ratings`). ``shelfie arena``
(:mod:`.cli`) and :func:`~.evaluate.evaluate` call it; the benchmark's rows
(:mod:`.rows`) and ``shelfie errors`` use the same bots and deals.

Protocol: for each group of ``players`` distinct bots (all pairs for two
players, every combination for more), game ``i`` (``i = 0..games-1``) is
dealt from dice seed ``seed + i`` and seats the group rotated by ``i``
places, so every bot sits in every seat equally often (exactly, when
``games`` is a multiple of ``players``) and the same dice are used for every
group. With ``players = 1`` every bot plays solo games on the same seeds.
With a ``field`` bot, each listed bot instead sits alone against
``players - 1`` copies of the field (one group per listed bot), the way a
player's strength at a full table is measured. Per bot: mean score,
first-place rate (shared first places count) and mean rank (1 + the number of
seats that scored more), with 95% intervals, overall and by seat.
Bots with a ``seed`` parameter (``random``) get ``seed + i``-derived seeds.
"""

from __future__ import annotations

import itertools
import math
import os
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.deals import deal_start, deals_label
from shelfie_env.arena.luck import (
    ChanceEvent,
    LuckTracker,
    MixedValue,
    ValueFunction,
    corrected_results,
    first_seat_edge,
    own_luck,
)
from shelfie_env.arena.ratings import rate
from shelfie_env.arena.results import result_stats, wilson
from shelfie_env.arena.values import make_value
from shelfie_env.bots import Bot, act_on_game, available, check_table
from shelfie_env.bots.spec import build_bot, parse_spec
from shelfie_env.envs.common import final_rewards
from shelfie_env.game.dice import check_dice_mode, dice_source
from shelfie_env.game.engine import Game


def play_game(
    bots: Sequence[Bot],
    seed: int,
    max_steps: int = 10_000,
    times: list[list[float]] | None = None,
    dice: str = "tape",
    luck: ValueFunction | MixedValue | None = None,
    events: list[ChanceEvent] | None = None,
) -> list[int]:
    """Play one game, ``bots[s]`` in seat ``s``, dice ``dice`` (``tape`` or ``stream``) seeded ``seed``;
    returns the final scores.

    With ``times`` (one list per seat) the wall time of every decision, in seconds, is appended
    to its seat's list. With a ``luck`` value function every chance event is appended to ``events``
    (:mod:`shelfie_env.arena.luck`).
    """
    game = Game.new(len(bots), rng=dice_source(dice, seed))
    tracker = LuckTracker(luck, game) if luck is not None else None
    steps = 0
    clock = time.perf_counter
    while not game.over:
        seat = game.current
        t0 = clock()
        action = act_on_game(bots[seat], game)
        if times is not None:
            times[seat].append(clock() - t0)
        if tracker is not None:
            tracker.before(game, action)
        game.step(action)
        if tracker is not None:
            tracker.after(game)
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"game with seed {seed} did not end after {max_steps} steps")
    if tracker is not None and events is not None:
        events.extend(tracker.events)
    return game.scores()


CHUNK = 25  # games per task; fixed so results do not depend on the number of workers


def _reseed(bot: Bot, seed: Sequence[int]) -> None:
    """Give a bot with a numpy ``rng`` attribute a per-game seed (results stay reproducible)."""
    if isinstance(getattr(bot, "rng", None), np.random.Generator):
        bot.rng = np.random.default_rng(list(seed))  # type: ignore[attr-defined]


_BOT_CACHE: dict[str, Bot] = {}
_VALUE_CACHE: dict[tuple[str, int], ValueFunction | MixedValue] = {}


def _cached_bot(spec: str) -> Bot:
    if spec not in _BOT_CACHE:
        _BOT_CACHE[spec] = build_bot(spec)
    return _BOT_CACHE[spec]


def _cached_value(spec: str | ValueFunction | MixedValue, players: int) -> ValueFunction | MixedValue:
    if not isinstance(spec, str):
        return spec
    if (spec, players) not in _VALUE_CACHE:
        _VALUE_CACHE[spec, players] = make_value(spec, players)
    return _VALUE_CACHE[spec, players]


def seatings(players: int, duplicate: bool, permutations: bool = False) -> list[tuple[int, ...]]:
    """The seat assignments each deal is played under: ``seating[s]`` is the group member in seat ``s``.

    Without duplicate one (game ``i`` rotates the group by ``i``); with duplicate every
    rotation, or with ``permutations`` every permutation.
    """
    if not duplicate:
        return [tuple(range(players))]
    if permutations:
        return list(itertools.permutations(range(players)))
    return [tuple((s + r) % players for s in range(players)) for r in range(players)]


@dataclass(frozen=True)
class Schedule:
    """Which deal and seating each game of a group gets (see :func:`run_arena`)."""

    start: int
    """Dice seed of deal 0."""
    players: int
    duplicate: bool = False
    permutations: bool = False

    @property
    def per_deal(self) -> int:
        return len(seatings(self.players, self.duplicate, self.permutations))

    def game(self, i: int) -> tuple[int, tuple[int, ...]]:
        """Game ``i``'s deal index and seating (``seating[s]``: the group member in seat ``s``)."""
        n = self.players
        if not self.duplicate:
            return i, tuple((s + i) % n for s in range(n))
        per = seatings(n, True, self.permutations)
        return i // len(per), per[i % len(per)]


Task = tuple[tuple[str, ...], tuple[int, ...], Schedule, int, int, dict[str, Bot], str, Any]


def _play_chunk(task: Task) -> list[dict[str, Any]]:
    """Play games ``start..stop-1`` of one group (deals and seatings from the schedule)."""
    specs, group, schedule, start, stop, given, dice, luck_spec = task
    n = len(group)
    luck = _cached_value(luck_spec, n) if luck_spec is not None else None
    out = []
    for i in range(start, stop):
        deal, seating = schedule.game(i)
        seed = schedule.start + deal
        seats = [group[seating[s]] for s in range(n)]
        bots = [given[specs[b]] if specs[b] in given else _cached_bot(specs[b]) for b in seats]
        for s, bot in enumerate(bots):
            _reseed(bot, (schedule.start, i, s))
        times: list[list[float]] = [[] for _ in range(n)]
        events: list[ChanceEvent] = []
        scores = play_game(bots, seed, times=times, dice=dice, luck=luck, events=events)
        rec: dict[str, Any] = {
            "game": i,
            "deal": deal,
            "seed": seed,
            "seats": seats,
            "scores": scores,
            "times": times,
        }
        if n > 1:
            rec["raw"] = final_rewards(scores, "rank")
        if luck is not None:
            rec["luck"] = own_luck(events, n)
            rec["corrected"] = corrected_results(rec["raw"], events, first_seat_edge(events))
        out.append(rec)
    return out


def run_arena(
    specs: Sequence[str],
    players: int = 2,
    games: int = 200,
    seed: int | None = None,
    workers: int | None = None,
    ratings: bool = True,
    progress: bool = False,
    bots: dict[str, Bot] | None = None,
    field: str | None = None,
    *,
    deals: str | int | None = None,
    dice: str = "tape",
    duplicate: bool = False,
    permutations: bool = False,
    luck: str | ValueFunction | MixedValue | None = None,
) -> dict[str, Any]:
    """Play every group of ``players`` bots ``games`` times; returns the results dict (see module doc).

    ``bots`` maps some of the ``specs`` to ready bot objects (e.g. a network being trained),
    which are played as they are instead of being built from the spec. ``field`` (a bot
    spec) seats each of ``specs`` alone against ``players - 1`` copies of that bot instead
    of playing every combination; the copies are reported as ``field#1``, ``field#2`` ...

    ``deals`` names the deal set (``"test"``, the default, ``"selection"``, or a first dice
    seed; ``seed`` is the same as an integer ``deals``); ``dice`` is ``"tape"`` (common dice,
    the default) or ``"stream"``. ``duplicate`` plays every deal under every rotation of the
    seats (``permutations``: every permutation), so ``games`` must be a multiple of their
    number. ``luck`` (``"td"``, ``"planner"``, ``"td:path=MODEL"`` or a value-function object)
    adds each game's luck and luck-corrected results (:mod:`shelfie_env.arena.luck`).
    """
    specs = list(specs)
    given = dict(bots or {})
    if not specs:
        raise ValueError("no bots given")
    if not 1 <= players <= 4:
        raise ValueError(f"players must be 1..4, got {players}")
    if seed is not None and deals is not None:
        raise ValueError("give deals or seed, not both (an integer deals is a first seed)")
    deals = deals if deals is not None else (seed if seed is not None else "test")
    start = deal_start(deals)
    check_dice_mode(dice)
    if field is not None:
        if players < 2:
            raise ValueError("a field needs games of 2 to 4 players")
        field_name = parse_spec(field)[0]
        if field_name not in available():
            raise ValueError(f"--field: unknown bot {field_name!r}; available: {', '.join(available())}")
        head, sep, rest = field.partition(":")
        specs += [f"{head}#{k}{sep}{rest}" for k in range(1, players)]
    if len(set(specs)) != len(specs):
        raise ValueError(f"bot specs must be distinct, got {specs}")
    if players > 1 and len(specs) < players:
        raise ValueError(f"{players}-player games need at least {players} bots, got {len(specs)}")
    if games <= 0:
        raise ValueError(f"games must be positive, got {games}")
    if duplicate and dice != "tape":
        raise ValueError("duplicate matches deal common dice: use dice='tape'")
    if permutations and not duplicate:
        raise ValueError("permutations applies to duplicate matches (add duplicate)")
    schedule = Schedule(start, players, duplicate, permutations)
    if games % schedule.per_deal:
        raise ValueError(
            f"a duplicate match plays each deal under {schedule.per_deal} seatings: games must be a multiple "
            f"of {schedule.per_deal}, got {games}"
        )
    if luck is not None:
        _cached_value(luck, players)  # fail early on an unknown value function or a missing model
    for spec in specs:  # fail early, in this process, on unknown names or bad kwargs
        if spec in given:
            continue
        name, options = parse_spec(spec)
        if name not in available():
            raise ValueError(f"unknown bot {name!r} in {spec!r}; available: {', '.join(available())}")
        if "path" not in options:
            check_table(name, players, tape=True)
    if field is not None:
        mine = len(specs) - (players - 1)
        groups = [(i, *range(mine, len(specs))) for i in range(mine)]
    elif players == 1:
        groups = [(i,) for i in range(len(specs))]
    else:
        groups = list(itertools.combinations(range(len(specs)), players))
    tasks = [
        (tuple(specs), g, schedule, a, min(a + CHUNK, games), given, dice, luck)
        for g in groups
        for a in range(0, games, CHUNK)
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
    labels, models = model_labels(specs)
    result = summarise(labels, players, records, ratings=ratings)
    if players > 1:
        result["results"] = result_stats(labels, records, duplicate=duplicate)
    result["games"] = [
        {
            "game": r["game"],
            "deal": r["deal"],
            "seed": r["seed"],
            "seats": [labels[b] for b in r["seats"]],
            "scores": r["scores"],
            **{k: r[k] for k in ("raw", "luck", "corrected") if k in r},
        }
        for r in sorted(
            records, key=lambda r: (r["seats"] if players == 1 else sorted(r["seats"]), r["game"])
        )
    ]
    per = schedule.per_deal
    result["config"] = {
        "bots": labels,
        **({"models": models} if models else {}),
        "players": players,
        "field": field,
        "games_per_group": games,
        "deals": deals_label(deals),
        "deal_count": games // per if duplicate else games,
        "seed": start,
        "seeds": f"{start}..{start + (games // per if duplicate else games) - 1}",
        "dice": dice,
        "duplicate": duplicate,
        "seatings": "permutations" if permutations else "rotations" if duplicate else "rotated by game",
        "luck": None if luck is None else _cached_value(luck, players).name,
        "workers": workers,
        "wall_time_s": round(time.time() - t0, 1),
    }
    return result


def model_labels(specs: Sequence[str]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """How results name each bot: a spec with ``path=`` is named by its model file's stem
    (``td:path=runs/x/mine.npz`` -> ``td:mine``), never by a path on one machine; the
    second value maps those names to what the model's card says made it."""
    labels: list[str] = []
    models: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, options = parse_spec(spec)
        path = options.get("path")
        if path is None:
            labels.append(spec)
            continue
        stem = Path(str(path)).stem
        rest = ",".join(f"{k}={v}" for k, v in options.items() if k != "path")
        head = spec.partition(":")[0]
        label = f"{head}:{stem}" + (f",{rest}" if rest else "")
        k = 2
        while label in labels or label in specs:
            label = f"{head}:{stem}({k})" + (f",{rest}" if rest else "")
            k += 1
        labels.append(label)
        models[label] = _card_summary(Path(str(path)))
    return labels, models


def _card_summary(path: Path) -> dict[str, Any]:
    """What a model's card says made it (algorithm, steps, training config without run folders)."""
    from shelfie_env.bots.learned.card import MAX_CARD_BYTES, card_path
    from shelfie_env.jsonfile import JSONFileError, read_json_file

    try:
        card = read_json_file(card_path(path), "model card", MAX_CARD_BYTES)
    except JSONFileError:
        return {"file": path.name, "card": None}
    if not isinstance(card, dict) or not isinstance(card.get("config", {}), dict):
        return {"file": path.name, "card": None}
    config = {k: v for k, v in card.get("config", {}).items() if k not in ("run_dir", "out", "resume")}
    keep = ("algo", "steps", "num_players", "teacher", "preset", "command", "package_version")
    return {"file": path.name, **{k: card[k] for k in keep if k in card}, "config": config}


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
    ranks: list[list[int]] = [[] for _ in range(nb)]
    seat_firsts = [[0] * players for _ in range(nb)]
    times: list[list[float]] = [[] for _ in range(nb)]
    pair: dict[tuple[int, int], dict[str, Any]] = {}
    for rec in records:
        seats, sc = rec["seats"], rec["scores"]
        top = max(sc)
        for s, b in enumerate(seats):
            scores[b].append(sc[s])
            seat_counts[b][s] += 1
            firsts[b] += sc[s] == top
            seat_firsts[b][s] += sc[s] == top
            ranks[b].append(1 + sum(x > sc[s] for x in sc))
            if "times" in rec:
                times[b].extend(rec["times"][s])
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
        n = len(scores[b])
        rank, rank_sd = _mean_sd(ranks[b])
        half = 1.96 * rank_sd / math.sqrt(n) if n else 0.0
        bots.append(
            {
                "bot": spec,
                "games": n,
                "mean_score": m,
                "sd_score": sd,
                "first_place_rate": firsts[b] / n if n else 0.0,
                "first_place_ci95": list(wilson(firsts[b], n)) if n else [0.0, 1.0],
                "mean_rank": rank,
                "mean_rank_ci95": [rank - half, rank + half],
                "seat_counts": seat_counts[b],
                "first_place_by_seat": [
                    {
                        "seat": s,
                        "games": g,
                        "first_place_rate": seat_firsts[b][s] / g if g else 0.0,
                        "ci95": list(wilson(seat_firsts[b][s], g)) if g else [0.0, 1.0],
                    }
                    for s, g in enumerate(seat_counts[b])
                ],
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
    timing = [{"bot": spec, **ms} for spec, t in zip(specs, times) if (ms := _decision_ms(t))]
    if timing:
        out["timing"] = timing
    if ratings and players > 1:
        # One game of every group in turn, so that no group's games are all rated first.
        out["ratings"] = rate(specs, sorted(records, key=lambda r: r["game"]))
    return out


def _decision_ms(times: Sequence[float]) -> dict[str, float] | None:
    """Median, 99th percentile and maximum of a bot's decision times, in milliseconds."""
    if not times:
        return None
    ms = np.asarray(times) * 1e3
    return {
        "decisions": len(ms),
        "median": round(float(np.median(ms)), 4),
        "p99": round(float(np.percentile(ms, 99)), 4),
        "max": round(float(ms.max()), 4),
    }


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
