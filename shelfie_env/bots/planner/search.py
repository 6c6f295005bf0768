"""Exact expectimax over the rolls, and the circle/cross choice.

For the player on turn, ``V0[m]`` is the value (:mod:`.evaluation`) of the
best placement with final dice ``m``: the best feasible set of 1..3 free
cells (jokers used exactly, :mod:`.placements`), or, when nothing can be
circled, the best row to cross out. Then, exactly over the dice outcomes
(:mod:`.dice`):

* one roll left: keep ``k`` is worth ``EV1[k] = sum_m P(m | k) V0[m]``;
* two rolls left: ``V1[m] = max over keeps k within m of EV1[k]`` (keeping
  everything = stopping), and keep ``k`` is worth ``sum_m P(m | k) V1[m]``.

In the circle phase the ``deep`` (solo: ``solo_deep``) best sets are then re-valued by playing our
next turn exactly as well (fresh roll, two rerolls, best placement; the
rivals' turn in between is skipped): :func:`next_turn_value`.

Every legal action gets a value; the bot plays the best one (ties go to the
bigger circle first, then the lowest action id, so the bot is deterministic).
"""

from __future__ import annotations

import numpy as np

from shelfie_env.bots.planner.dice import (
    FINAL_INDEX,
    KEEP_INDEX,
    TRANSITION,
    best_keep_value,
    counts_of,
    expected_after_roll,
    keep_index_of_reroll,
)
from shelfie_env.bots.planner.evaluation import Context, Weights
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS, SET_SIZES, SETS, feasible_matrix
from shelfie_env.game.actions import CIRCLE_BASE, CROSS_BASE, END_TURN, JOKER, NUM_DICE, STOP
from shelfie_env.game.engine import CIRCLE, CROSS, MAX_CIRCLES, REROLL, Game, full_rows, placed_shelves
from shelfie_env.game.scoring import FULL


def _free_placements(ctx: Context) -> tuple[np.ndarray, list[int]]:
    """Indices of the sets within the player's free cells, and the rows it may cross out."""
    sel = np.flatnonzero((SET_MASKS & ~ctx.free) == 0)
    return sel, [r for r in range(5) if ctx.free >> (5 * r) & 31]


def placement_values(ctx: Context, with_choice: bool = False):  # type: ignore[no-untyped-def]
    """``V0``: value of the best placement for each of the 462 final dice multisets.

    With ``with_choice`` also return, per multiset, the mask of the best set of
    cells to circle (0 when nothing can be circled and a row must be crossed).
    """
    sel, rows = _free_placements(ctx)
    cross_best = float(ctx.evaluate_crosses(rows).max()) if rows else -np.inf
    if sel.size == 0:
        v0 = np.full(len(FINAL_INDEX), cross_best)
        return (v0, np.zeros(len(v0), dtype=np.int64)) if with_choice else v0
    values = ctx.evaluate_circles(SET_MASKS[sel])
    feas = FEASIBLE[:, sel]
    masked = np.where(feas, values[None, :], -np.inf)
    none = ~feas.any(axis=1)
    if with_choice:
        arg = masked.argmax(axis=1)
        v0 = masked[np.arange(len(arg)), arg]
        choice = np.where(none, 0, SET_MASKS[sel][arg])
    else:
        v0 = masked.max(axis=1)
    v0[none] = cross_best
    return (v0, choice) if with_choice else v0


def set_values(ctx: Context) -> np.ndarray:
    """The evaluation of every placement the turn can end with, as ``(len(SETS) + 5,)`` float32.

    Entry ``s < len(SETS)`` is the value of circling set ``SETS[s]``, entry
    ``len(SETS) + r`` that of crossing out row ``r``; NaN where the set is not
    within the free cells or the row has none. :func:`placement_values` is the
    masked max of these over what each final multiset can circle (teacher
    targets for the expectimax policy head, :mod:`shelfie_env.bots.learned.expect_head`).
    """
    out = np.full(len(SET_MASKS) + 5, np.nan, dtype=np.float32)
    sel, rows = _free_placements(ctx)
    if sel.size:
        out[sel] = ctx.evaluate_circles(SET_MASKS[sel])
    if rows:
        out[len(SET_MASKS) + np.array(rows)] = ctx.evaluate_crosses(rows)
    return out


def reroll_values(game: Game, ctx: Context) -> dict[int, float]:
    """Expected value of stopping and of every legal reroll (exact over the outcomes)."""
    cache = ctx.cache
    if "v0" not in cache:
        cache["v0"] = placement_values(ctx)
    v0 = cache["v0"]
    key = ("keeps", game.rolls_left)
    if key not in cache:
        keep_values = expected_after_roll(v0)
        if game.rolls_left >= 2:
            keep_values = expected_after_roll(best_keep_value(keep_values))
        cache[key] = keep_values
    keep_values = cache[key]
    dice = game.dice
    out = {}
    for a in game.legal_actions():
        if a == STOP:
            out[a] = float(v0[FINAL_INDEX[counts_of(dice)]])
        else:
            out[a] = float(keep_values[keep_index_of_reroll(dice, a)])
    return out


def _continuations(ctx: Context, base: int, free: int, counts: list[int], room: int) -> np.ndarray:
    """Circled-this-turn sets reachable after ``base``: ``base`` plus any feasible set in ``free``."""
    options = [np.array([base], dtype=np.int64)]
    if room > 0 and sum(counts) > 0:
        ok = feasible_matrix(np.array([counts]))[0]
        ok &= SET_SIZES <= room
        ok &= (SET_MASKS & ~free) == 0
        options.append(base | SET_MASKS[ok])
    return np.concatenate(options)


def best_continuation(ctx: Context, base: int, counts: list[int], room: int) -> tuple[float, int]:
    """Best (value, set) after circling ``base`` (cells beyond ``ctx.circled``), with
    ``counts`` unspent dice and ``room`` circles left; the set includes ``base``."""
    sets = _continuations(ctx, base, ctx.free & ~base, counts, room)
    values = ctx.evaluate_circles(sets)
    i = int(values.argmax())
    return float(values[i]), int(sets[i])


def circle_outcome(game: Game, action: int) -> tuple[list[int], int]:
    """Unspent dice counts after circle ``action``, and the circled cell's bit."""
    k = action - CIRCLE_BASE
    cell, joker = k >> 1, k & 1
    row, col = divmod(cell, 5)
    counts = list(game.counts)
    if counts[JOKER] == NUM_DICE:
        return [0] * 6, 1 << cell
    counts[row] -= col + 1 - joker
    counts[JOKER] -= joker
    return counts, 1 << cell


def circle_values(game: Game, ctx: Context) -> dict[int, float]:
    """Value of every legal circle-phase action (circle now, then the best rest; or end turn).

    ``ctx`` may be the context of the turn's start: the cells circled earlier in
    the turn are then part of every evaluated set.
    """
    done = game.circled[ctx.player] & ~ctx.circled  # circled earlier this turn
    room = MAX_CIRCLES - game.circles - 1
    actions, groups = [], []
    for a in game.legal_actions():
        actions.append(a)
        if a == END_TURN:
            groups.append(np.array([done], dtype=np.int64))
            continue
        rest, bit = circle_outcome(game, a)
        groups.append(_continuations(ctx, done | bit, ctx.free & ~(done | bit), rest, room))
    sets = np.concatenate(groups)
    values = ctx.evaluate_circles(sets)
    deep = ctx.weights.deep if ctx.rivals else ctx.weights.solo_deep
    if deep > 0:
        values = _deepen(ctx, sets, values, deep)
    out, i = {}, 0
    for a, g in zip(actions, groups):
        out[a] = float(values[i : i + len(g)].max())
        i += len(g)
    return out


_FRESH_KEEP = KEEP_INDEX[(0,) * 6]


def next_turn_value(ctx: Context, cells: int) -> float | None:
    """Expected value after circling ``cells`` this turn and playing our next turn exactly.

    The rivals' turns in between are skipped (their shelves stay as they are).
    ``None`` when the placement triggers the end (then there is no next turn).
    """
    p, circled, crossed, _, _, _ = ctx.turn_start
    g = ctx.game.clone()
    g.circled, g.crossed = placed_shelves(circled, crossed, p, cells)
    if ctx.already_triggered or any(
        full_rows(g.circled[q] | g.crossed[q]) >= 2 for q in range(g.num_players)
    ):
        return None
    if FULL & ~(g.circled[p] | g.crossed[p]) == 0:
        return None
    g.current, g.phase, g.rolls_left, g.circles, g.end_triggered = p, REROLL, 2, 0, False
    nxt = Context(g, ctx.weights)
    v0 = placement_values(nxt)
    v2 = best_keep_value(expected_after_roll(best_keep_value(expected_after_roll(v0))))
    return float(TRANSITION[_FRESH_KEEP] @ v2)


def _deepen(ctx: Context, sets: np.ndarray, values: np.ndarray, deep: int) -> np.ndarray:
    """Re-value the ``deep`` best distinct sets by :func:`next_turn_value`; rank the rest below them."""
    order = np.argsort(-values, kind="stable")
    chosen: dict[int, float] = {}
    for i in order:
        s = int(sets[i])
        if s in chosen:
            continue
        ahead = next_turn_value(ctx, s)
        chosen[s] = float(values[i]) if ahead is None else ahead
        if len(chosen) >= deep:
            break
    floor = min(chosen.values())
    out = np.minimum(values, floor - 1e-6)  # anything not re-valued ranks below
    for i, s in enumerate(sets.tolist()):
        if s in chosen:
            out[i] = chosen[s]
    return out


def cross_values(game: Game, ctx: Context) -> dict[int, float]:
    """Value of every legal cross-out."""
    rows = [a - CROSS_BASE for a in game.legal_actions()]
    vals = ctx.evaluate_crosses(rows)
    return {CROSS_BASE + r: float(v) for r, v in zip(rows, vals)}


def turn_context(game: Game, weights: Weights, previous: Context | None = None) -> Context:
    """A context for the player on turn, reusing ``previous`` when ``game`` continues its turn.

    For a caller that walks one game's positions in order: the shelves do not change while
    rerolling, and in the circle phase they differ from the turn's start only by this turn's
    circles (and the lockouts they caused), so the turn-start context evaluates the same final
    shelves. A state alone does not say which cells this turn circled, so positions of unrelated
    turns can pass the check (:meth:`.evaluation.Context.matches`); bots key their contexts by
    position instead (:class:`.evaluation.ContextCache`).
    """
    if previous is not None and previous.matches(game, weights):
        return previous
    return Context(game, weights)


def action_values(game: Game, weights: Weights | None = None, ctx: Context | None = None) -> dict[int, float]:
    """Value of every legal action of the player on turn (empty when the game is over)."""
    if game.over or not game.legal_actions():
        return {}
    ctx = ctx or Context(game, weights or Weights())
    if game.phase == REROLL:
        return reroll_values(game, ctx)
    if game.phase == CIRCLE:
        return circle_values(game, ctx)
    if game.phase == CROSS:
        return cross_values(game, ctx)
    return {}


def _tie_rank(action: int) -> tuple[int, int]:
    """Order among equal values: circles of bigger groups first, then the lowest id."""
    if CIRCLE_BASE <= action < END_TURN:
        return (-(((action - CIRCLE_BASE) >> 1) % 5), action)
    return (0, action)


def ranked_actions(values: dict[int, float]) -> list[int]:
    """Actions by value, best first; equal values (within 1e-9) ordered by :func:`_tie_rank`."""
    top = max(values.values())
    order = sorted(values, key=lambda a: (-values[a], _tie_rank(a)))
    # Values that differ only by rounding noise count as equal.
    tied = sorted((a for a in order if top - values[a] <= 1e-9), key=_tie_rank)
    return tied + [a for a in order if a not in tied]


def best_action(values: dict[int, float]) -> int:
    """Highest value; ties to bigger circles first, then the lowest id (deterministic)."""
    return ranked_actions(values)[0]


__all__ = [
    "SETS",
    "action_values",
    "best_action",
    "best_continuation",
    "circle_outcome",
    "placement_values",
    "ranked_actions",
    "set_values",
    "turn_context",
]
