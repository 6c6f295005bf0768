"""One turn played with its dice known: every position it can end in, and the moves that get there.

On a :class:`~shelfie_env.game.dice.DiceTape` a reroll of ``m`` dice at roll
``r`` of a turn gets the tape's first ``m`` faces of that roll, so what a
reroll brings depends only on the dice it keeps. From the turn's first roll,
:func:`reachable` lists every final dice multiset the player can end on (keep
any sub-multiset, twice; keeping all six is stopping) and, with
:data:`~shelfie_env.bots.planner.placements.FEASIBLE`, every placement (circle
set or crossed row) the turn can end with, each with a :class:`Plan` that
reaches it; from a later position of the turn, the placements still open.
:func:`plan_action` turns a plan into the legal action of the moment;
:func:`turn_start` and :func:`on_plan` tell from a position alone whether it lies
on the plan of its turn's start. Numpy only; nothing here is random.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.planner.dice import FINAL, KEEP, PAD, SUB_KEEPS, counts_of
from shelfie_env.bots.planner.placements import (
    FEASIBLE,
    SET_MASKS,
    SET_SIZES,
    SETS,
    feasible_matrix,
    first_step,
)
from shelfie_env.game.actions import CROSS_BASE, END_TURN, NUM_DICE, STOP
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import CIRCLE, CROSS, MAX_CIRCLES, REROLL, ROLLS_PER_TURN, Game
from shelfie_env.game.scoring import FULL

STAY = -1
"""The placement that ends the turn at once, circling nothing more (a choice after a circle)."""

_KEEP_SIZE = KEEP.sum(axis=1)
_POW7 = 7 ** np.arange(6, dtype=np.int64)
_CODE_INDEX = np.full(7**6, -1, dtype=np.int64)
_CODE_INDEX[FINAL @ _POW7] = np.arange(len(FINAL))
"""Final multiset index of a face-count vector's base-7 code (-1 for other codes)."""


def _counts(final: int) -> tuple[int, ...]:
    return tuple(FINAL[final].tolist())


@dataclass(frozen=True)
class Plan:
    """How to end the turn on one placement: the dice kept at each reroll still to make, then the placement.

    ``keeps[i]`` is the face-count tuple kept at the ``i``-th reroll decision left (six dice kept =
    stop); ``placement`` indexes ``NUM_SET_VALUES`` (a set of ``SETS``, or ``NUM_SETS + row`` to cross),
    or is :data:`STAY` (end the turn now).
    """

    keeps: tuple[tuple[int, ...], ...]
    final: tuple[int, ...]
    placement: int

    @property
    def cells(self) -> tuple[tuple[int, int], ...]:
        """The cells the plan circles (empty for a cross-out and for :data:`STAY`)."""
        return SETS[self.placement] if 0 <= self.placement < NUM_SETS else ()


def tape_of(game: Game) -> DiceTape:
    """The game's dice tape; ``ValueError`` when its dice come from a stream (nothing to read ahead)."""
    if not isinstance(game.rng, DiceTape):
        raise ValueError(
            "this bot reads the dice ahead and needs a game dealt from a DiceTape "
            f"(common dice: dice='tape'), got {type(game.rng).__name__}"
        )
    return game.rng


def _prefix_counts(faces: np.ndarray) -> np.ndarray:
    """``(7, 6)``: face counts of the first ``m`` dice of one roll, for ``m = 0..6``."""
    out = np.zeros((NUM_DICE + 1, 6), dtype=np.int64)
    for m in range(1, NUM_DICE + 1):
        out[m] = out[m - 1]
        out[m, int(faces[m - 1])] += 1
    return out


def final_dice(game: Game) -> dict[int, tuple[tuple[int, ...], ...]]:
    """Every final dice multiset the player on turn can still reach, with the keeps that reach it.

    Keys are indices into :data:`~shelfie_env.bots.planner.dice.FINAL` (face counts), in the order
    found: the dice now first, then those one reroll away, then two. Values are the face counts kept
    at each reroll decision left (two at the turn's first decision). The game must be in its reroll
    phase. What a reroll brings depends only on the dice kept, so each roll is one table over the
    924 keeps.
    """
    if game.phase != REROLL:
        raise ValueError(f"final_dice needs the reroll phase, got {game.phase_name}")
    faces = tape_of(game).faces(game.current, game.round)
    first_roll = ROLLS_PER_TURN + 1 - game.rolls_left
    start = int(_CODE_INDEX[np.array(counts_of(game.dice), dtype=np.int64) @ _POW7])
    paths: dict[int, tuple[tuple[int, ...], ...]] = {start: ()}
    frontier = [start]
    for roll in range(first_roll, ROLLS_PER_TURN + 1):
        finals = _CODE_INDEX[(KEEP + _prefix_counts(faces[roll])[NUM_DICE - _KEEP_SIZE]) @ _POW7]  # (924,)
        subs = SUB_KEEPS[frontier]  # (frontier, width): the keeps within each frontier's dice
        keeps, first = np.unique(subs.ravel(), return_index=True)
        real = keeps != PAD
        keeps, source = keeps[real], first[real] // subs.shape[1]
        # Fewest dice rerolled first: among keeps that reach the same final, prefer the bigger keep.
        order = np.argsort(-_KEEP_SIZE[keeps], kind="stable")
        nxt = []
        for i in order.tolist():
            f = int(finals[keeps[i]])
            if f in paths:
                continue
            paths[f] = (*paths[frontier[source[i]]], tuple(KEEP[keeps[i]].tolist()))
            nxt.append(f)
        if not nxt:
            break
        frontier = nxt
    return paths


def reachable(game: Game) -> list[Plan]:
    """One plan for every placement the player on turn can end this turn with from here (dice known).

    In the reroll phase, circle sets come first (in ``SETS`` order), then crossed rows; a cross-out
    is reachable when some reachable final dice can circle nothing. In the circle phase: the sets
    of cells beyond the shelf as it stands that the unspent dice can circle with the circles left,
    then :data:`STAY` after a circle; in the cross phase: the rows to cross.
    """
    p = game.current
    free = FULL & ~(game.circled[p] | game.crossed[p])
    if game.phase == CIRCLE:
        final = tuple(counts_of(game.dice))
        ok = feasible_matrix(np.array([game.counts]))[0] & ((SET_MASKS & ~free) == 0)
        ok &= SET_SIZES <= MAX_CIRCLES - game.circles
        plans = [Plan((), final, int(s)) for s in np.flatnonzero(ok)]
        return plans + [Plan((), final, STAY)] if game.circles else plans
    if game.phase == CROSS:
        final = tuple(counts_of(game.dice))
        return [Plan((), final, NUM_SETS + a - CROSS_BASE) for a in game.legal_actions()]
    paths = final_dice(game)
    finals = list(paths)
    index = np.array(finals, dtype=np.int64)
    sel = np.flatnonzero((SET_MASKS & ~free) == 0)
    feas = FEASIBLE[index][:, sel]  # (finals, sets within free)
    plans: list[Plan] = []
    can = feas.any(axis=0)
    first = feas.argmax(axis=0)
    for j in np.flatnonzero(can):
        f = finals[int(first[j])]
        plans.append(Plan(paths[f], _counts(f), int(sel[j])))
    stuck = np.flatnonzero(~feas.any(axis=1))
    if stuck.size:
        f = finals[int(stuck[0])]
        for r in range(5):
            if free >> (5 * r) & 31:
                plans.append(Plan(paths[f], _counts(f), NUM_SETS + r))
    return plans


def plan_action(game: Game, plan: Plan, start: Game) -> int:
    """The legal action that follows ``plan`` in ``game``, a position of the turn that began at ``start``.

    ``start`` is the position the plan was made in (its reroll decisions are counted from there).
    ``ValueError`` if the game has left the plan (other dice than planned, or a move off it).
    """
    p = game.current
    if game.phase == REROLL:
        step = start.rolls_left - game.rolls_left
        if step >= len(plan.keeps):
            return _checked(game, STOP, plan)
        keep = plan.keeps[step]
        if sum(keep) == NUM_DICE:
            return _checked(game, STOP, plan)
        have = counts_of(game.dice)
        for a in game.legal_actions():
            if a == STOP:
                continue
            kept = list(have)
            for i, d in enumerate(game.dice):
                if a >> i & 1:
                    kept[d] -= 1
            if tuple(kept) == keep:
                return a
        raise ValueError(f"no reroll keeps {keep} of dice {game.dice}: the game left the plan")
    if game.phase == CROSS:
        if plan.placement < NUM_SETS:
            raise ValueError("a cross phase in a plan that does not cross: the game left the plan")
        return CROSS_BASE + plan.placement - NUM_SETS
    if game.phase == CIRCLE:
        if counts_of(game.dice) != plan.final:
            raise ValueError(f"final dice {game.dice} are not the planned {plan.final}")
        done = game.circled[p] & ~start.circled[p]
        left = tuple((r, c) for r, c in plan.cells if not done >> (5 * r + c) & 1)
        if not left:
            return _checked(game, END_TURN, plan)
        return first_step(game.counts, left, game.legal_actions())
    raise ValueError("no action: the game is over")


def _checked(game: Game, action: int, plan: Plan) -> int:
    if action not in game.legal_actions():
        raise ValueError(f"the plan {plan} asks for an illegal action {action}")
    return action


def turn_start(game: Game) -> Game:
    """The position at the first decision of ``game``'s turn as the tape deals it: the turn's first
    roll, two rerolls left, on the shelves as they stand (the turn's own until its first circle)."""
    state = game.to_dict()
    first = tape_of(game).faces(game.current, game.round)[0]
    state.update(
        phase="reroll",
        dice=sorted(int(f) for f in first),
        spent=[False] * NUM_DICE,
        rolls_left=ROLLS_PER_TURN,
        circles_this_turn=0,
    )
    return Game.from_dict(state)


def position_of(game: Game) -> tuple[Any, ...]:
    """Everything a decision of the player on turn can depend on: the state dict's fields, the dice tape's seed."""
    seed = game.rng.seed if isinstance(game.rng, DiceTape) else None
    return (
        seed,
        game.round,
        game.current,
        tuple(game.circled),
        tuple(game.crossed),
        game.end_triggered,
        game.table.points,
        game.phase,
        tuple(game.dice),
        tuple(game.spent),
        game.rolls_left,
        game.circles,
    )


def on_plan(start: Game, plan: Plan, game: Game) -> bool:
    """Whether following ``plan`` from ``start`` passes through ``game``'s position before its first circle."""
    target = position_of(game)
    g = start.clone()
    p, turn = g.current, g.round
    while position_of(g) != target:
        if g.over or g.current != p or g.round != turn or g.circles:
            return False
        g.step(plan_action(g, plan, start))
    return True


def play_plan(game: Game, plan: Plan) -> None:
    """Play ``plan`` on ``game`` (changed in place) to the end of the current player's turn."""
    start = game.clone()
    p, turn = game.current, game.round
    while not game.over and game.current == p and game.round == turn:
        game.step(plan_action(game, plan, start))


__all__ = [
    "STAY",
    "Plan",
    "final_dice",
    "on_plan",
    "plan_action",
    "play_plan",
    "position_of",
    "reachable",
    "tape_of",
    "turn_start",
]
