"""After-state values: one network output for the position a turn ends in.

A turn ends with one placement: a circle set (1..3 cells,
:data:`~shelfie_env.bots.planner.placements.SET_MASKS`) or a crossed-out row.
:func:`afterstates` builds, for every placement the turn can end with,
the position it leaves (the mover's shelf with the set circled or the row
crossed, the lockouts that set completes on the rivals' shelves, the new
scores and end trigger), seen from the mover's seat. :class:`AfterstateNet`
values all of them in one batched forward, and the game-ending ones exactly
(the final reward), which gives the planner's search the same
``NUM_SET_VALUES`` vector the pre-state network gives
(:class:`~shelfie_env.bots.learned.value.LearnedContext`). Numpy only.

Feature layout for ``n`` players (relative seats: the mover first, then the
others in seat order after it)::

    offset  size  content
    0       50n   per seat: 25 circled flags, then 25 crossed flags
    50n     10n   per seat: completed rows (5), then completed columns (5)
    60n     n     per seat: score / 200
    61n     n     per seat: rows with no free cell / 5
    62n     1     end triggered
    62n+1   n     the mover's absolute seat, one-hot
    total   63n+1
"""

from __future__ import annotations

import numpy as np

from shelfie_env.bots.learned.expect_head import NUM_SET_VALUES, NUM_SETS
from shelfie_env.bots.planner.placements import SET_MASKS
from shelfie_env.game.engine import Game
from shelfie_env.game.scoring import COL_MASKS, FULL, ROW_MASKS

SCORE_SCALE = 200.0
_BITS = np.arange(25, dtype=np.int64)
_ROWS = np.array(ROW_MASKS, dtype=np.int64)
_COLS = np.array(COL_MASKS, dtype=np.int64)
_LINES = np.concatenate([_ROWS, _COLS])
_POW5 = 1 << np.arange(5, dtype=np.int64)


def feature_size(num_players: int) -> int:
    """Length of an after-state feature vector for ``num_players`` players."""
    return 63 * num_players + 1


def final_reward(scores: np.ndarray, margin_coef: float) -> np.ndarray:
    """The mover's reward of finished games: rank reward + ``margin_coef`` x margin / 50.

    ``scores`` is ``(k, n)`` with the mover in column 0; the rank reward is the
    share of rivals beaten minus the share that beat the mover.
    """
    own, rivals = scores[:, :1], scores[:, 1:]
    rank = ((rivals < own).sum(1) - (rivals > own).sum(1)) / rivals.shape[1]
    return rank + margin_coef * (own[:, 0] - rivals.max(1)) / 50.0


class _ScoreLookup:
    """Vectorised :class:`~shelfie_env.game.scoring.ScoreTable` over arrays of circled masks."""

    def __init__(self, game: Game) -> None:
        table = game.table
        self.rows = np.array(table.row_score, dtype=np.int64)  # (5, 32)
        self.cols = np.array(table.col_score, dtype=np.int64)

    def __call__(self, circled: np.ndarray) -> np.ndarray:
        bits = (circled[:, None] >> _BITS) & 1  # (k, 25)
        grid = bits.reshape(-1, 5, 5)
        row_bits = grid @ _POW5  # (k, 5): bit c of row r
        col_bits = grid.transpose(0, 2, 1) @ _POW5  # bit r of column c
        idx = np.arange(5)
        return self.rows[idx, row_bits].sum(1) + self.cols[idx, col_bits].sum(1)


def _full_rows(filled: np.ndarray) -> np.ndarray:
    return ((filled[..., None] & _ROWS) == _ROWS).sum(-1)


def afterstates(game: Game, sets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The positions the current player's turn can end in.

    ``sets`` are circle sets within the mover's free cells, ``rows`` rows it can
    cross out; returns ``(features, over, scores)``: the ``(k, feature_size)``
    features (sets first, then rows), whether each ends the game, and the
    ``(k, n)`` scores in relative seat order.
    """
    return afterstates_many([game], [sets], [rows])


def afterstates_many(
    games: list[Game], sets: list[np.ndarray], rows: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`afterstates` of several games (same players and points) in one block, game after game."""
    n = games[0].num_players
    if any(g.num_players != n or g.table.points != games[0].table.points for g in games):
        raise ValueError("afterstates_many needs games with the same number of players and points table")
    sizes = [len(s) + len(r) for s, r in zip(sets, rows)]
    k = sum(sizes)
    base_circ = np.array([[g.circled[(g.current + j) % n] for j in range(n)] for g in games], dtype=np.int64)
    base_cross = np.array([[g.crossed[(g.current + j) % n] for j in range(n)] for g in games], dtype=np.int64)
    which = np.repeat(np.arange(len(games)), sizes)
    circ, cross = base_circ[which], base_cross[which]
    add_circ = np.zeros(k, dtype=np.int64)
    add_cross = np.zeros(k, dtype=np.int64)
    at = 0
    for s, r in zip(sets, rows):
        add_circ[at : at + len(s)] = s
        at += len(s)
        add_cross[at : at + len(r)] = _ROWS[np.asarray(r, dtype=np.int64)]
        at += len(r)
    circ[:, 0] |= add_circ
    cross[:, 0] |= add_cross & ~circ[:, 0]
    # Lockout: every line the mover's circles complete crosses the rivals' open cells there.
    done = (circ[:, :1] & _LINES) == _LINES  # (k, 10)
    lines = np.bitwise_or.reduce(np.where(done, _LINES, 0), axis=1)
    if n > 1:
        cross[:, 1:] |= lines[:, None] & ~circ[:, 1:]
    filled = circ | cross
    full = _full_rows(filled)  # (k, n)
    movers = np.array([g.current for g in games], dtype=np.int64)[which]
    triggered = np.array([g.end_triggered for g in games])[which] | (full >= 2).any(1)
    # The game ends once the end is triggered and no seat after the mover is left to play:
    # relative seat j sits after the mover in the round when mover + j < n.
    later = np.arange(n)[None, :] < (n - movers)[:, None]
    later[:, 0] = False
    still_to_play = (later & (filled != FULL)).any(1)
    over = triggered & ~still_to_play
    score = _ScoreLookup(games[0])
    scores = np.stack([score(circ[:, j]) for j in range(n)], axis=1)

    feats = np.zeros((k, feature_size(n)), dtype=np.float32)
    for j in range(n):
        feats[:, 50 * j : 50 * j + 25] = (circ[:, j, None] >> _BITS) & 1
        feats[:, 50 * j + 25 : 50 * j + 50] = (cross[:, j, None] >> _BITS) & 1
        feats[:, 50 * n + 10 * j : 50 * n + 10 * j + 10] = (circ[:, j, None] & _LINES) == _LINES
    feats[:, 60 * n : 61 * n] = scores / SCORE_SCALE
    feats[:, 61 * n : 62 * n] = full / 5.0
    feats[:, 62 * n] = triggered
    feats[np.arange(k), 62 * n + 1 + movers] = 1.0
    return feats, over, scores


def placements(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Indices (into ``SET_MASKS``) of the sets within the mover's free cells, and its crossable rows."""
    p = game.current
    free = FULL & ~(game.circled[p] | game.crossed[p])
    sel = np.flatnonzero((SET_MASKS & ~free) == 0)
    rows = np.array([r for r in range(5) if free >> (5 * r) & 31], dtype=np.int64)
    return sel, rows


class TurnAfterstates:
    """The after-states of one turn: ``features[i]`` / ``over[i]`` belong to placement ``index[i]``."""

    def __init__(self, index: np.ndarray, features: np.ndarray, over: np.ndarray) -> None:
        self.index, self.features, self.over = index, features, over

    def of(self, placement: int) -> tuple[np.ndarray, bool]:
        """The features of ``placement`` (a ``NUM_SET_VALUES`` index) and whether it ends the game."""
        (i,) = np.flatnonzero(self.index == placement)
        return self.features[i].copy(), bool(self.over[i])


class AfterstateNet:
    """An after-state value MLP in numpy (``tanh`` hidden layers, one linear output)."""

    kind = "afterstate"

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], players: int, margin_coef: float) -> None:
        self.layers = [(np.ascontiguousarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        if self.layers[0][0].shape[0] != feature_size(players):
            raise ValueError(
                f"a {players}-player after-state network takes {feature_size(players)} inputs, "
                f"got {self.layers[0][0].shape[0]}"
            )
        if self.layers[-1][0].shape[1] != 1:
            raise ValueError(f"an after-state network has one output, got {self.layers[-1][0].shape[1]}")
        self.players = players
        self.margin_coef = float(margin_coef)

    def __call__(self, features: np.ndarray) -> np.ndarray:
        """``(k,)`` values of ``(k, feature_size)`` after-states."""
        x = np.asarray(features, np.float32)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                np.tanh(x, out=x)
        return x[:, 0]

    def values_of(self, game: Game) -> np.ndarray:
        """The value of every placement of the current turn (``NUM_SET_VALUES``, NaN where impossible).

        Game-ending placements get the exact final reward; the others the network's value.
        """
        return self.values_many([game])[0]

    def values_many(self, games: list[Game]) -> list[np.ndarray]:
        """:meth:`values_of` for several games' turns, with one network forward for all their placements."""
        return [v for v, _ in self.turns_many(games)]

    def turns_many(self, games: list[Game]) -> list[tuple[np.ndarray, TurnAfterstates]]:
        """Per game: the :meth:`values_of` vector and the after-states behind it (one forward in all)."""
        picks = [placements(g) for g in games]
        feats, over, scores = afterstates_many(
            games, [SET_MASKS[sel] for sel, _ in picks], [r for _, r in picks]
        )
        vals = np.empty(len(feats), dtype=np.float32)
        if (~over).any():
            vals[~over] = self(feats[~over])
        if over.any():
            vals[over] = final_reward(scores[over], self.margin_coef)
        out, at = [], 0
        for sel, rows in picks:
            index = np.concatenate([sel, NUM_SETS + rows])
            v = np.full(NUM_SET_VALUES, np.nan, dtype=np.float32)
            v[index] = vals[at : at + len(index)]
            block = TurnAfterstates(index, feats[at : at + len(index)], over[at : at + len(index)])
            out.append((v, block))
            at += len(index)
        return out

    def state(self) -> dict[str, np.ndarray]:
        """Arrays for ``np.savez`` (``values.{2i}.weight`` in torch's ``(out, in)`` layout)."""
        out: dict[str, np.ndarray] = {"margin_coef": np.array(self.margin_coef)}
        for i, (w, b) in enumerate(self.layers):
            out[f"values.{2 * i}.weight"], out[f"values.{2 * i}.bias"] = w.T, b
        return out

    @classmethod
    def from_state(
        cls, state: dict[str, np.ndarray], players: int, margin_coef: float | None = None
    ) -> AfterstateNet:
        """Inverse of :meth:`state` (also reads a torch ``state_dict`` of ``nn.Sequential`` ``values``)."""
        idx = sorted(int(k.split(".")[1]) for k in state if k.startswith("values.") and k.endswith(".weight"))
        if not idx:
            raise ValueError("no values.{i}.weight arrays: not a value network")
        if margin_coef is None:
            if "margin_coef" not in state:
                raise ValueError("no margin_coef array: not an after-state value network")
            margin_coef = float(state["margin_coef"])
        layers = [
            (np.asarray(state[f"values.{i}.weight"]).T, np.asarray(state[f"values.{i}.bias"])) for i in idx
        ]
        return cls(layers, players, margin_coef)
