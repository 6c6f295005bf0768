"""A results row: one agent's luck-aware evaluation, the protocols rows are evaluated under, learning curves.

* :func:`task_row`: a row of a benchmark task (:func:`evaluate_row` at two players, the task's score
  beside it, :mod:`shelfie_env.arena.task_score`);
* :func:`evaluate_row`: the luck-aware evaluation (:func:`shelfie_env.arena.evaluate`:
  duplicate matches on the ``test`` deals, raw and luck-corrected score rates with
  95 % intervals) as one results row;
* :class:`Curve` / :func:`curve_point`: cheap learning-curve points (plain arena games against
  ``greedy`` on the ``selection`` deals) over learner decisions and training seconds;
* :data:`PROTOCOLS`: what each row's ``protocol`` id means; :func:`budget_label` names a row's budget.

Rows are merged into a results file by :mod:`shelfie_env.arena.results_file` and tabled by
:mod:`shelfie_env.arena.aggregate`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from shelfie_env.arena.deals import deal_start
from shelfie_env.arena.values import DEFAULT_LUCK

PROTOCOL = "duplicate-luck"
"""Protocol id of rows evaluated by :func:`evaluate_row`."""
TASK_PROTOCOL = "task-score"
"""Protocol id of rows of the 3-, 4-player and solo tasks, scored by the task alone (no match against greedy)."""
PLAIN = "plain-arena"
"""Protocol id of rows evaluated by plain arena games (Wilson win rates); rows without a ``protocol`` key."""
PROTOCOLS = {
    PROTOCOL: {
        "evaluation": "shelfie_env.arena.evaluate: duplicate matches (every deal under both seatings), "
        "common dice, luck-corrected with td+planner",
        "deals": "test: dice seeds 30,000,000 + i (or the row's eval.deals)",
        "metrics": "score rate (wins + half the ties), raw and luck-corrected, 95% normal intervals over deals; "
        "games factor (raw / corrected variance); win rate with its 95% Wilson interval",
        "curve": "plain arena games against greedy on the selection deals (dice seeds 10,000,000 + i), "
        "over learner decisions and training seconds",
    },
    TASK_PROTOCOL: {
        "evaluation": "the task's score alone: shelfie_env.arena.rate on the shipped ladder of the table size "
        "(duplicate, luck-corrected, test deals) or, on solo, the mean final score over the test deals",
        "metrics": "rating with its 95% interval, or mean score with its 95% interval; normalized 0 (random) "
        "to 100 (the top level, or optimal play, E*, on solo)",
    },
    PLAIN: {
        "evaluation": "plain arena games, seats rotated, common dice",
        "metrics": "win rate with its 95% Wilson interval, mean score",
    },
}
OPPONENTS = ("greedy", "planner", "random")
"""Evaluation opponents a row may have; ``greedy`` is always one (the report ranks on it)."""
CURVE_DEALS = "selection"


def budget_label(steps: int) -> str:
    """``1000000`` -> ``1M``, ``200000`` -> ``200k``, ``0`` -> ``-`` (no training)."""
    if steps <= 0:
        return "-"
    for size, unit in ((1_000_000, "M"), (1_000, "k")):
        if steps >= size and (steps * 10) % size == 0:
            return f"{steps / size:g}{unit}"
    return f"{steps:,}"



def _side(rate: dict[str, Any]) -> dict[str, Any]:
    return {"score_rate": rate["score_rate"], "ci95": rate["score_rate_ci95"], "mean_reward": rate["mean"]}


def row_head(
    learner: str, seed: int | None, steps: int, decisions: int | None, train_s: float, mode: str, protocol: str
) -> dict[str, Any]:
    """The fields every row starts with; a row without a seed (a bot, no training) has budget and decisions 0."""
    trained = seed is not None
    return {
        "learner": learner,
        "seed": seed,
        "steps": steps if trained else 0,
        "decisions": int(decisions if decisions is not None else steps) if trained else 0,
        "train_s": round(float(train_s), 1),
        "mode": mode,
        "protocol": protocol,
    }


def evaluate_row(
    bot: Any,
    args: argparse.Namespace,
    *,
    learner: str,
    seed: int | None,
    train_s: float,
    decisions: int | None = None,
    mode: str = "masked",
    workers: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One results row: ``bot`` (an object with ``act(state)`` or ``act_game(game)``, or a bot spec) evaluated
    by :func:`shelfie_env.arena.evaluate` against each of ``args.opponents``, ``args.eval_games`` games each
    on ``args.deals``, duplicate and luck-corrected. ``args.steps`` is the row's budget (0 and
    ``seed`` None for bots without training); ``decisions`` the learner decisions actually
    trained (default: the budget); ``extra`` fields are stored as they are."""
    from shelfie_env.arena import evaluate

    ev = evaluate(
        bot,
        opponents=args.opponents,
        games=args.eval_games,
        deals=args.deals,
        duplicate=True,
        luck=DEFAULT_LUCK,
        workers=args.workers if workers is None else workers,
        name="agent",
    )
    row = row_head(learner, seed, int(args.steps), decisions, train_s, mode, PROTOCOL)
    row.update({
        "eval": {
            "deals": str(args.deals),
            "first_seed": deal_start(args.deals),
            "duplicate": True,
            "luck": DEFAULT_LUCK,
        },
    })
    for r, res in zip(ev.rows, ev.results):
        pair = res["pairings"][0]
        row[f"vs_{r.opponent}"] = {
            "games": r.games,
            "deals": r.units,
            "raw": _side(r.raw),
            "corrected": _side(r.corrected) if r.corrected is not None else None,
            "variance_ratio": r.variance_ratio,
            **{
                k: pair[k]
                for k in ("wins", "ties", "losses", "win_rate", "win_ci95", "mean_score", "sd_score")
            },
            "opp_mean_score": pair["opp_mean_score"],
        }
    row.update(extra)
    row.setdefault("command", row_command(getattr(args, "command", None)))
    return row


def task_row(
    bot: Any,
    args: Any,
    task: str,
    players: int,
    *,
    learner: str,
    seed: int | None,
    train_s: float,
    decisions: int | None = None,
    mode: str = "masked",
    workers: int | None = None,
    rating_curve: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One results row of ``task``: at two players :func:`~shelfie_env.arena.rows.evaluate_row` (the corrected
    score rate against ``args.opponents``) with the task score beside it; at other table sizes the task score
    alone (:data:`~shelfie_env.arena.rows.TASK_PROTOCOL`). ``rating_curve`` (points before the end) gets the
    final score as its last point. ``args.rate_games`` (or the defaults) sizes the task score."""
    from shelfie_env.arena.task_score import task_fields

    if players == 2 and getattr(args, "eval_games", 0):
        row = evaluate_row(bot, args, learner=learner, seed=seed, train_s=train_s, decisions=decisions,
                           mode=mode, workers=workers, **extra)
    else:
        row = row_head(learner, seed, int(getattr(args, "steps", 0) or 0), decisions, train_s, mode, TASK_PROTOCOL)
        row.update(extra)
        row.setdefault("command", row_command(getattr(args, "command", None)))
    score = task_fields(bot, players, getattr(args, "rate_games", None), workers if workers else 1, name=learner)
    row.update({"task": task, "players": players, **score})
    if rating_curve is not None:
        final = {"decisions": row["decisions"], "train_s": row["train_s"], "normalized": score["normalized"]}
        if players == 1:
            final.update({k: score["solo"][k] for k in ("mean", "ci95", "games")})
        else:
            final.update({k: score["rating"][k] for k in ("rating", "ci95", "games")})
        row["rating_curve"] = [*rating_curve, final]
    return row


_WHERE_AND_WHEN = {"--run-dir": 1, "--out": 1, "--save": 1, "--plot": 1, "--stop-after": 1, "--resume": 0}
"""Options that say where files go or when a run pauses: a row's result does not depend on them."""


def row_command(command: str | None) -> str | None:
    """``command`` as a row records it: without the options of :data:`_WHERE_AND_WHEN`, so the row
    names no folder of one machine and a resumed run records the command of the run it continues."""
    if command is None:
        return None
    words, kept = command.split(), []
    i = 0
    while i < len(words):
        name = words[i].split("=", 1)[0]
        if name in _WHERE_AND_WHEN:
            i += 1 + (_WHERE_AND_WHEN[name] if "=" not in words[i] else 0)
            continue
        kept.append(words[i])
        i += 1
    return " ".join(kept)


def curve_point(bot: Any, games: int, decisions: int, train_s: float) -> dict[str, Any]:
    """A learning-curve point: ``games`` plain arena games against ``greedy`` on the ``selection`` deals
    (seats rotated, no duplicate, no luck correction: cheap enough to run while training)."""
    from shelfie_env.arena import run_arena

    res = run_arena(
        ["learner", "greedy"], 2, games, workers=1, ratings=False, bots={"learner": bot}, deals=CURVE_DEALS
    )
    pair = res["pairings"][0]
    return {
        "decisions": int(decisions),
        "train_s": round(float(train_s), 1),
        "games": pair["games"],
        "win_rate": pair["win_rate"],
        "win_ci95": pair["win_ci95"],
        "score_rate": pair["score_rate"],
    }


class Curve:
    """Learning-curve points every ``every`` decisions (:func:`curve_point`), with the training seconds so far
    (curve games not counted); :meth:`state` / :meth:`load_state` carry it through a checkpoint.

    ``rating_marks`` (decisions) add points of the task's own score
    (:func:`~shelfie_env.arena.task_score.curve_fields` at ``players``: a small ``rate()``, or a solo mean)
    to :attr:`ratings` when training passes each mark."""

    def __init__(self, every: int, games: int, rating_marks: tuple[int, ...] = (), players: int = 2) -> None:
        self.every, self.games, self.players = every, games, players
        self.points: list[dict[str, Any]] = []
        self.ratings: list[dict[str, Any]] = []
        self.marks = sorted(int(m) for m in rating_marks)
        self.next_plain = every
        self.eval_s = 0.0
        self.start = time.time()

    @property
    def next(self) -> int:
        """The decisions of the next point of either kind (a large number when none is due)."""
        upcoming = [self.next_plain] if self.every > 0 else []
        upcoming += self.marks[:1]
        return min(upcoming) if upcoming else 2**62

    def due(self, decisions: int) -> bool:
        return (self.every > 0 or bool(self.marks)) and decisions >= self.next

    def train_s(self) -> float:
        """Seconds spent training so far (curve evaluations not counted)."""
        return time.time() - self.start - self.eval_s

    def state(self) -> dict[str, Any]:
        return {"points": list(self.points), "next": self.next_plain, "train_s": self.train_s(),
                "ratings": list(self.ratings), "marks": list(self.marks)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue a curve saved by :meth:`state`: its points, schedule and training seconds."""
        self.points, self.next_plain = list(state["points"]), int(state["next"])
        self.ratings = list(state.get("ratings", []))
        if "marks" in state:
            self.marks = [int(m) for m in state["marks"]]
        self.eval_s, self.start = 0.0, time.time() - float(state["train_s"])

    def add(self, decisions: int, bot: Any, final: bool = False) -> None:
        if not final and self.marks and decisions >= self.marks[0]:
            while self.marks and self.marks[0] <= decisions:
                self.marks.pop(0)
            self._rating_point(decisions, bot)
        if not final:
            if self.every <= 0 or decisions < self.next_plain:
                return
            while self.next_plain <= decisions:
                self.next_plain += self.every
        elif self.points and self.points[-1]["decisions"] == decisions:
            return
        if self.games <= 0 or (final and self.every <= 0):
            return
        t0 = time.time()
        with _rng_kept():  # a run with curve points trains exactly as one without
            point = curve_point(bot, self.games, decisions, self.train_s())
        self.eval_s += time.time() - t0
        self.points.append(point)
        print(json.dumps({"curve": point}), flush=True)

    def _rating_point(self, decisions: int, bot: Any) -> None:
        from shelfie_env.arena.task_score import curve_fields

        t0 = time.time()
        with _rng_kept():
            point = curve_fields(bot, self.players, decisions, self.train_s())
        self.eval_s += time.time() - t0
        self.ratings.append(point)
        print(json.dumps({"rating_curve": point}), flush=True)


@contextmanager
def _rng_kept() -> Iterator[None]:
    """The global random states of ``random``, NumPy and torch (if loaded) restored after the block."""
    torch = sys.modules.get("torch")
    states = (random.getstate(), np.random.get_state(), torch.get_rng_state() if torch else None)
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        if torch is not None:
            torch.set_rng_state(states[2])
