"""The observation vector: everything a player can see, from the observer's seat.

Layout (``float32``, all values in ``[0, 1]``; ``n`` = number of players; the
"relative seats" are the observer first, then the others in seat order after
the observer)::

    offset        size  content
    0             50n   for each relative seat: 25 circled flags, then 25 crossed
                        flags, cell index 5*row + col
    50n           36    sorted dice: for each position 0..5 a one-hot of its face 0..5
    50n+36        6     spent flags of the sorted dice
    50n+42        6     unspent dice per face (plant..cat, joker) / 6
    50n+48        3     rolls left one-hot (0, 1, 2)
    50n+51        4     circles made this turn one-hot (0..3)
    50n+55        4     phase one-hot (reroll, circle, cross, over)
    50n+59        1     end triggered
    50n+60        n     player on turn, one-hot over relative seats
    51n+60        n     current score of each relative seat / 200
    52n+60        10n   for each relative seat: its completed rows (5) then
                        completed columns (5); a line completed by a rival is
                        locked for everyone else
    62n+60        n     the observer's own (absolute) seat, one-hot: who moves
                        last in a round, so what an end trigger leaves to play
    total         63n+60

``OBS_VERSION`` changes whenever this layout changes (model cards record it).
Version 2 added the seat block; version 1 (62n+60) had no absolute seat.
"""

from __future__ import annotations

import numpy as np

from shelfie_env.game.engine import Game
from shelfie_env.game.scoring import DEFAULT_POINTS
from shelfie_env.game.tables import MULTISET_INDEX, MULTISETS

OBS_VERSION = 2
SCORE_SCALE = 200.0

_DICE_ONEHOT = np.zeros((len(MULTISETS), 36), dtype=np.float32)
for _i, _d in enumerate(MULTISETS):
    for _pos, _face in enumerate(_d):
        _DICE_ONEHOT[_i, 6 * _pos + _face] = 1.0
_DICE_ONEHOT.setflags(write=False)


def observation_size(num_players: int) -> int:
    """Length of the observation vector for ``num_players`` players."""
    return 63 * num_players + 60


def layout(num_players: int) -> list[tuple[str, int, int]]:
    """``(name, start, stop)`` of each block of the vector, for docs and model cards."""
    n = num_players
    blocks = [
        ("boards", 50 * n),
        ("dice_onehot", 36),
        ("spent", 6),
        ("unspent_counts", 6),
        ("rolls_left", 3),
        ("circles_this_turn", 4),
        ("phase", 4),
        ("end_triggered", 1),
        ("on_turn", n),
        ("scores", n),
        ("completed_lines", 10 * n),
        ("seat", n),
    ]
    out, start = [], 0
    for name, size in blocks:
        out.append((name, start, start + size))
        start += size
    return out


def block_start(name: str, num_players: int) -> int:
    """Offset of the block ``name`` of :func:`layout` in the vector for ``num_players`` players."""
    for block, start, _ in layout(num_players):
        if block == name:
            return start
    raise KeyError(f"no observation block {name!r}")


def encode(game: Game, observer: int) -> np.ndarray:
    """Observation of ``game`` for seat ``observer`` (a new float32 array)."""
    n = game.num_players
    obs = np.zeros(63 * n + 60, dtype=np.float32)
    order = [(observer + k) % n for k in range(n)]
    masks = np.empty(2 * n, dtype="<u4")
    circled, crossed = game.circled, game.crossed
    for k, s in enumerate(order):
        masks[2 * k] = circled[s]
        masks[2 * k + 1] = crossed[s]
    bits = np.unpackbits(masks.view(np.uint8).reshape(2 * n, 4), axis=1, bitorder="little")[:, :25]
    o = 50 * n
    obs[:o] = bits.reshape(-1)
    obs[o : o + 36] = _DICE_ONEHOT[MULTISET_INDEX[tuple(game.dice)]]
    obs[o + 36 : o + 42] = game.spent
    obs[o + 42 : o + 48] = game.counts
    obs[o + 42 : o + 48] *= 1.0 / 6.0
    obs[o + 48 + game.rolls_left] = 1.0
    obs[o + 51 + game.circles] = 1.0
    obs[o + 55 + game.phase] = 1.0
    obs[o + 59] = game.end_triggered
    obs[o + 60 + (game.current - observer) % n] = 1.0
    score = game.table.score
    obs[o + 60 + n : o + 60 + 2 * n] = [score(circled[s]) / SCORE_SCALE for s in order]
    circ = bits[0::2].reshape(n, 5, 5)
    lines = obs[o + 60 + 2 * n : o + 60 + 12 * n].reshape(n, 10)
    lines[:, :5] = circ.all(axis=2)
    lines[:, 5:] = circ.all(axis=1)
    obs[o + 60 + 12 * n + observer] = 1.0
    return obs


# Memo sizes (shared by every encoder of the process; a full memo is cleared). Shelves
# rarely recur across games, so their memos only need to hold the recent ones; dice
# situations and masks recur, so theirs are larger. About 20 MB in all at most.
_PLAYERS_LIMIT = 4_096
_SEAT_LIMIT = 8_192
_TURN_LIMIT = 20_000
_MASK_LIMIT = 20_000

_BITS10 = np.array([[(v >> i) & 1 for i in range(10)] for v in range(1024)], dtype=np.float32)
_BITS10.setflags(write=False)
_ROW_FULL = [31 << (5 * r) for r in range(5)]
_COL_FULL = [sum(1 << (5 * r + c) for r in range(5)) for c in range(5)]

# (table, circled, crossed) -> (shelf flags (50,), score (1,), completed lines (10,))
_SEATS: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
# (table, observer, *circled, *crossed) -> (shelves block (50n,), scores + lines + seat block (12n,))
_PLAYERS: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
# (*dice, *spent, rolls, circles, phase, end, on-turn seat) -> turn block (60 + n,)
_TURNS: dict[tuple, np.ndarray] = {}


def _bits25(mask: int) -> np.ndarray:
    return np.concatenate((_BITS10[mask & 1023], _BITS10[mask >> 10 & 1023], _BITS10[mask >> 20 & 31, :5]))


def _seat_blocks(table: object, circled: int, crossed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    key = (table, circled, crossed)
    blocks = _SEATS.get(key)
    if blocks is None:
        shelf = np.concatenate((_bits25(circled), _bits25(crossed)))
        score = np.array([table.score(circled) / SCORE_SCALE], dtype=np.float32)  # type: ignore[attr-defined]
        lines = np.array(
            [circled & m == m for m in _ROW_FULL] + [circled & m == m for m in _COL_FULL], dtype=np.float32
        )
        blocks = (shelf, score, lines)
        if len(_SEATS) >= _SEAT_LIMIT:
            _SEATS.clear()
        _SEATS[key] = blocks
    return blocks


class ObservationEncoder:
    """:func:`encode` assembled from memoised blocks, for envs that encode every step.

    The shelves block and the scores/completed-lines block change only when a
    shelf changes; the turn block (dice, spent flags, counts, rolls, circles,
    phase, end flag, who is on turn) repeats often. The memos are shared by all
    encoders of the process and bounded. ``encode`` returns a new array equal to
    ``observation.encode(game, observer)``.
    """

    def __init__(self, num_players: int) -> None:
        self.num_players = num_players

    def encode(self, game: Game, observer: int) -> np.ndarray:
        n = game.num_players
        circled, crossed = game.circled, game.crossed
        table = game.table
        key = (table, observer, *circled, *crossed)
        players = _PLAYERS.get(key)
        if players is None:
            order = [(observer + k) % n for k in range(n)]
            seats = [_seat_blocks(table, circled[s], crossed[s]) for s in order]
            seat = np.zeros(n, dtype=np.float32)
            seat[observer] = 1.0
            players = (
                np.concatenate([b[0] for b in seats]),
                np.concatenate([b[1] for b in seats] + [b[2] for b in seats] + [seat]),
            )
            if len(_PLAYERS) >= _PLAYERS_LIMIT:
                _PLAYERS.clear()
            _PLAYERS[key] = players
        rel = (game.current - observer) % n
        # everything the turn block shows (its length depends on n)
        end = game.end_triggered
        tkey = (*game.dice, *game.spent, game.rolls_left, game.circles, game.phase, end, rel, n)
        turn = _TURNS.get(tkey)
        if turn is None:
            turn = np.zeros(60 + n, dtype=np.float32)
            turn[:36] = _DICE_ONEHOT[MULTISET_INDEX[tuple(game.dice)]]
            turn[36:42] = game.spent
            turn[42:48] = game.counts
            turn[42:48] *= 1.0 / 6.0
            turn[48 + game.rolls_left] = 1.0
            turn[51 + game.circles] = 1.0
            turn[55 + game.phase] = 1.0
            turn[59] = game.end_triggered
            turn[60 + rel] = 1.0
            if len(_TURNS) >= _TURN_LIMIT:
                _TURNS.clear()
            _TURNS[tkey] = turn
        o = 50 * n
        t = o + 60 + n
        obs = np.empty(t + 12 * n, dtype=np.float32)
        obs[:o] = players[0]
        obs[o:t] = turn
        obs[t:] = players[1]
        return obs


_MASKS: dict[tuple[int, ...], np.ndarray] = {}


def legal_mask(legal: tuple[int, ...]) -> np.ndarray:
    """A new int8 mask of 120 with ones at the ids in ``legal`` (memoised per tuple)."""
    mask = _MASKS.get(legal)
    if mask is None:
        mask = np.zeros(120, dtype=np.int8)
        mask[list(legal)] = 1
        if len(_MASKS) >= _MASK_LIMIT:
            _MASKS.clear()
        _MASKS[legal] = mask
    return mask.copy()


def decode(obs: np.ndarray, num_players: int) -> Game:
    """The game an observation shows (default points table): ``encode(decode(x, n), seat) == x``.

    Everything a bot needs is in the vector: every shelf, the dice and which are
    spent, rolls left, circles this turn, the phase, the end flag, who is on turn
    and the observer's seat. Raises ``ValueError`` for a vector that is not an
    observation of a legal position.
    """
    n = num_players
    x = np.asarray(obs, dtype=np.float32).reshape(-1)
    if x.shape[0] != observation_size(n):
        raise ValueError(f"a {n}-player observation has {observation_size(n)} entries, got {x.shape[0]}")
    o = 50 * n
    seat_block = x[62 * n + 60 : 63 * n + 60]
    observer = int(np.argmax(seat_block))
    bits = (x[:o].reshape(n, 2, 25) > 0.5).astype(np.int64)
    weights = 1 << np.arange(25, dtype=np.int64)
    circled = [0] * n
    crossed = [0] * n
    for k in range(n):
        s = (observer + k) % n
        circled[s] = int(bits[k, 0] @ weights)
        crossed[s] = int(bits[k, 1] @ weights)
    dice = [int(np.argmax(x[o + 6 * i : o + 6 * i + 6])) for i in range(6)]
    phase = int(np.argmax(x[o + 55 : o + 59]))
    state = {
        "num_players": n,
        "points": [list(row) for row in DEFAULT_POINTS],
        "boards": [
            [
                [(circled[s] >> (5 * r + c) & 1) + 2 * (crossed[s] >> (5 * r + c) & 1) for c in range(5)]
                for r in range(5)
            ]
            for s in range(n)
        ],
        "current_player": (observer + int(np.argmax(x[o + 60 : o + 60 + n]))) % n,
        "phase": ("reroll", "circle", "cross", "over")[phase],
        "dice": dice,
        "spent": [bool(v > 0.5) for v in x[o + 36 : o + 42]],
        "rolls_left": int(np.argmax(x[o + 48 : o + 51])),
        "circles_this_turn": int(np.argmax(x[o + 51 : o + 55])),
        "end_triggered": bool(x[o + 59] > 0.5),
    }
    try:
        return Game.from_dict(state)
    except ValueError as exc:
        raise ValueError(f"not the observation of a legal position: {exc}") from None
