"""How good are rollout labels? Solo positions labelled by rollouts, held against their exact values.

Every error rate at two to four players rests on rollout labels (:mod:`.positions`): each legal
action valued by the mean outcome of games played on from it by a policy, on common dice, the
best few actions given more rollouts. At one player the truth is known (:mod:`shelfie_env.solo`),
so the method can be measured: label solo positions with the same counts (16 rollouts an action,
48 more for the best 4, common dice, dice tape :func:`.positions.rollout_seed` ``+ k``), played on
by the strongest fast solo policy (``ppo``; ``td`` has no solo model), and compare:

* the bias and RMSE of the labels (rollout value minus exact value, over every action), and the RMSE
  within a position (each position's mean difference taken out: the part that can reorder its
  actions);
* the bias of the best action's label (the largest of noisy estimates, where error rates start);
* how often the labels' best action is a truly best action;
* the error rates of bots measured by the rollout labels beside their exact ones.

Solo rollouts are not luck-corrected (the correction uses ``td``'s value network, which plays two to
four players), so their noise is the raw game's: this measures the method's policy bias and noise,
not the luck correction.

    python -m shelfie_env.arena.analysis.solo_rollouts label --count 300 --out runs/positions/1p_rollouts.jsonl
    python -m shelfie_env.arena.analysis.solo_rollouts compare runs/positions/1p_rollouts.jsonl --bots greedy planner ppo
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.analysis.positions import (
    LABEL,
    draw_positions,
    exact_label,
    load_positions,
    rollout_seed,
)
from shelfie_env.bots import Bot, act_on_game
from shelfie_env.bots.spec import build_bot
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import Game

POLICY = "ppo"
"""The rollout policy: the strongest solo bot fast enough to play thousands of games a position."""


def _rollout(state: dict[str, Any], action: int, seed: int, policy: Bot) -> int:
    game = Game.from_dict(state, rng=DiceTape(seed))
    game.step(action)
    while not game.over:
        game.step(act_on_game(policy, game))
    return game.table.score(game.circled[0])


def rollout_label(
    rec: dict[str, Any],
    policy: Bot,
    rollouts: int = LABEL["rollouts"],
    extra: int = LABEL["extra"],
    focus: int = LABEL["focus"],
) -> dict[str, Any]:
    """Every legal action's mean final score over ``rollouts`` games played on by ``policy`` (the
    ``focus`` best ``extra`` more), rollout ``k`` on dice tape ``rollout_seed + k`` for every action."""
    game = Game.from_dict(rec["state"])
    actions = sorted(game.legal_actions())
    seed = rollout_seed(rec["deal"], rec["decision"])
    scores: dict[int, list[int]] = {
        a: [_rollout(rec["state"], a, seed + k, policy) for k in range(rollouts)] for a in actions
    }
    order = sorted(actions, key=lambda a: -float(np.mean(scores[a])))
    for a in order[:focus]:
        scores[a] += [_rollout(rec["state"], a, seed + k, policy) for k in range(rollouts, rollouts + extra)]
    value = [float(np.mean(scores[a])) for a in actions]
    se = [float(np.std(scores[a], ddof=1) / np.sqrt(len(scores[a]))) for a in actions]
    return {
        "policy": POLICY,
        "seed": seed,
        "rollouts": rollouts,
        "extra": extra,
        "focus": focus,
        "actions": actions,
        "value": value,
        "se": se,
        "rollouts_per_action": [len(scores[a]) for a in actions],
    }


def label_file(count: int, out: Path, part: str = "test") -> int:
    """Label the first ``count`` solo positions of ``part`` by rollouts into ``out`` (JSON lines, resumable)."""
    done = {r["id"] for r in load_positions(out)} if out.is_file() else set()
    policy = build_bot(POLICY)
    made, t0 = 0, time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a", encoding="utf-8") as fh:
        for rec in draw_positions(1, part, count):
            if rec["id"] in done:
                continue
            fh.write(json.dumps({**rec, "label": rollout_label(rec, policy)}, separators=(",", ":")) + "\n")
            fh.flush()
            made += 1
            rate = (time.time() - t0) / made
            print(
                f"{len(done) + made}/{count} {rec['id']} {rate:.1f} s a position", file=sys.stderr, flush=True
            )
    return made


def _losses(
    bot: Bot, records: Sequence[dict[str, Any]], exact: dict[str, dict[str, Any]]
) -> tuple[list, list]:
    by_rollout, by_exact = [], []
    for rec in records:
        action = act_on_game(bot, Game.from_dict(rec["state"]))
        for store, lab in ((by_rollout, rec["label"]), (by_exact, exact[rec["id"]]["label"])):
            v = np.array(lab["value"])
            store.append(float(v.max() - v[lab["actions"].index(action)]))
    return by_rollout, by_exact


def compare(records: Sequence[dict[str, Any]], bots: Sequence[str] = ()) -> dict[str, Any]:
    """The rollout labels of ``records`` against the exact values of the same positions (module doc)."""
    exact = {rec["id"]: exact_label(rec) for rec in records}
    diffs, centered, best_bias, agree, gaps = [], [], [], [], []
    for rec in records:
        lab, ex = rec["label"], exact[rec["id"]]["label"]
        if lab["actions"] != ex["actions"]:
            raise ValueError(f"position {rec['id']}: the labels name other actions")
        r, e = np.array(lab["value"]), np.array(ex["value"])
        diffs.extend((r - e).tolist())
        centered.extend((r - e - (r - e).mean()).tolist())  # what moves the ranking within a position
        best_bias.append(float(r.max() - e.max()))
        agree.append(bool(e[int(np.argmax(r))] >= e.max() - 1e-9))
        gaps.append(float(e.max() - e[int(np.argmax(r))]))
    d = np.array(diffs)
    out: dict[str, Any] = {
        "positions": len(records),
        "actions": int(d.size),
        "bias": float(d.mean()),
        "rmse": float(np.sqrt((d**2).mean())),
        "centered_rmse": float(np.sqrt(np.mean(np.square(centered)))),
        "best_label_bias": float(np.mean(best_bias)),
        "best_agrees": float(np.mean(agree)),
        "labels_best_loses": float(np.mean(gaps)),
        "bots": {},
    }
    for spec in bots:
        by_rollout, by_exact = _losses(build_bot(spec), records, exact)
        n = len(by_exact)
        out["bots"][spec] = {
            "rollout_error_rate": float(np.mean(by_rollout)),
            "rollout_se": float(np.std(by_rollout, ddof=1) / np.sqrt(n)),
            "exact_error_rate": float(np.mean(by_exact)),
            "exact_se": float(np.std(by_exact, ddof=1) / np.sqrt(n)),
        }
    return out


def format_comparison(c: dict[str, Any]) -> str:
    """The comparison as lines of text."""
    lines = [
        f"{c['positions']} solo positions, {c['actions']} actions: rollout label - exact value "
        f"bias {c['bias']:+.3f} points, RMSE {c['rmse']:.3f}; within a position (each position's mean "
        f"difference taken out) RMSE {c['centered_rmse']:.3f}",
        f"best action's label - true best value: {c['best_label_bias']:+.3f} points; the labels' best is a true best "
        f"in {100 * c['best_agrees']:.1f} % of positions (it gives away {c['labels_best_loses']:.3f} points on average)",
    ]
    for spec, b in c["bots"].items():
        lines.append(
            f"  {spec:>12}: error rate by rollout labels {b['rollout_error_rate']:.3f} ± {b['rollout_se']:.3f}, "
            f"exact {b['exact_error_rate']:.3f} ± {b['exact_se']:.3f} points a decision"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shelfie_env.arena.analysis.solo_rollouts", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    lab = sub.add_parser("label", help="label solo test positions by rollouts (resumable)")
    lab.add_argument("--count", type=int, default=300)
    lab.add_argument("--out", type=Path, required=True)
    cmp_ = sub.add_parser("compare", help="hold a rollout-labelled file against the exact values")
    cmp_.add_argument("file", type=Path)
    cmp_.add_argument("--bots", nargs="*", default=["greedy", "planner", "ppo"])
    cmp_.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        if args.cmd == "label":
            if args.count < 1:
                parser.error("--count must be at least 1")
            label_file(args.count, args.out)
        else:
            result = compare(load_positions(args.file), args.bots)
            if args.json:
                args.json.write_text(json.dumps(result, indent=1) + "\n")
            print(format_comparison(result))
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
