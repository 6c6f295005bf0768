"""The ``greedy`` bot of :mod:`shelfie_env.bots.greedy.scalar`, compiled and applied to N games at once.

Same heuristic, same tables (the line potentials, the chase distributions and
the weights are read from the scalar module), same evaluation order, so it
picks exactly the scalar bot's action in every position (a test checks this on
many random positions). Used by the vector envs for ``"greedy"`` opponents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from shelfie_env.batched import _kernels as K
from shelfie_env.batched._kernels import (
    CIRC,
    COUNTS,
    CROSS,
    CUR,
    DICE,
    END,
    FULL,
    NCIRC,
    OVER,
    PHASE,
    ROLLS,
    WIDTH,
)
from shelfie_env.bots.greedy import scalar
from shelfie_env.game.scoring import ScoreTable

if TYPE_CHECKING:
    from shelfie_env.batched.engine import BatchedGame

_LINES = np.array([31 << (5 * r) for r in range(5)] + [0x108421 << c for c in range(5)], dtype=np.int64)
_TR = K._TRANSPOSE
_STACK = 512  # DFS stack capacity: at most 3 levels of <= 50 children are pending at once


def chase_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``chase_distribution(k, j, rolls)`` as arrays ``(ks, js, ps, lengths)`` indexed ``[k, j, rolls]``."""
    dists = {
        (k, j, r): scalar.chase_distribution(k, j, r) for k in range(7) for j in range(2) for r in range(3)
    }
    width = max(len(d) for d in dists.values())
    ks = np.zeros((7, 2, 3, width), dtype=np.int64)
    js = np.zeros((7, 2, 3, width), dtype=np.int64)
    ps = np.zeros((7, 2, 3, width), dtype=np.float64)
    lengths = np.zeros((7, 2, 3), dtype=np.int64)
    for (k, j, r), d in dists.items():
        lengths[k, j, r] = len(d)
        for x, (k2, j2, p) in enumerate(d):
            ks[k, j, r, x], js[k, j, r, x], ps[k, j, r, x] = k2, j2, p
    return ks, js, ps, lengths


def potential_tables(table: ScoreTable, solo: bool) -> tuple[np.ndarray, np.ndarray]:
    """The scalar bot's row and column potentials as ``(5, 32, 32)`` float64 arrays."""
    pot = scalar.potential_for(table, solo)
    return np.array(pot.rows, dtype=np.float64), np.array(pot.cols, dtype=np.float64)


@njit(cache=True)
def _transpose(mask):
    t = 0
    for r in range(5):
        t |= _TR[r, (mask >> (5 * r)) & 31]
    return t


@njit(cache=True)
def _pot_phi(circled, crossed, rows, cols):
    free = FULL & ~(circled | crossed)
    tc = _transpose(circled)
    tf = _transpose(free)
    v = rows[0, circled & 31, free & 31]
    for r in range(1, 5):
        v += rows[r, (circled >> (5 * r)) & 31, (free >> (5 * r)) & 31]
    for c in range(5):
        v += cols[c, (tc >> (5 * c)) & 31, (tf >> (5 * c)) & 31]
    return v


@njit(cache=True)
def _phi(circled, crossed, final, rows, cols, row_score, col_score):
    if final:
        return float(K._score(circled, row_score, col_score))
    return _pot_phi(circled, crossed, rows, cols)


@njit(cache=True)
def _value(S, i, n, me, circled, circled0, crossed, final, rows, cols, row_score, col_score, lock_weight):
    v = _phi(circled, crossed, final, rows, cols, row_score, col_score)
    if n > 1:
        new = 0
        for m in _LINES:
            if circled & m == m and circled0 & m != m:
                new |= m
        if new:
            gain = 0.0
            for q in range(n):
                if q != me:
                    c = S[i, CIRC + q]
                    x = S[i, CROSS + q]
                    if FULL & ~(c | x) & new:
                        gain += _phi(c, x, final, rows, cols, row_score, col_score) - _phi(
                            c, x | (new & ~c), final, rows, cols, row_score, col_score
                        )
            gain *= lock_weight
            v += gain
    return v


@njit(cache=True)
def _can_circle(col, k, j):
    return k >= col + 1 or (j > 0 and col >= 1 and k >= col)


@njit(cache=True)
def _best_circles(S, i, n, counts, circles, rows, cols, row_score, col_score, lock_weight):
    """(gain over the current shelf, first action) of the best set of circles."""
    me = S[i, CUR]
    circled0 = S[i, CIRC + me]
    crossed = S[i, CROSS + me]
    final = S[i, END] != 0
    base = _value(
        S, i, n, me, circled0, circled0, crossed, final, rows, cols, row_score, col_score, lock_weight
    )
    free0 = FULL & ~(circled0 | crossed)
    best_val = base if circles else -np.inf
    best_action = K.END_TURN
    if counts[5] == 6:
        for cell in range(25):
            if (free0 >> cell) & 1:
                v = _value(
                    S,
                    i,
                    n,
                    me,
                    circled0 | (1 << cell),
                    circled0,
                    crossed,
                    final,
                    rows,
                    cols,
                    row_score,
                    col_score,
                    lock_weight,
                )
                if v > best_val:
                    best_val = v
                    best_action = K.CIRCLE_BASE + 2 * cell + 1
        return best_val - base, best_action
    st_circ = np.empty(_STACK, dtype=np.int64)
    st_cnt = np.empty((_STACK, 6), dtype=np.int64)
    st_depth = np.empty(_STACK, dtype=np.int64)
    st_first = np.empty(_STACK, dtype=np.int64)
    seen = set()
    seen.add(np.int64(-1))
    top = 0
    st_circ[0] = circled0
    for f in range(6):
        st_cnt[0, f] = counts[f]
    st_depth[0] = 3 - circles
    st_first[0] = -1
    top = 1
    cnt = np.empty(6, dtype=np.int64)
    while top > 0:
        top -= 1
        circ = st_circ[top]
        for f in range(6):
            cnt[f] = st_cnt[top, f]
        depth = st_depth[top]
        first = st_first[top]
        if first >= 0:
            v = _value(
                S, i, n, me, circ, circled0, crossed, final, rows, cols, row_score, col_score, lock_weight
            )
            if v > best_val or (v == best_val and first < best_action):
                best_val = v
                best_action = first
        if depth == 0:
            continue
        free = FULL & ~(circ | crossed)
        jok = cnt[5]
        for r in range(5):
            row_free = (free >> (5 * r)) & 31
            if not row_free:
                continue
            k = cnt[r]
            for c in range(5):
                if not (row_free >> c) & 1:
                    continue
                cell = 5 * r + c
                for j in range(2):
                    if j == 0 and k < c + 1:
                        continue
                    if j == 1 and not (jok and c >= 1 and k >= c):
                        continue
                    nc = circ | (1 << cell)
                    key = np.int64(nc)
                    for f in range(6):
                        nf = cnt[f] - (c + 1 - j if f == r else 0) - (j if f == 5 else 0)
                        key |= np.int64(nf) << (25 + 3 * f)
                    if key in seen:
                        continue
                    seen.add(key)
                    if top >= _STACK:
                        raise RuntimeError("greedy circle search: stack overflow")
                    st_circ[top] = nc
                    for f in range(6):
                        st_cnt[top, f] = cnt[f]
                    st_cnt[top, r] -= c + 1 - j
                    st_cnt[top, 5] -= j
                    st_depth[top] = depth - 1
                    st_first[top] = first if first >= 0 else K.CIRCLE_BASE + 2 * cell + j
                    top += 1
    return best_val - base, best_action


@njit(cache=True)
def _best_cross(S, i, rows, cols):
    me = S[i, CUR]
    circled0 = S[i, CIRC + me]
    crossed = S[i, CROSS + me]
    free = FULL & ~(circled0 | crossed)
    best_v = 0.0
    best_a = -1
    for r in range(5):
        rm = 31 << (5 * r)
        if free & rm:
            loss_free = _pot_phi(circled0, crossed | (rm & ~circled0), rows, cols)
            v = loss_free - _pot_phi(circled0, crossed, rows, cols)
            if best_a < 0 or v > best_v:
                best_v = v
                best_a = K.CROSS_BASE + r
    return best_v, best_a


@njit(cache=True)
def _best_reroll(S, i, n, rows, cols, row_score, col_score, lock_weight, ch_k, ch_j, ch_p, ch_len):
    me = S[i, CUR]
    circled0 = S[i, CIRC + me]
    crossed = S[i, CROSS + me]
    final = S[i, END] != 0
    counts = np.empty(6, dtype=np.int64)
    for f in range(6):
        counts[f] = S[i, COUNTS + f]
    free = FULL & ~(circled0 | crossed)
    can = counts[5] == 6
    if not can:
        for r in range(5):
            for c in range(5):
                if (free >> (5 * r + c)) & 1 and _can_circle(c, counts[r], counts[5]):
                    can = True
    if can:
        now, _ = _best_circles(S, i, n, counts, 0, rows, cols, row_score, col_score, lock_weight)
    else:
        now, _ = _best_cross(S, i, rows, cols)
    base = _value(
        S, i, n, me, circled0, circled0, crossed, final, rows, cols, row_score, col_score, lock_weight
    )
    j_now = 1 if counts[5] else 0
    rolls = S[i, ROLLS]
    best_gain = now
    best_row = -1
    gains = np.empty(5, dtype=np.float64)
    for r in range(5):
        row_free = (free >> (5 * r)) & 31
        if not row_free:
            continue
        for c in range(5):
            if (row_free >> c) & 1:
                gains[c] = (
                    _value(
                        S,
                        i,
                        n,
                        me,
                        circled0 | (1 << (5 * r + c)),
                        circled0,
                        crossed,
                        final,
                        rows,
                        cols,
                        row_score,
                        col_score,
                        lock_weight,
                    )
                    - base
                )
        expect = 0.0
        k0 = counts[r]
        for x in range(ch_len[k0, j_now, rolls]):
            k = ch_k[k0, j_now, rolls, x]
            j = ch_j[k0, j_now, rolls, x]
            best_c = 0.0
            for c in range(5):
                if (row_free >> c) & 1 and gains[c] > best_c and _can_circle(c, k, j):
                    best_c = gains[c]
            expect += ch_p[k0, j_now, rolls, x] * best_c
        if expect > best_gain + 1e-9:
            best_gain = expect
            best_row = r
    if best_row < 0:
        return 0
    bits = 0
    kept_joker = False
    for x in range(6):
        face = S[i, DICE + x]
        if face == best_row:
            continue
        if face == 5 and not kept_joker:
            kept_joker = True
            continue
        bits |= 1 << x
    return bits


@njit(cache=True)
def greedy_action(S, i, n, rows, cols, row_score, col_score, lock_weight, ch_k, ch_j, ch_p, ch_len):
    """The greedy action of the player on turn in game ``i`` (-1 when it is over)."""
    phase = S[i, PHASE]
    if phase == K.REROLL:
        return _best_reroll(S, i, n, rows, cols, row_score, col_score, lock_weight, ch_k, ch_j, ch_p, ch_len)
    if phase == K.CIRCLE:
        counts = np.empty(6, dtype=np.int64)
        for f in range(6):
            counts[f] = S[i, COUNTS + f]
        _, a = _best_circles(S, i, n, counts, S[i, NCIRC], rows, cols, row_score, col_score, lock_weight)
        return a
    if phase == K.CROSS_PHASE:
        _, a = _best_cross(S, i, rows, cols)
        return a
    return -1


@njit(cache=True)
def greedy_actions(S, n, out, rows, cols, row_score, col_score, lock_weight, ch_k, ch_j, ch_p, ch_len):
    for i in range(S.shape[0]):
        out[i] = greedy_action(
            S, i, n, rows, cols, row_score, col_score, lock_weight, ch_k, ch_j, ch_p, ch_len
        )


@njit(cache=True)
def play_bots(
    S,
    M,
    seats,
    kinds,
    n,
    bot_rng,
    rng,
    faces,
    use_faces,
    row_score,
    col_score,
    code2ms,
    reroll_tab,
    rows,
    cols,
    lock_weight,
    ch_k,
    ch_j,
    ch_p,
    ch_len,
):
    """Play compiled bots until seat ``seats[i]`` is on turn, the game is over or an uncompiled bot must move.

    ``kinds[i, p]``: 0 random, 1 greedy, 2 another bot (play stops there).
    """
    for i in range(S.shape[0]):
        while S[i, PHASE] != OVER and S[i, CUR] != seats[i]:
            kind = kinds[i, S[i, CUR]]
            if kind == 0:
                count = 0
                for a in range(K.NUM_ACTIONS):
                    if M[i, a]:
                        count += 1
                k = K._uniform(bot_rng, i, count)
                act = -1
                for a in range(K.NUM_ACTIONS):
                    if M[i, a]:
                        if k == 0:
                            act = a
                            break
                        k -= 1
            elif kind == 1:
                act = greedy_action(
                    S, i, n, rows, cols, row_score, col_score, lock_weight, ch_k, ch_j, ch_p, ch_len
                )
            else:
                break
            if act < 0 or not M[i, act]:
                raise RuntimeError("compiled bot chose an illegal action")
            K._step_one(S, i, act, n, rng, faces, use_faces, row_score, col_score)
            K._fill_mask(S, M, i, code2ms, reroll_tab)


assert WIDTH == K.WIDTH
# play_bots inlines the engine's kernels (K._step_one) into this module's numba cache, which
# numba refreshes only when this file changes: edit this file too when batched/_kernels.py
# changes how a step updates the state (state layout version: 36 columns, with ROUND).


class BatchedGreedy:
    """The greedy heuristic's tables for one points table and player count, for :class:`BatchedGame`."""

    def __init__(self, table: ScoreTable, num_players: int) -> None:
        self.num_players = num_players
        self.rows, self.cols = potential_tables(table, num_players == 1)
        self.lock_weight = float(scalar.LOCKOUT_WEIGHT)
        self.chase = chase_tables()

    def actions(self, batch: BatchedGame, out: np.ndarray | None = None) -> np.ndarray:
        """The greedy action of the player on turn in every game (-1 where the game is over)."""
        if batch.num_players != self.num_players:
            raise ValueError(
                f"num_players: tables for {self.num_players} players, batch has {batch.num_players}"
            )
        if out is None:
            out = np.empty(batch.num_envs, dtype=np.int64)
        greedy_actions(
            batch.S,
            batch.num_players,
            out,
            self.rows,
            self.cols,
            batch.row_score,
            batch.col_score,
            self.lock_weight,
            *self.chase,
        )
        return out


RANDOM, GREEDY, OTHER = 0, 1, 2


def play_compiled_bots(
    batch: BatchedGame,
    seats: np.ndarray,
    kinds: np.ndarray,
    bot_rng: np.ndarray,
    greedy: BatchedGreedy,
) -> None:
    """Let compiled bots (``kinds[i, p]``: RANDOM or GREEDY) move until ``seats[i]`` is on turn.

    Stops in a game when it is over or an OTHER bot must move. One compiled call for all games.
    """
    from shelfie_env.batched.engine import CODE2MS, REROLL_TAB

    play_bots(
        batch.S,
        batch.M,
        np.ascontiguousarray(seats, dtype=np.int64),
        np.ascontiguousarray(kinds, dtype=np.int64),
        batch.num_players,
        bot_rng,
        batch.rng,
        batch._no_faces,
        False,
        batch.row_score,
        batch.col_score,
        CODE2MS,
        REROLL_TAB,
        greedy.rows,
        greedy.cols,
        greedy.lock_weight,
        *greedy.chase,
    )
