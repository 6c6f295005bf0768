"""The rules of :mod:`shelfie_env.game.engine` as branch-free array functions on :class:`State`.

Every function works on one game and is batched by ``jax.vmap``; the table size is the static
length of ``state.circled``. A decision (:func:`decide`) stops where the engine would throw dice
(a reroll, or the next seat's first roll), leaving a chance node that :func:`throw` resolves.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from shelfie_env.game.actions import CIRCLE_BASE, CROSS_BASE, END_TURN, JOKER, NUM_DICE
from shelfie_env.game.scoring import COL_MASKS, FULL, MIN_LINE, ROW_MASKS
from shelfie_env.jax_env.outcomes import COUNTS, DICE, NUM_OUTCOMES
from shelfie_env.jax_env.state import CIRCLE, CROSS, OVER, REROLL, State

MAX_CIRCLES = 3
ROLLS_PER_TURN = 2

_ROW = jnp.asarray(np.array(ROW_MASKS, dtype=np.int32))
_COLM = jnp.asarray(np.array(COL_MASKS, dtype=np.int32))
_SHIFT = jnp.arange(25, dtype=jnp.int32)
_COL = jnp.arange(5, dtype=jnp.int32)
# _BITS[a][i]: reroll id a (0..63) throws the die at sorted position i.
_BITS = jnp.asarray((np.arange(64)[:, None] >> np.arange(NUM_DICE)) & 1, dtype=jnp.bool_)


def cells(mask: jax.Array) -> jax.Array:
    """The 0/1 cells ``(..., 5, 5)`` of shelf masks ``(...)``."""
    return ((mask[..., None] >> _SHIFT) & 1).reshape(mask.shape + (5, 5))


def shelf_scores(circled: jax.Array, points: jax.Array) -> jax.Array:
    """The score of each shelf ``(n,)``: lines with 3+ circles score their circled cells."""
    c = cells(circled)
    pts = c * points
    rows = jnp.where(c.sum(-1) >= MIN_LINE, pts.sum(-1), 0).sum(-1)
    cols = jnp.where(c.sum(-2) >= MIN_LINE, pts.sum(-2), 0).sum(-1)
    return (rows + cols).astype(jnp.int32)


def rank_rewards(scores: jax.Array) -> jax.Array:
    """The env's rank reward of each seat: (rivals below - rivals above) / (n - 1); 0 in solo."""
    n = scores.shape[0]
    if n == 1:
        return jnp.zeros(1, dtype=jnp.float32)
    lower = jnp.sum(scores[None, :] < scores[:, None], axis=1)
    higher = jnp.sum(scores[None, :] > scores[:, None], axis=1)
    # a table, not a division: XLA's float32 division is not always correctly rounded
    table = jnp.asarray(np.array([k / (n - 1) for k in range(1 - n, n)], dtype=np.float32))
    return table[lower - higher + n - 1]


def illegal_rewards(n: int, offender: jax.Array) -> jax.Array:
    """Rewards when ``offender`` plays an illegal action: -1 for it, +1/(n-1) for each rival."""
    others = jnp.float32(1.0 / (n - 1)) if n > 1 else jnp.float32(0.0)
    return jnp.where(jnp.arange(n) == offender, jnp.float32(-1.0), others)


def _free(circled: jax.Array, crossed: jax.Array, p: jax.Array) -> jax.Array:
    return FULL & ~(circled[p] | crossed[p])


def circle_options(free: jax.Array, counts: jax.Array) -> jax.Array:
    """The legal circle ids 64..113 (as 50 flags) on a shelf with free cells ``free`` and unspent
    dice ``counts`` (6,)."""
    f = cells(free).astype(jnp.bool_)
    k = counts[:5, None]
    six = counts[JOKER] == NUM_DICE
    plain = f & (k >= _COL + 1) & ~six
    joker = jnp.where(six, f, f & (counts[JOKER] > 0) & (_COL >= 1) & (k >= _COL))
    return jnp.stack([plain, joker], axis=-1).reshape(50)


def legal_mask(state: State) -> jax.Array:
    """The engine's legal mask (bool, 120) of the seat on turn; all False at a chance node or the end."""
    p = state.current_player
    free = _free(state.circled, state.crossed, p)
    same = state.dice[:-1] == state.dice[1:]
    # canonical: a thrown die at i whose right neighbour shows the same face throws that one too
    reroll = ~jnp.any(_BITS[:, :-1] & ~_BITS[:, 1:] & same, axis=1)
    circle = circle_options(free, state.counts)
    cross = ((free >> (5 * _COL)) & 31) != 0
    phase = state.phase
    mask = jnp.concatenate(
        [
            reroll & (phase == REROLL),
            circle & (phase == CIRCLE),
            (state.circles > 0)[None] & (phase == CIRCLE),
            cross & (phase == CROSS),
        ]
    )
    return mask & ~state.is_chance & ~state.terminated


def _spend(dice: jax.Array, spent: jax.Array, face: jax.Array, count: jax.Array) -> jax.Array:
    """``spent`` with the first ``count`` unspent dice showing ``face`` marked spent."""
    open_ = (dice == face) & ~spent
    return spent | (open_ & (jnp.cumsum(open_) <= count))


def _end_turn(state: State) -> State:
    """The engine's end of turn: the next seat with a free cell throws, or the game ends."""
    n = state.circled.shape[0]
    filled = state.circled | state.crossed
    cur, rnd = state.current_player, state.round
    done = over = jnp.bool_(False)
    for _ in range(n):
        ends = ~done & state.end_triggered & (cur == n - 1)
        over, done = over | ends, done | ends
        nxt = (cur + 1) % n
        cur = jnp.where(done, cur, nxt)
        rnd = jnp.where(~done & (nxt == 0), rnd + 1, rnd)
        done = done | (filled[cur] != FULL)
    return state.replace(  # type: ignore[attr-defined]
        current_player=cur,
        round=rnd,
        phase=jnp.where(over, OVER, REROLL),
        terminated=over,
        rewards=jnp.where(over, rank_rewards(state.scores), state.rewards),
        is_chance=~over,
        kept=jnp.zeros_like(state.kept),
        spent=jnp.where(over, state.spent, False),
        rolls_left=jnp.where(over, state.rolls_left, ROLLS_PER_TURN),
        circles=jnp.where(over, state.circles, 0),
    )


def _select(cond: jax.Array, a: State, b: State) -> State:
    return jax.tree.map(lambda x, y: jnp.where(cond, x, y), a, b)


def _circled_effect(state: State, a: jax.Array) -> tuple[jax.Array, ...]:
    """Shelves, spent dice and counts after circle id ``a`` by the seat on turn (lockout included)."""
    n = state.circled.shape[0]
    p = state.current_player
    k = jnp.clip(a - CIRCLE_BASE, 0, 49)
    cell, joker = k >> 1, k & 1
    row, col = cell // 5, cell % 5
    six = state.counts[JOKER] == NUM_DICE
    need = col + 1 - joker
    spent = _spend(state.dice, state.spent, row, need)
    spent = _spend(state.dice, spent, JOKER, joker)
    spent = jnp.where(six, True, spent)
    counts = state.counts.at[row].add(-need).at[JOKER].add(-joker)
    counts = jnp.where(six, 0, counts)
    mine = state.circled[p] | (1 << cell)
    circled = state.circled.at[p].set(mine)
    lines = jnp.where(mine & _ROW[row] == _ROW[row], _ROW[row], 0) | jnp.where(
        mine & _COLM[col] == _COLM[col], _COLM[col], 0
    )
    crossed = jnp.where(jnp.arange(n) != p, state.crossed | (lines & ~circled), state.crossed)
    return circled, crossed, spent, counts


def decide(state: State, action: jax.Array) -> State:
    """The state after the seat on turn plays ``action``: the engine's step up to its next throw.

    An illegal action ends the game (``terminated``) with :func:`illegal_rewards`; a chance node or
    a finished game is returned unchanged with zero rewards.
    """
    n = state.circled.shape[0]
    a = jnp.asarray(action, dtype=jnp.int32)
    p = state.current_player
    phase = state.phase
    legal = state.legal_action_mask[jnp.clip(a, 0, 119)] & (a >= 0) & (a < 120)
    active = ~state.terminated & ~state.is_chance
    is_stop = (phase == REROLL) & (a == 0)
    is_reroll = (phase == REROLL) & (a >= 1) & (a < CIRCLE_BASE)
    is_circle = (phase == CIRCLE) & (a >= CIRCLE_BASE) & (a < END_TURN)
    is_cross = (phase == CROSS) & (a >= CROSS_BASE)

    circled_c, crossed_c, spent_c, counts_c = _circled_effect(state, a)
    r = jnp.clip(a - CROSS_BASE, 0, 4)
    crossed_x = state.crossed.at[p].set(state.crossed[p] | (_ROW[r] & ~state.circled[p]))
    circled = jnp.where(is_circle, circled_c, state.circled)
    crossed = jnp.where(is_circle, crossed_c, jnp.where(is_cross, crossed_x, state.crossed))
    counts = jnp.where(is_circle, counts_c, state.counts)
    circles = jnp.where(is_circle, state.circles + 1, state.circles)
    kept = jnp.sum(jax.nn.one_hot(state.dice, 6, dtype=jnp.int32) * ~_BITS[a & 63][:, None], axis=0)
    options = jnp.any(circle_options(_free(circled, crossed, p), counts))
    moved = state.replace(  # type: ignore[attr-defined]
        circled=circled,
        crossed=crossed,
        spent=jnp.where(is_circle, spent_c, state.spent),
        counts=counts,
        circles=circles,
        end_triggered=state.end_triggered | jnp.any(_full_rows(circled | crossed) >= 2),
        scores=shelf_scores(circled, state.points),
        phase=jnp.where(is_stop, jnp.where(options, CIRCLE, CROSS), phase),
        is_chance=is_reroll,
        kept=jnp.where(is_reroll, kept, 0),
        rolls_left=jnp.where(is_reroll, state.rolls_left - 1, state.rolls_left),
        rewards=jnp.zeros_like(state.rewards),
    )
    keeps_turn = is_stop | is_reroll | (is_circle & (circles < MAX_CIRCLES) & options)
    moved = _select(keeps_turn, moved, _end_turn(moved))
    moved = moved.replace(legal_action_mask=legal_mask(moved))  # type: ignore[attr-defined]
    refused = state.replace(  # type: ignore[attr-defined]
        terminated=jnp.bool_(True),
        rewards=illegal_rewards(n, p),
        legal_action_mask=jnp.zeros_like(state.legal_action_mask),
    )
    idle = state.replace(rewards=jnp.zeros_like(state.rewards))  # type: ignore[attr-defined]
    return _select(active, _select(legal, moved, refused), idle)


def _full_rows(filled: jax.Array) -> jax.Array:
    """Rows with no free cell of each shelf ``(n,)`` (``filled = circled | crossed``)."""
    return jnp.sum(((filled[..., None] >> (5 * _COL)) & 31) == 31, axis=-1)


def consistent(state: State, outcome: jax.Array) -> jax.Array:
    """Whether ``outcome`` can follow the chance node ``state``: it holds every kept die."""
    o = jnp.clip(outcome, 0, NUM_OUTCOMES - 1)
    inside = (outcome >= 0) & (outcome < NUM_OUTCOMES)
    return state.is_chance & ~state.terminated & inside & jnp.all(COUNTS[o] >= state.kept)


def throw(state: State, outcome: jax.Array) -> State:
    """The state after the chance node's dice come up as ``outcome`` (an index of :mod:`.outcomes`).

    After a turn's second reroll the circle (or cross) phase begins, as in the engine. An outcome
    that is not :func:`consistent` with the node (or a decision node) returns the state unchanged.
    """
    o = jnp.clip(jnp.asarray(outcome, dtype=jnp.int32), 0, NUM_OUTCOMES - 1)
    p = state.current_player
    counts = COUNTS[o]
    auto = (state.phase == REROLL) & (state.rolls_left == 0)
    options = jnp.any(circle_options(_free(state.circled, state.crossed, p), counts))
    thrown = state.replace(  # type: ignore[attr-defined]
        dice=DICE[o],
        counts=counts,
        spent=jnp.zeros_like(state.spent),
        is_chance=jnp.bool_(False),
        kept=jnp.zeros_like(state.kept),
        phase=jnp.where(auto, jnp.where(options, CIRCLE, CROSS), state.phase),
        rewards=jnp.zeros_like(state.rewards),
    )
    thrown = thrown.replace(legal_action_mask=legal_mask(thrown))  # type: ignore[attr-defined]
    return _select(consistent(state, jnp.asarray(outcome, dtype=jnp.int32)), thrown, state)
