"""Numba kernels of the solo solver: one turn's exact expectimax for every board of a layer.

A board is five row states (:mod:`.boards`). For a board, every set of cells one roll could
circle (:data:`~shelfie_env.bots.planner.placements.SETS`) and every row it could cross out is
valued by the table (or by the final score when the turn closes a second row); the 462 final
dice multisets take the best set they can circle (the best cross-out when they circle nothing);
then two rerolls are solved exactly over the kept multisets, one die at a time:
``E[keep] = mean over faces f of E[keep + f]``.
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit, prange
except ImportError as exc:  # the table and the bot work without numba; the solver does not
    raise ImportError("the solo solver needs numba: pip install 'shelfie-env[fast]'") from exc

OPEN = 31
CLOSED_BASE = 31
FULL_ROW = 62
NEG = -1e300


@njit(cache=True, inline="always")
def _popcount5(x: int) -> int:
    return (x & 1) + (x >> 1 & 1) + (x >> 2 & 1) + (x >> 3 & 1) + (x >> 4 & 1)


@njit(cache=True)
def board_index(st: np.ndarray, symmetric: bool, binom: np.ndarray) -> int:
    """Table index of five row states with at most one closed row (:func:`.boards.board_index`)."""
    if symmetric:
        a = st.copy()
        for i in range(1, 5):  # insertion sort: a closed row ends last
            v = a[i]
            j = i - 1
            while j >= 0 and a[j] > v:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = v
        if a[4] >= CLOSED_BASE:
            r = 0
            for i in range(4):
                r += binom[a[i] + i, i + 1]
            return 324632 + (a[4] - CLOSED_BASE) * 46376 + r
        r = 0
        for i in range(5):
            r += binom[a[i] + i, i + 1]
        return r
    closed = -1
    for i in range(5):
        if st[i] >= CLOSED_BASE:
            closed = i
    if closed < 0:
        r = 0
        p = 1
        for i in range(5):
            r += st[i] * p
            p *= OPEN
        return r
    r = 0
    p = 1
    for i in range(5):
        if i != closed:
            r += st[i] * p
            p *= OPEN
    return 28629151 + (closed * 32 + st[closed] - CLOSED_BASE) * 923521 + r


@njit(cache=True)
def unrank_full(index: int, out: np.ndarray) -> None:
    """Row states of board ``index`` in the table without symmetry."""
    if index < 28629151:
        for i in range(5):
            out[i] = index % OPEN
            index //= OPEN
        return
    index -= 28629151
    block = index // 923521
    rest = index % 923521
    closed = block // 32
    for i in range(5):
        if i == closed:
            out[i] = CLOSED_BASE + block % 32
        else:
            out[i] = rest % OPEN
            rest //= OPEN


@njit(cache=True)
def board_filled(st: np.ndarray) -> int:
    """Cells circled or crossed."""
    n = 0
    for i in range(5):
        n += 5 if st[i] >= CLOSED_BASE else _popcount5(st[i])
    return n


@njit(cache=True)
def shelf_score(rows: np.ndarray, row_score: np.ndarray, col_score: np.ndarray) -> float:
    """Score of a shelf given by its five circled row masks."""
    s = 0
    for r in range(5):
        s += row_score[r, rows[r]]
    for c in range(5):
        bits = 0
        for r in range(5):
            bits |= (rows[r] >> c & 1) << r
        s += col_score[c, bits]
    return float(s)


@njit(cache=True, inline="always")
def _closed_rows(st: np.ndarray, circ: np.ndarray) -> int:
    """Rows of ``st`` without a free cell; the circled mask of every row into ``circ``."""
    closed = 0
    for r in range(5):
        if st[r] >= CLOSED_BASE:
            closed += 1
            circ[r] = st[r] - CLOSED_BASE
        else:
            circ[r] = st[r]
    return closed


@njit(cache=True)
def _after_value(
    st: np.ndarray,
    values: np.ndarray,
    symmetric: bool,
    binom: np.ndarray,
    row_score: np.ndarray,
    col_score: np.ndarray,
    circ: np.ndarray,
) -> float:
    """Value of the board ``st`` at the end of a turn: the score when two rows are closed, else the table."""
    if _closed_rows(st, circ) >= 2:
        return shelf_score(circ, row_score, col_score)
    return values[board_index(st, symmetric, binom)]


@njit(cache=True)
def _placements(
    st: np.ndarray,
    values: np.ndarray,
    symmetric: bool,
    tabs: tuple,  # type: ignore[type-arg]
    val: np.ndarray,
    w: np.ndarray,
    nst: np.ndarray,
    circ: np.ndarray,
) -> int:
    """Value every set of cells one roll could circle (``val``, ``NEG`` where not free) and every final
    multiset's best placement (``w``: the best set it can circle, else the best cross-out); returns the
    best row to cross out."""
    binom, row_score, col_score, set_rows, set_masks, feas_ptr, feas_idx = tabs[:7]
    free = 0
    for r in range(5):
        if st[r] < CLOSED_BASE:
            free |= (31 & ~st[r]) << (5 * r)
    for t in range(set_masks.shape[0]):
        if set_masks[t] & ~free:
            val[t] = NEG
            continue
        for r in range(5):
            b = set_rows[t, r]
            ns = st[r] | b
            nst[r] = FULL_ROW if (b != 0 and ns == 31) else ns
        val[t] = _after_value(nst, values, symmetric, binom, row_score, col_score, circ)
    cross_best = NEG
    cross_row = -1
    for r in range(5):
        if st[r] < CLOSED_BASE:
            for q in range(5):
                nst[q] = st[q]
            nst[r] = CLOSED_BASE + st[r]
            x = _after_value(nst, values, symmetric, binom, row_score, col_score, circ)
            if x > cross_best:
                cross_best = x
                cross_row = r
    for d in range(feas_ptr.shape[0] - 1):
        m = NEG
        for k in range(feas_ptr[d], feas_ptr[d + 1]):
            x = val[feas_idx[k]]
            if x > m:
                m = x
        w[d] = cross_best if m == NEG else m
    return cross_row


@njit(cache=True)
def _with_a_roll(
    v: np.ndarray, w: np.ndarray, ek: np.ndarray, best: np.ndarray, out: np.ndarray, tabs: tuple
) -> None:  # type: ignore[type-arg]
    """``ek``: every keep's value when the dice not kept are rolled and then worth ``v``; ``out``: each final
    multiset's value with that roll still to come (the best of stopping, ``w``, and every keep within it)."""
    child, parent, keep_of_final = tabs[7], tabs[8], tabs[9]
    _keep_values(v, ek, child, keep_of_final)
    for k in range(ek.shape[0]):  # best[k]: the largest ek over the sub-multisets of keep k (sizes ascending)
        best[k] = _above_parents(k, ek[k], best, parent)
    for d in range(keep_of_final.shape[0]):
        out[d] = _above_parents(keep_of_final[d], w[d], best, parent)


@njit(cache=True, inline="always")
def _above_parents(k: int, m: float, best: np.ndarray, parent: np.ndarray) -> float:
    """``m``, or the largest ``best`` of the keeps one die smaller than keep ``k`` when that is larger."""
    for f in range(6):
        p = parent[k, f]
        if p >= 0 and best[p] > m:
            m = best[p]
    return m


@njit(cache=True)
def turn_value(
    st: np.ndarray,
    values: np.ndarray,
    symmetric: bool,
    tabs: tuple,  # type: ignore[type-arg]
    scratch: tuple,  # type: ignore[type-arg]
) -> float:
    """Expected final score from the start of a turn on board ``st`` under optimal play."""
    val, w, ek, best, v, nst, circ = scratch
    _placements(st, values, symmetric, tabs, val, w, nst, circ)
    _with_a_roll(w, w, ek, best, v, tabs)  # one roll left
    _with_a_roll(v, w, ek, best, v, tabs)  # two rolls left
    _keep_values(v, ek, tabs[7], tabs[9])
    return ek[0]


@njit(cache=True)
def _keep_values(v: np.ndarray, ek: np.ndarray, child: np.ndarray, keep_of_final: np.ndarray) -> None:
    """``ek[keep]``: expected ``v`` of the final multiset after rolling the dice not kept."""
    for d in range(keep_of_final.shape[0]):
        ek[keep_of_final[d]] = v[d]
    for k in range(child.shape[0] - 1, -1, -1):  # keeps are ordered by size, so children come first
        if child[k, 0] < 0:
            continue
        s = 0.0
        for f in range(6):
            s += ek[child[k, f]]
        ek[k] = s / 6.0


@njit(cache=True, parallel=True)
def solve_layer(
    layer: int,
    states: np.ndarray,
    n_boards: int,
    values: np.ndarray,
    symmetric: bool,
    tabs: tuple,  # type: ignore[type-arg]
    n_chunks: int,
) -> int:
    """Fill ``values`` for every board with ``layer`` filled cells; returns how many there were.

    ``states`` holds the boards' row states (symmetric table) or is empty (states unranked from
    the index).
    """
    n_sets = tabs[4].shape[0]
    n_final = tabs[5].shape[0] - 1
    n_keep = tabs[7].shape[0]
    size = (n_boards + n_chunks - 1) // n_chunks
    counts = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        scratch = (
            np.empty(n_sets),
            np.empty(n_final),
            np.empty(n_keep),
            np.empty(n_keep),
            np.empty(n_final),
            np.empty(5, dtype=np.int64),
            np.empty(5, dtype=np.int64),
        )
        st = np.empty(5, dtype=np.int64)
        lo = c * size
        hi = min(n_boards, lo + size)
        for i in range(lo, hi):
            if symmetric:
                for r in range(5):
                    st[r] = states[i, r]
            else:
                unrank_full(i, st)
            if board_filled(st) != layer:
                continue
            values[i] = turn_value(st, values, symmetric, tabs, scratch)
            counts[c] += 1
    return counts.sum()


# --------------------------------------------------------------------------- optimal play, game by game
@njit(cache=True)
def _code(counts: np.ndarray) -> int:
    c = 0
    for f in range(6):
        c = c * 7 + counts[f]
    return c


@njit(cache=True)
def _best_keep(dice: np.ndarray, ek: np.ndarray, keep_code: np.ndarray, kept: np.ndarray) -> float:
    """The best proper sub-multiset of ``dice`` by ``ek``, written to ``kept``; returns its value."""
    best = NEG
    sub = np.zeros(6, dtype=np.int64)
    total = 1
    for f in range(6):
        total *= dice[f] + 1
    for n in range(total - 1):  # the last combination is every die: stopping, not a reroll
        x = n
        for f in range(5, -1, -1):
            sub[f] = x % (dice[f] + 1)
            x //= dice[f] + 1
        v = ek[keep_code[_code(sub)]]
        if v > best:
            best = v
            for f in range(6):
                kept[f] = sub[f]
    return best


@njit(cache=True)
def play_games(
    n_games: int,
    seed: int,
    values: np.ndarray,
    symmetric: bool,
    tabs: tuple,  # type: ignore[type-arg]
    final_code: np.ndarray,
    keep_code: np.ndarray,
    out: np.ndarray,
) -> None:
    """Play ``n_games`` solo games optimally against the table on dice from ``seed``; scores into ``out``.

    Each turn: the placements are valued (the best set a roll can circle, else the best cross-out),
    the rerolls by the same backward pass as :func:`turn_value`; every choice takes the option of
    highest value (stopping on a tie).
    """
    binom, row_score, col_score, set_rows, set_masks, feas_ptr, feas_idx, child, parent, keep_of_final = tabs
    np.random.seed(seed)
    n_sets = set_masks.shape[0]
    n_final = feas_ptr.shape[0] - 1
    n_keep = child.shape[0]
    val = np.empty(n_sets)
    w = np.empty(n_final)
    v1 = np.empty(n_final)
    ek1 = np.empty(n_keep)
    ek2 = np.empty(n_keep)
    best = np.empty(n_keep)
    nst = np.empty(5, dtype=np.int64)
    circ = np.empty(5, dtype=np.int64)
    st = np.empty(5, dtype=np.int64)
    dice = np.empty(6, dtype=np.int64)
    kept = np.empty(6, dtype=np.int64)
    for g in range(n_games):
        for r in range(5):
            st[r] = 0
        while True:
            # values of the turn's placements and keeps from this board
            cross_row = _placements(st, values, symmetric, tabs, val, w, nst, circ)
            _with_a_roll(w, w, ek1, best, v1, tabs)
            _keep_values(v1, ek2, child, keep_of_final)
            # the turn: roll, up to two rerolls, then place
            for f in range(6):
                dice[f] = 0
            for _i in range(6):
                dice[np.random.randint(0, 6)] += 1
            for ek in (ek2, ek1):
                stop = w[final_code[_code(dice)]]
                if _best_keep(dice, ek, keep_code, kept) <= stop:
                    break
                rolled = 6
                for f in range(6):
                    dice[f] = kept[f]
                    rolled -= kept[f]
                for _i in range(rolled):
                    dice[np.random.randint(0, 6)] += 1
            d = final_code[_code(dice)]
            pick = -1
            m = NEG
            for k in range(feas_ptr[d], feas_ptr[d + 1]):
                if val[feas_idx[k]] > m:
                    m = val[feas_idx[k]]
                    pick = feas_idx[k]
            if pick >= 0:
                for r in range(5):
                    if set_rows[pick, r] != 0:
                        ns = st[r] | set_rows[pick, r]
                        st[r] = FULL_ROW if ns == 31 else ns
            else:
                st[cross_row] = CLOSED_BASE + st[cross_row]
            if _closed_rows(st, circ) >= 2:
                out[g] = shelf_score(circ, row_score, col_score)
                break
