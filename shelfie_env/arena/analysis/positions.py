"""Labelled decision positions: positions from games of mixed bots, every action valued by rollouts.

**Drawing.** Game ``i`` of a part is dealt deal ``i`` of its deal set (``test``: dice seeds
30,000,000 + i; ``selection``: 10,000,000 + i) on common dice; each seat is played by a bot drawn
from :data:`MIX` (seeded by the deal), and :data:`PER_GAME` decisions with at least two legal
actions are drawn uniformly from the game, so every phase (reroll, circle, cross) comes in the
proportion the games have it.

**Labelling.** Each position's legal actions get their rollout values
(:func:`~shelfie_env.bots.rollout.rollouts.rollout_values`: ``td`` in every seat, common dice, luck
corrected), rollout ``k`` dealt dice tape :func:`rollout_seed` ``+ k``; the settings of each table
size are :func:`label_settings`.

**File format.** JSON lines (``.jsonl``, or gzip-compressed ``.jsonl.gz``), one position a line::

    {"id": "2p-test-30000004-17", "players": 2, "part": "test", "deal": 30000004,
     "decision": 17, "phase": "circle", "bots": ["td", "greedy"], "mover": "td",
     "state": {...state dict...},
     "label": {"policy": "td", "seed": ..., "rollouts": 16, "extra": 48, "focus": 4,
               "actions": [...], "value": [...], "se": [...], "raw": [...], "raw_se": [...],
               "gap_se": [...], "rollouts_per_action": [...]}}

``value`` is the action's mean luck-corrected rank reward for the player on turn, ``se`` its
standard error and ``gap_se`` the standard error of its gap to the best action (paired over the
common dice). The shipped set is :data:`SHIPPED` (docs/errors.md says what it holds)::

    python -m shelfie_env.arena.analysis.positions label --players 2 --part test --count 1500 \\
        --out runs/positions/2p_test.jsonl        # resumable: labelled ids are skipped
    python -m shelfie_env.arena.analysis.positions pack runs/positions/*.jsonl --out FILE.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.deals import DEAL_SETS, deal_start
from shelfie_env.bots import act_on_game
from shelfie_env.bots.rollout.rollouts import BasePolicy, one_blas_thread, rollout_values
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import PHASES, Game

MIX: dict[int, tuple[str, ...]] = {
    1: ("planner", "greedy", "ppo"),
    2: ("td", "planner", "greedy", "ppo"),
    3: ("td", "planner", "greedy"),
    4: ("td", "planner", "greedy"),
}
"""The bots a seat is drawn from, by table size (``td`` plays no solo games, ``ppo`` no games of three or
four)."""

PER_GAME = 2
"""Decisions drawn from each game."""

LABEL = {"rollouts": 16, "extra": 48, "focus": 4, "policy": "td"}
"""The labelling settings of the shipped set at two players: every action 16 rollouts, the 4 best
48 more."""

EXACT = {"rollouts": 0, "extra": 0, "focus": 0, "policy": "exact"}
"""The solo labels' settings: no rollouts, every action's value read from the solo table
(:mod:`shelfie_env.solo`), in expected final points."""

LABEL_BY_PLAYERS: dict[int, dict[str, Any]] = {
    1: EXACT,
    **{players: {**LABEL, "rollouts": 32, "extra": 96} for players in (3, 4)},
}
"""Table sizes whose shipped labels take other settings: at three and four players, whose ladders
are read from fewer positions, every action gets 32 rollouts and the 4 best 96 more (docs/errors.md);
solo positions are labelled exactly (:data:`EXACT`)."""


def label_settings(players: int) -> dict[str, Any]:
    """The labelling settings of the shipped set at ``players``."""
    return LABEL_BY_PLAYERS.get(players, LABEL)

SHIPPED = "positions.jsonl.gz"
"""The shipped positions file in ``shelfie_env/data/positions``."""


def shipped_positions() -> Path:
    """Path of the shipped labelled positions."""
    return Path(str(files("shelfie_env") / "data" / "positions" / SHIPPED))


def rollout_seed(deal: int, decision: int) -> int:
    """First dice-tape seed of a position's rollouts (room for 512 rollouts an action)."""
    return (deal * 1024 + decision) * 512


def _seat_bots(players: int, deal: int) -> list[str]:
    rng = np.random.default_rng([deal, players, 38])
    mix = MIX[players]
    return [mix[int(i)] for i in rng.integers(0, len(mix), size=players)]


def game_positions(players: int, deal: int, per_game: int = PER_GAME) -> list[dict[str, Any]]:
    """The drawn positions of the game dealt ``deal`` (unlabelled records, module doc)."""
    from shelfie_env.bots.spec import build_bot

    names = _seat_bots(players, deal)
    bots = [build_bot(n) for n in names]
    g = Game.new(players, rng=DiceTape(deal))
    seen: list[tuple[int, Game]] = []
    step = 0
    while not g.over:
        if len(g.legal_actions()) > 1:
            seen.append((step, g.clone()))
        g.step(act_on_game(bots[g.current], g))
        step += 1
    rng = np.random.default_rng([deal, players, 39])
    picks = sorted(rng.choice(len(seen), size=min(per_game, len(seen)), replace=False).tolist())
    out = []
    for i in picks:
        decision, pos = seen[i]
        out.append(
            {
                "players": players,
                "deal": deal,
                "decision": decision,
                "phase": PHASES[pos.phase],
                "bots": names,
                "mover": names[pos.current],
                "state": pos.to_dict(),
            }
        )
    return out


def draw_positions(players: int, part: str, count: int, per_game: int = PER_GAME) -> Iterator[dict[str, Any]]:
    """The first ``count`` positions of ``part`` (``test`` or ``selection``) at ``players`` players."""
    if part not in DEAL_SETS:
        raise ValueError(f"part must be {' or '.join(map(repr, DEAL_SETS))}, got {part!r}")
    if players not in MIX:
        raise ValueError(f"positions are drawn at 1-4 players, got {players!r}")
    start, made, i = deal_start(part), 0, 0
    while made < count:
        for rec in game_positions(players, start + i, per_game):
            if made >= count:
                return
            rec = {"id": f"{players}p-{part}-{rec['deal']}-{rec['decision']}", "part": part, **rec}
            made += 1
            yield rec
        i += 1


def exact_label(rec: dict[str, Any]) -> dict[str, Any]:
    """``rec`` (a solo position) with its exact ``label``: every legal action's expected final score
    under optimal play afterwards (the solo table), with zero standard errors."""
    from shelfie_env.solo.table import shipped_table
    from shelfie_env.solo.turn import SoloTurn

    game = Game.from_dict(rec["state"])
    values = SoloTurn(shipped_table(), game).action_values()
    actions = sorted(values)
    zeros = [0.0] * len(actions)
    label = {
        **{k: EXACT[k] for k in ("policy", "rollouts", "extra", "focus")},
        "actions": actions,
        "value": [values[a] for a in actions],
        "se": zeros,
        "raw": [values[a] for a in actions],
        "raw_se": zeros,
        "gap_se": zeros,
        "rollouts_per_action": [0] * len(actions),
    }
    return {**rec, "label": label}


def label_position(
    rec: dict[str, Any], policy: BasePolicy | None, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``rec`` with its ``label`` (every legal action's rollout value, or its exact value when the
    settings say ``exact``; ``settings`` default to the shipped set's at the position's table size)."""
    settings = label_settings(rec["players"]) if settings is None else settings
    if settings["policy"] == "exact":
        return exact_label(rec)
    if policy is None:
        raise ValueError("rollout labels need a rollout policy")
    game = Game.from_dict(rec["state"])
    seed = rollout_seed(rec["deal"], rec["decision"])
    rv = rollout_values(
        game,
        settings["rollouts"],
        policy=policy,
        seed=seed,
        extra=settings["extra"],
        focus=settings["focus"],
    )
    d = rv.to_dict()
    d["rollouts_per_action"] = d.pop("rollouts")
    label = {
        "policy": policy.spec,
        "seed": seed,
        **{k: settings[k] for k in ("rollouts", "extra", "focus")},
        **d,
    }
    return {**rec, "label": label}


def _open(path: Path, mode: str) -> Any:
    return (
        gzip.open(path, mode + "t", encoding="utf-8")
        if path.suffix == ".gz"
        else open(path, mode, encoding="utf-8")
    )


def load_positions(
    path: str | Path | None = None, *, players: int | None = None, part: str | None = None
) -> list[dict[str, Any]]:
    """The labelled positions of ``path`` (default: the shipped set), optionally of one table size and part."""
    p = Path(path) if path is not None else shipped_positions()
    if not p.is_file():
        raise FileNotFoundError(f"no positions file {p}")
    out = []
    with _open(p, "r") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{p}, line {n}: not a JSON position ({exc.msg})") from None
            if not isinstance(rec, dict) or "state" not in rec or "label" not in rec:
                raise ValueError(f"{p}, line {n}: a position needs 'state' and 'label'")
            if (players is None or rec["players"] == players) and (part is None or rec["part"] == part):
                out.append(rec)
    return out


def save_positions(records: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write ``records`` as JSON lines (gzip when ``path`` ends in ``.gz``); returns how many."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with _open(p, "w") as fh:
        for rec in records:
            fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
            n += 1
    return n


def label_file(
    players: int,
    part: str,
    count: int,
    out: str | Path,
    settings: dict[str, Any] | None = None,
    progress: bool = True,
) -> int:
    """Label the first ``count`` positions of ``part`` into ``out`` (JSON lines, appended one by one;
    ids already in ``out`` are skipped, so a stopped run resumes). ``settings`` default to the
    shipped set's at ``players`` (:func:`label_settings`). Returns the positions labelled now."""
    settings = label_settings(players) if settings is None else settings
    p = Path(out)
    done = {r["id"] for r in load_positions(p)} if p.is_file() else set()
    p.parent.mkdir(parents=True, exist_ok=True)
    policy = None if settings["policy"] == "exact" else BasePolicy(players, settings["policy"])
    made, t0 = 0, time.time()
    with open(p, "a", encoding="utf-8") as fh, one_blas_thread():
        for rec in draw_positions(players, part, count):
            if rec["id"] in done:
                continue
            fh.write(json.dumps(label_position(rec, policy, settings), separators=(",", ":")) + "\n")
            fh.flush()
            made += 1
            if progress:
                rate = (time.time() - t0) / made
                print(
                    f"{len(done) + made}/{count} {rec['id']} {rate:.1f} s a position",
                    file=sys.stderr,
                    flush=True,
                )
    return made


def precision(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """How precise the labels are: mean standard error of the best action's value, mean paired SE of
    the gap to the second best, and the share of positions where the best is ahead of the second by
    more than two of those SEs."""
    se_best, gap_se, apart = [], [], []
    for rec in records:
        lab = rec["label"]
        v = np.array(lab["value"])
        order = np.argsort(-v)
        se_best.append(lab["se"][order[0]])
        if len(v) > 1:
            g = float(lab["gap_se"][order[1]])
            gap_se.append(g)
            apart.append(v[order[0]] - v[order[1]] > 2 * g)
    return {
        "positions": len(records),
        "mean_se_best": float(np.mean(se_best)) if se_best else float("nan"),
        "mean_gap_se_second": float(np.mean(gap_se)) if gap_se else float("nan"),
        "share_separated_2se": float(np.mean(apart)) if apart else float("nan"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shelfie_env.arena.analysis.positions", description="Draw and label decision positions."
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    lab = sub.add_parser("label", help="label positions into a JSON-lines file (resumable)")
    lab.add_argument("--players", type=int, default=2, choices=(1, 2, 3, 4), help="1: exact labels")
    lab.add_argument("--part", default="test", choices=tuple(DEAL_SETS))
    lab.add_argument("--count", type=int, required=True)
    lab.add_argument("--out", required=True)
    for key in ("rollouts", "extra", "focus"):
        lab.add_argument(
            f"--{key}", type=int, default=None,
            help=f"default: the shipped set's ({LABEL[key]} at 2 players, {LABEL_BY_PLAYERS[3][key]} at 3 and 4)",
        )
    lab.add_argument("--policy", default=LABEL["policy"])
    pack = sub.add_parser("pack", help="merge labelled files into one (gzip when OUT ends in .gz)")
    pack.add_argument("files", nargs="+")
    pack.add_argument("--out", required=True)
    info = sub.add_parser("info", help="counts and label precision of a positions file")
    info.add_argument("file", nargs="?")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "label":
            if args.count < 1:
                parser.error("--count must be at least 1")
            shipped = label_settings(args.players)
            settings = {
                key: shipped[key] if getattr(args, key) is None else getattr(args, key)
                for key in ("rollouts", "extra", "focus")
            }
            for key, value in settings.items():
                least = 1 if key == "rollouts" and args.players > 1 else 0
                if value < least:
                    parser.error(f"--{key} must be at least {least}, not {value}")
            settings["policy"] = "exact" if args.players == 1 else args.policy
            label_file(args.players, args.part, args.count, args.out, settings)
        elif args.cmd == "pack":
            records = [r for f in args.files for r in load_positions(f)]
            print(f"{save_positions(records, args.out)} positions -> {args.out}")
        else:
            records = load_positions(args.file)
            for key in sorted({(r["players"], r["part"]) for r in records}):
                sel = [r for r in records if (r["players"], r["part"]) == key]
                phases = {ph: sum(r["phase"] == ph for r in sel) for ph in ("reroll", "circle", "cross")}
                print(f"{key[0]}p {key[1]}: {phases} {precision(sel)}")
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
