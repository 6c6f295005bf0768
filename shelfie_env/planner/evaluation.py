"""The planner's evaluation of a position right after the player's placement.

``value = E_me - rival_weight * mean over rivals of E_rival``

where ``E_x`` is player x's *expected final score*: the sum over the 10 lines
of the line's expected score (:mod:`.lines`) when each free cell ``(r, c)``
will still be circled with probability

``q(r, c) = (1 - (1 - hit[c]) ** T) * (1 - threat(r, c))``

* ``T`` is the number of turns the player still gets. If the placement
  triggers the end (some shelf has two rows with no free cell) the player gets
  none and only secured points count; a rival seated later gets one more turn.
  Otherwise ``T`` is the estimated number of rounds left (:func:`rounds_left`),
  so potential is worth less and less as the end nears, and a player ahead
  gains by triggering the end (crossing choice) while one behind does not.
* ``hit[c]`` is the per-turn chance a given free cell of column ``c`` (it needs
  ``c + 1`` equal dice) gets circled: harder cells are discounted more.
* ``threat(r, c)`` is the chance a rival completes row ``r`` or column ``c``
  first (product of the rival's own ``q`` over the line's missing cells, when
  the rival has nothing crossed there): completing crosses our cell.
* Completions that lock rivals out are applied exactly: the rivals' free cells
  of a line we complete become crossed, which lowers ``E_rival``.

With ``rival_weight = 1`` and two players the value is the expected final
score difference; solo it is the expected final score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..engine import Game
from ..scoring import COL_MASKS, FULL, ROW_MASKS
from .lines import line_points, line_tables, shelf_values

_ROW_MASKS = np.array(ROW_MASKS, dtype=np.int64)
_COL_MASKS = np.array(COL_MASKS, dtype=np.int64)
_LINE_MASKS = np.concatenate([_ROW_MASKS, _COL_MASKS])
_COLUMN_OF_BIT = np.array([b % 5 for b in range(25)])


@dataclass(frozen=True)
class Weights:
    """Tunable parameters of the evaluation (defaults tuned on small arenas)."""

    hit: tuple[float, ...] = (0.5, 0.35, 0.2, 0.1, 0.04)
    """Per-turn chance that a free cell of column c (needs c+1 dice) gets circled."""
    rival_weight: float = 1.0
    """Weight of the rivals' expected score (1 = maximise the score difference)."""
    threat: float = 1.0
    """Scale of the discount of our cells in lines a rival may complete first."""
    pace: tuple[float, ...] = field(default=(0.4, 1.0))
    """Rounds-left estimate: ``pace[0] * free cells of the fullest shelf + pace[1]`` (see rounds_left)."""


def full_rows_many(filled: np.ndarray) -> np.ndarray:
    """Rows with no free cell, for an array of filled (circled | crossed) masks."""
    return sum(((filled & m) == m).astype(np.int64) for m in ROW_MASKS)


def rounds_left(game: Game, weights: Weights) -> float:
    """Estimated rounds after the current one, for an untriggered game.

    The end comes when one shelf has two rows with no free cell; the shelf
    closest to it sets the pace: its free cells in its two emptiest... fullest
    rows, and its free cells overall.
    """
    best = None
    for q in range(game.num_players):
        filled = game.circled[q] | game.crossed[q]
        free_rows = sorted(5 - bin(filled >> (5 * r) & 31).count("1") for r in range(5))
        key = free_rows[0] + free_rows[1]
        best = key if best is None else min(best, key)
    a, b = weights.pace
    return max(0.0, a * float(best) * 2.5 + b - 1.0) if best is not None else 0.0


class Context:
    """Everything a decision of ``game.current`` needs to evaluate placements fast."""

    def __init__(self, game: Game, weights: Weights) -> None:
        self.game = game
        self.weights = weights
        p = self.player = game.current
        n = game.num_players
        self.rivals = [q for q in range(n) if q != p]
        self.circled = game.circled[p]
        self.crossed = game.crossed[p]
        self.free = FULL & ~(self.circled | self.crossed)
        self.already_triggered = bool(game.end_triggered)
        self.points = line_points(game.table.points)
        self._zero = line_tables(np.zeros(25), self.points)
        hit = np.array(weights.hit, dtype=np.float64)[_COLUMN_OF_BIT]
        self._hit = hit
        R = 0.0 if self.already_triggered else rounds_left(game, weights)
        self.rounds = R
        # Threat each player faces: chance some other player completes each line first.
        base_q = [self._base_prob(q, R + (1 if q > p else 0)) for q in range(n)]
        completes = [self._completion_prob(q, base_q[q]) for q in range(n)]  # (10,) each
        self._threat = []
        for q in range(n):
            safe = np.ones(10)
            for o in range(n):
                if o != q:
                    safe *= 1.0 - weights.threat * completes[o]
            self._threat.append(safe)
        # Tables: mine when the game goes on; rivals' when it goes on / is triggered.
        self._me_go = self._table(p, R)
        self._riv_go = [self._table(q, R + (1 if q > p else 0)) for q in self.rivals]
        self._riv_end = [self._table(q, 1.0) if q > p else self._zero for q in self.rivals]

    # ----------------------------------------------------------- building blocks
    def _base_prob(self, q: int, turns: float) -> np.ndarray:
        free = FULL & ~(self.game.circled[q] | self.game.crossed[q])
        bits = (free >> np.arange(25)) & 1
        return bits * (1.0 - (1.0 - self._hit) ** max(turns, 0.0))

    def _completion_prob(self, q: int, prob: np.ndarray) -> np.ndarray:
        """Chance player q completes each of the 10 lines (0 if one of its cells is crossed)."""
        circ, cross = self.game.circled[q], self.game.crossed[q]
        out = np.zeros(10)
        for i, m in enumerate(_LINE_MASKS.tolist()):
            if cross & m or circ & m == m:
                continue
            bits = [b for b in range(25) if m >> b & 1 and not circ >> b & 1]
            out[i] = float(np.prod(prob[bits]))
        return out

    def _table(self, q: int, turns: float) -> np.ndarray:
        if turns <= 0:
            return self._zero
        prob = self._base_prob(q, turns)
        safe = self._threat[q]
        cell_safe = safe[:5].repeat(5) * np.tile(safe[5:], 5)  # row r factor * column c factor
        return line_tables(prob * cell_safe, self.points)

    # -------------------------------------------------------------- evaluation
    def evaluate(self, circled: np.ndarray, crossed: np.ndarray) -> np.ndarray:
        """Values of candidate shelves of the player (arrays of masks), rivals updated by lockout."""
        circled = np.asarray(circled, dtype=np.int64)
        crossed = np.asarray(crossed, dtype=np.int64)
        g = self.game
        # Lines newly completed lock the rivals out.
        lock = np.zeros(circled.shape, dtype=np.int64)
        for m in _LINE_MASKS.tolist():
            if self.circled & m != m:
                lock |= np.where(circled & m == m, m, 0)
        triggered = np.full(circled.shape, self.already_triggered)
        triggered |= full_rows_many(circled | crossed) >= 2
        riv_circ, riv_cross = [], []
        for q in self.rivals:
            c = g.circled[q]
            x = g.crossed[q] | (lock & ~c)
            riv_circ.append(c)
            riv_cross.append(x)
            triggered |= full_rows_many(c | x) >= 2
        me = np.where(
            triggered,
            shelf_values(self._zero, circled, crossed),
            shelf_values(self._me_go, circled, crossed),
        )
        if not self.rivals:
            return me
        riv = np.zeros(circled.shape)
        for i in range(len(self.rivals)):
            c = np.full(circled.shape, riv_circ[i])
            x = riv_cross[i]
            riv += np.where(
                triggered,
                shelf_values(self._riv_end[i], c, x),
                shelf_values(self._riv_go[i], c, x),
            )
        return me - self.weights.rival_weight * riv / len(self.rivals)

    def evaluate_circles(self, sets: np.ndarray) -> np.ndarray:
        """Values after circling each set of cells (masks of free cells)."""
        return self.evaluate(self.circled | sets, np.full(sets.shape, self.crossed))

    def evaluate_crosses(self, rows: list[int]) -> np.ndarray:
        """Values after crossing out each row (its free cells become crossed)."""
        cross = np.array([self.crossed | (ROW_MASKS[r] & self.free) for r in rows], dtype=np.int64)
        return self.evaluate(np.full(cross.shape, self.circled), cross)
