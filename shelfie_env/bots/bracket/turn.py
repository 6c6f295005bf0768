"""One turn played with its dice known: every position it can end in, and the moves that get there.

On a :class:`~shelfie_env.game.dice.DiceTape` a reroll of ``m`` dice at roll
``r`` of a turn gets the tape's first ``m`` faces of that roll, so what a
reroll brings depends only on the dice it keeps. From the turn's first roll,
:func:`reachable` lists every final dice multiset the player can end on (keep
any sub-multiset, twice; keeping all six is stopping) and, with
:data:`~shelfie_env.bots.planner.placements.FEASIBLE`, every placement (circle
set or crossed row) the turn can end with, each with a :class:`Plan` that
reaches it. :func:`plan_action` turns a plan into the legal action of the
moment. Numpy only; nothing here is random.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.planner.dice import FINAL, KEEP, PAD, SUB_KEEPS, counts_of
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS, SETS, first_step
from shelfie_env.game.actions import CROSS_BASE, END_TURN, NUM_DICE, STOP
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import CIRCLE, CROSS, REROLL, ROLLS_PER_TURN, Game
from shelfie_env.game.scoring import FULL

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
    stop); ``placement`` indexes ``NUM_SET_VALUES`` (a set of ``SETS``, or ``NUM_SETS + row`` to cross).
    """

    keeps: tuple[tuple[int, ...], ...]
    final: tuple[int, ...]
    placement: int

    @property
    def cells(self) -> tuple[tuple[int, int], ...]:
        """The cells the plan circles (empty for a cross-out)."""
        return SETS[self.placement] if self.placement < NUM_SETS else ()


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
    """One plan for every placement the player on turn can end this turn with (reroll phase, dice known).

    Circle sets come first (in ``SETS`` order), then crossed rows; a cross-out is reachable when some
    reachable final dice can circle nothing.
    """
    p = game.current
    free = FULL & ~(game.circled[p] | game.crossed[p])
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
            raise ValueError("a cross phase in a plan that circles: the game left the plan")
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


def play_plan(game: Game, plan: Plan) -> None:
    """Play ``plan`` on ``game`` (changed in place) to the end of the current player's turn."""
    start = game.clone()
    p, turn = game.current, game.round
    while not game.over and game.current == p and game.round == turn:
        game.step(plan_action(game, plan, start))


__all__ = ["Plan", "final_dice", "plan_action", "play_plan", "reachable", "tape_of"]
