"""Numba kernels of the batched engine (the rules of docs/rules.md over N games at once).

Every game is one row of an ``int32`` state array ``S`` of shape ``(N, WIDTH)``
(column constants below); legal masks live in a ``bool`` array ``M`` of shape
``(N, 120)`` kept up to date after every reset and step. The rules mirror
:mod:`shelfie_env.game.engine` line by line so the two stay equivalent (the
equivalence test drives both with the same actions and dice).

Dice come either from pre-drawn faces (``faces[i, j]``, ``use_faces=True``):
a reroll takes ``faces[i, 0..k-1]`` for its ``k`` rerolled dice and a new turn
takes ``faces[i, 0..5]`` (a step draws at most once per game), or from a
per-game splitmix64 stream ``rng[i]`` (``use_faces=False``).
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
except ImportError as exc:  # the core package works without numba; this subpackage does not
    raise ImportError("the batched engine needs numba: pip install 'shelfie-env[fast]'") from exc

# The rules' constants, plain module-level ints that numba freezes into the compiled kernels.
# The phase ``CROSS`` of the engine is ``CROSS_PHASE`` here (``CROSS`` is a column of S).
from shelfie_env.game.actions import CIRCLE_BASE, CROSS_BASE, END_TURN, NUM_ACTIONS
from shelfie_env.game.engine import CIRCLE, MAX_CIRCLES, OVER, REROLL, ROLLS_PER_TURN
from shelfie_env.game.engine import CROSS as CROSS_PHASE
from shelfie_env.game.scoring import FULL

# ---- column layout of the state array S (int32) ----
CIRC = 0  # circled mask of player p at CIRC + p (p < 4)
CROSS = 4  # crossed mask of player p at CROSS + p
DICE = 8  # sorted dice, 6 columns
SPENT = 14  # spent flags, 6 columns
COUNTS = 20  # unspent dice per face, 6 columns
CUR = 26  # player on turn
PHASE = 27  # 0 reroll, 1 circle, 2 cross, 3 over
ROLLS = 28  # rolls left
NCIRC = 29  # circles made this turn
END = 30  # end triggered (0/1)
SCORE = 31  # score of player p at SCORE + p
ROUND = 35  # round number (each seat's turn number, the dice tape's turn index)
WIDTH = 36

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)

# _TRANSPOSE[r, bits]: row r's bits moved to bit 5*c + r (rows and columns swapped).
_TRANSPOSE = np.array(
    [[sum(1 << (5 * c + r) for c in range(5) if bits >> c & 1) for bits in range(32)] for r in range(5)],
    dtype=np.int32,
)


@njit(cache=True, inline="always")
def _next_u32(rng, i):
    """Next 32 random bits of game ``i``'s splitmix64 stream."""
    x = rng[i] + _GOLDEN
    rng[i] = x
    z = (x ^ (x >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return z >> _S32


@njit(cache=True, inline="always")
def _uniform(rng, i, n):
    """A uniform integer in ``0..n-1`` from game ``i``'s stream."""
    return np.int64((_next_u32(rng, i) * np.uint64(n)) >> _S32)


@njit(cache=True, inline="always")
def _face(rng, faces, use_faces, i, j):
    if use_faces:
        return faces[i, j]
    return _uniform(rng, i, 6)


@njit(cache=True, inline="always")
def _score(circled, row_score, col_score):
    total = 0
    for r in range(5):
        total += row_score[r, (circled >> (5 * r)) & 31]
    t = 0
    for r in range(5):
        t |= _TRANSPOSE[r, (circled >> (5 * r)) & 31]
    for c in range(5):
        total += col_score[c, (t >> (5 * c)) & 31]
    return total


@njit(cache=True, inline="always")
def _has_circle(S, i, p):
    """Whether the player ``p`` can circle anything with game ``i``'s unspent dice."""
    free = FULL & ~(S[i, CIRC + p] | S[i, CROSS + p])
    jokers = S[i, COUNTS + 5]
    if jokers == 6:
        return free != 0
    for r in range(5):
        fr = (free >> (5 * r)) & 31
        if fr == 0:
            continue
        k = S[i, COUNTS + r]
        if fr & ((1 << min(k, 5)) - 1):
            return True
        if jokers > 0 and k >= 1 and fr & (((1 << min(k + 1, 5)) - 1) & ~1):
            return True
    return False


@njit(cache=True, inline="always")
def _fill_mask(S, M, i, code2ms, reroll_tab):
    for a in range(NUM_ACTIONS):
        M[i, a] = False
    phase = S[i, PHASE]
    if phase == REROLL:
        code = 0
        mul = 1
        for j in range(6):
            code += S[i, DICE + j] * mul
            mul *= 6
        ms = code2ms[code]
        for a in range(CIRCLE_BASE):  # the reroll-phase ids 0..63
            M[i, a] = reroll_tab[ms, a]
    elif phase == CIRCLE:
        p = S[i, CUR]
        free = FULL & ~(S[i, CIRC + p] | S[i, CROSS + p])
        jokers = S[i, COUNTS + 5]
        for r in range(5):
            k = S[i, COUNTS + r]
            for c in range(5):
                if not (free >> (5 * r + c)) & 1:
                    continue
                base = CIRCLE_BASE + 2 * (5 * r + c)
                if jokers == 6:
                    M[i, base + 1] = True
                else:
                    if k >= c + 1:
                        M[i, base] = True
                    if jokers > 0 and c >= 1 and k >= c:
                        M[i, base + 1] = True
        if S[i, NCIRC] > 0:
            M[i, END_TURN] = True
    elif phase == CROSS_PHASE:
        p = S[i, CUR]
        free = FULL & ~(S[i, CIRC + p] | S[i, CROSS + p])
        for r in range(5):
            if (free >> (5 * r)) & 31:
                M[i, CROSS_BASE + r] = True


@njit(cache=True, inline="always")
def _dice_from_counts(S, i):
    """Write the sorted dice from the face counts (all dice unspent)."""
    pos = 0
    for f in range(6):
        for _ in range(S[i, COUNTS + f]):
            S[i, DICE + pos] = f
            pos += 1


@njit(cache=True, inline="always")
def _start_turn(S, i, rng, faces, use_faces):
    for f in range(6):
        S[i, COUNTS + f] = 0
    for j in range(6):
        S[i, COUNTS + _face(rng, faces, use_faces, i, j)] += 1
        S[i, SPENT + j] = 0
    _dice_from_counts(S, i)
    S[i, ROLLS] = ROLLS_PER_TURN
    S[i, NCIRC] = 0
    S[i, PHASE] = REROLL


@njit(cache=True, inline="always")
def _start_circle_phase(S, i):
    S[i, PHASE] = CIRCLE
    if not _has_circle(S, i, S[i, CUR]):
        S[i, PHASE] = CROSS_PHASE


@njit(cache=True, inline="always")
def _check_end(S, i, n):
    if S[i, END]:
        return
    for q in range(n):
        filled = S[i, CIRC + q] | S[i, CROSS + q]
        rows = 0
        for r in range(5):
            if (filled >> (5 * r)) & 31 == 31:
                rows += 1
        if rows >= 2:
            S[i, END] = 1
            return


@njit(cache=True, inline="always")
def _end_turn(S, i, n, rng, faces, use_faces):
    while True:
        if S[i, END] and S[i, CUR] == n - 1:
            S[i, PHASE] = OVER
            return
        cur = (S[i, CUR] + 1) % n
        S[i, CUR] = cur
        if cur == 0:
            S[i, ROUND] += 1
        if (S[i, CIRC + cur] | S[i, CROSS + cur]) != FULL:
            break
    _start_turn(S, i, rng, faces, use_faces)


@njit(cache=True, inline="always")
def _spend(S, i, face, need):
    for j in range(6):
        if need == 0:
            return
        if S[i, DICE + j] == face and S[i, SPENT + j] == 0:
            S[i, SPENT + j] = 1
            need -= 1


@njit(cache=True, inline="always")
def _circle(S, i, a, n, rng, faces, use_faces, row_score, col_score):
    k = a - CIRCLE_BASE
    cell = k >> 1
    joker = k & 1
    row = cell // 5
    col = cell % 5
    p = S[i, CUR]
    if S[i, COUNTS + 5] == 6:
        for j in range(6):
            S[i, SPENT + j] = 1
            S[i, COUNTS + j] = 0
    else:
        need = col + 1 - joker
        _spend(S, i, row, need)
        S[i, COUNTS + row] -= need
        if joker:
            _spend(S, i, 5, 1)
            S[i, COUNTS + 5] -= 1
    circled = S[i, CIRC + p] | (1 << cell)
    S[i, CIRC + p] = circled
    S[i, SCORE + p] = _score(circled, row_score, col_score)
    S[i, NCIRC] += 1
    row_mask = 31 << (5 * row)
    col_mask = 0x108421 << col
    lines = 0
    if circled & row_mask == row_mask:
        lines |= row_mask
    if circled & col_mask == col_mask:
        lines |= col_mask
    if lines:
        for q in range(n):
            if q != p:
                S[i, CROSS + q] |= lines & ~S[i, CIRC + q]
    _check_end(S, i, n)
    if S[i, NCIRC] >= MAX_CIRCLES or not _has_circle(S, i, p):
        _end_turn(S, i, n, rng, faces, use_faces)


@njit(cache=True, inline="always")
def _step_one(S, i, a, n, rng, faces, use_faces, row_score, col_score):
    phase = S[i, PHASE]
    if phase == REROLL:
        if a == 0:
            _start_circle_phase(S, i)
        else:
            drawn = 0
            for j in range(6):
                if (a >> j) & 1:
                    S[i, COUNTS + S[i, DICE + j]] -= 1
                    S[i, COUNTS + _face(rng, faces, use_faces, i, drawn)] += 1
                    drawn += 1
            _dice_from_counts(S, i)
            S[i, ROLLS] -= 1
            if S[i, ROLLS] == 0:
                _start_circle_phase(S, i)
    elif phase == CIRCLE:
        if a == END_TURN:
            _end_turn(S, i, n, rng, faces, use_faces)
        else:
            _circle(S, i, a, n, rng, faces, use_faces, row_score, col_score)
    else:  # cross phase
        p = S[i, CUR]
        r = a - CROSS_BASE
        S[i, CROSS + p] |= (31 << (5 * r)) & ~S[i, CIRC + p]
        _check_end(S, i, n)
        _end_turn(S, i, n, rng, faces, use_faces)


@njit(cache=True)
def first_illegal(M, actions, active):
    """Index of the first active game whose action is not legal, or -1."""
    for i in range(M.shape[0]):
        if active[i]:
            a = actions[i]
            if a < 0 or a >= NUM_ACTIONS or not M[i, a]:
                return i
    return -1


@njit(cache=True)
def step(S, M, actions, active, n, rng, faces, use_faces, row_score, col_score, code2ms, reroll_tab):
    """Apply ``actions[i]`` to every active game (legality checked beforehand).

    Returns the number of stepped games that are now over.
    """
    finished = 0
    for i in range(S.shape[0]):
        if not active[i]:
            continue
        _step_one(S, i, actions[i], n, rng, faces, use_faces, row_score, col_score)
        _fill_mask(S, M, i, code2ms, reroll_tab)
        if S[i, PHASE] == OVER:
            finished += 1
    return finished


@njit(cache=True)
def reset(S, M, which, rng, faces, use_faces, code2ms, reroll_tab):
    """Start a fresh game (seat 0's first roll) in every game with ``which[i]``."""
    for i in range(S.shape[0]):
        if not which[i]:
            continue
        for c in range(WIDTH):
            S[i, c] = 0
        _start_turn(S, i, rng, faces, use_faces)
        _fill_mask(S, M, i, code2ms, reroll_tab)


@njit(cache=True)
def refresh_masks(S, M, code2ms, reroll_tab):
    """Recompute every legal mask (after loading states)."""
    for i in range(S.shape[0]):
        _fill_mask(S, M, i, code2ms, reroll_tab)


@njit(cache=True)
def random_actions(M, rng, out):
    """A uniformly random legal action per game (``-1`` where none is legal)."""
    for i in range(M.shape[0]):
        count = 0
        for a in range(NUM_ACTIONS):
            if M[i, a]:
                count += 1
        if count == 0:
            out[i] = -1
            continue
        k = _uniform(rng, i, count)
        for a in range(NUM_ACTIONS):
            if M[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


@njit(cache=True)
def observe(S, observers, n, out):
    """Write each game's observation for seat ``observers[i]`` (layout of ``observation.encode``)."""
    sixth = np.float32(1.0 / 6.0)
    for i in range(S.shape[0]):
        o = observers[i]
        for x in range(out.shape[1]):
            out[i, x] = 0.0
        base = 50 * n
        for k in range(n):
            s = (o + k) % n
            circ = S[i, CIRC + s]
            cros = S[i, CROSS + s]
            for b in range(25):
                if (circ >> b) & 1:
                    out[i, 50 * k + b] = 1.0
                if (cros >> b) & 1:
                    out[i, 50 * k + 25 + b] = 1.0
            lines = base + 60 + 2 * n + 10 * k
            for r in range(5):
                if (circ >> (5 * r)) & 31 == 31:
                    out[i, lines + r] = 1.0
            for c in range(5):
                col_mask = 0x108421 << c
                if circ & col_mask == col_mask:
                    out[i, lines + 5 + c] = 1.0
            out[i, base + 60 + n + k] = np.float32(S[i, SCORE + s] / 200.0)
        for j in range(6):
            out[i, base + 6 * j + S[i, DICE + j]] = 1.0
            out[i, base + 36 + j] = np.float32(S[i, SPENT + j])
            out[i, base + 42 + j] = np.float32(S[i, COUNTS + j]) * sixth
        out[i, base + 48 + S[i, ROLLS]] = 1.0
        out[i, base + 51 + S[i, NCIRC]] = 1.0
        out[i, base + 55 + S[i, PHASE]] = 1.0
        out[i, base + 59] = np.float32(S[i, END])
        out[i, base + 60 + (S[i, CUR] - o + n) % n] = 1.0
        out[i, base + 60 + 12 * n + o] = 1.0


@njit(cache=True)
def observe_features(S, observers, n, row_score, col_score, out, start):
    """Write the ``features`` block (layout of ``observation.features``) into ``out[:, start:]``."""
    for i in range(S.shape[0]):
        o = observers[i]
        for x in range(start, out.shape[1]):
            out[i, x] = 0.0
        circled = S[i, CIRC + o]
        free = FULL & ~(circled | S[i, CROSS + o])
        jokers = S[i, COUNTS + 5]
        base = _score(circled, row_score, col_score)
        for cell in range(25):
            r = cell // 5
            c = cell % 5
            if not (free >> cell) & 1:
                out[i, start + 100 + cell] = 1.0
                continue
            k = S[i, COUNTS + r]
            plain = False
            joker = False
            if jokers == 6:
                joker = True
                missing = 0
            else:
                plain = k >= c + 1
                joker = jokers > 0 and c >= 1 and k >= c
                missing = c + 1 - k
                if jokers > 0 and c >= 1 and c - k < missing:
                    missing = c - k
            if missing < 0:
                missing = 0
            out[i, start + 100 + cell] = np.float32(missing / 5.0)
            gain = np.float32((_score(circled | (1 << cell), row_score, col_score) - base) / 64.0)
            if plain:
                out[i, start + 2 * cell] = 1.0
                out[i, start + 50 + 2 * cell] = gain
            if joker:
                out[i, start + 2 * cell + 1] = 1.0
                out[i, start + 50 + 2 * cell + 1] = gain
        for k in range(n):
            s = (o + k) % n
            mine = S[i, CIRC + s]
            crossed = S[i, CROSS + s]
            for line in range(10):
                if line < 5:
                    mask = 31 << (5 * line)
                else:
                    mask = 0x108421 << (line - 5)
                rest = mask & ~mine
                if rest != 0 and rest & (rest - 1) == 0 and rest & crossed == 0:
                    out[i, start + 125 + 10 * k + line] = 1.0


@njit(cache=True)
def rescore(S, n, row_score, col_score):
    """Recompute the score columns from the circled masks (after loading states)."""
    for i in range(S.shape[0]):
        for p in range(n):
            S[i, SCORE + p] = _score(S[i, CIRC + p], row_score, col_score)


@njit(cache=True)
def play_random(S, M, seats, n, bot_rng, rng, faces, use_faces, row_score, col_score, code2ms, reroll_tab):
    """Play uniformly random legal moves in every game until seat ``seats[i]`` is on turn or it is over."""
    for i in range(S.shape[0]):
        while S[i, PHASE] != OVER and S[i, CUR] != seats[i]:
            count = 0
            for a in range(NUM_ACTIONS):
                if M[i, a]:
                    count += 1
            k = _uniform(bot_rng, i, count)
            for a in range(NUM_ACTIONS):
                if M[i, a]:
                    if k == 0:
                        _step_one(S, i, a, n, rng, faces, use_faces, row_score, col_score)
                        break
                    k -= 1
            _fill_mask(S, M, i, code2ms, reroll_tab)
