"""One solo turn played exactly against the table: the value of every legal action.

A turn ends on a board the table values (or, when two rows are closed, on its final score). So
every decision of the turn has an exact value in expected final points:

* reroll phase: stopping is worth the best placement of the dice in hand; a reroll is worth the
  expectation over the dice it rolls, with the rolls still left played optimally
  (:mod:`shelfie_env.bots.planner.dice`);
* circle phase: a circle is worth the best way to finish the turn after it (end now, or circle
  more with the dice left), ending the turn what the board is worth;
* cross phase: each cross-out is worth the board it leaves.

Pure numpy: the values of a turn's placements are looked up in one vectorised pass.
"""

from __future__ import annotations

import numpy as np

from shelfie_env.bots.planner.dice import (
    FINAL_INDEX,
    TRANSITION,
    best_keep_value,
    counts_of,
    expected_after_roll,
    keep_index_of_reroll,
)
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS, SET_SIZES, feasible_matrix
from shelfie_env.bots.planner.search import circle_outcome
from shelfie_env.game.actions import CROSS_BASE, END_TURN, STOP
from shelfie_env.game.engine import CIRCLE, CROSS, MAX_CIRCLES, REROLL, Game
from shelfie_env.game.scoring import ScoreTable
from shelfie_env.solo.boards import CLOSED_BASE, board_indices
from shelfie_env.solo.table import SoloTable

_ROW_SHIFTS = np.arange(5, dtype=np.int64) * 5


def _states_of(circled: np.ndarray, crossed: np.ndarray) -> np.ndarray:
    """Row states ``(N, 5)`` of shelves (int64 masks); a row with a crossed cell is closed."""
    c = circled[:, None] >> _ROW_SHIFTS[None, :] & 31
    x = crossed[:, None] >> _ROW_SHIFTS[None, :] & 31
    closed = (x != 0) | (c == 31)
    return np.where(closed, CLOSED_BASE + c, c)


def end_values(
    table: SoloTable, scores: ScoreTable, circled: np.ndarray, crossed: int | np.ndarray
) -> np.ndarray:
    """What each shelf is worth when the turn ends on it: its score once two rows are closed, else the
    table's value."""
    circled = np.asarray(circled, dtype=np.int64)
    states = _states_of(circled, np.broadcast_to(np.asarray(crossed, dtype=np.int64), circled.shape))
    over = (states >= CLOSED_BASE).sum(axis=1) >= 2
    out = np.empty(len(circled))
    if over.any():
        out[over] = [scores.score(int(m)) for m in circled[over]]
    if (~over).any():
        out[~over] = table.values[board_indices(states[~over], table.symmetric)]
    return out


class SoloTurn:
    """Exact action values for the solo player on turn, against a :class:`SoloTable`."""

    def __init__(self, table: SoloTable, game: Game) -> None:
        if game.num_players != 1:
            raise ValueError(f"the solo table values one-player games, not {game.num_players}-player ones")
        if tuple(map(tuple, game.table.points)) != table.points:
            raise ValueError("the game's points are not the ones the solo table was solved for")
        self.table = table
        self.game = game
        self.scores = game.table
        self.circled = game.circled[0]
        self.crossed = game.crossed[0]
        self.free = ~(self.circled | self.crossed) & ((1 << 25) - 1)

    def _end(self, circled: np.ndarray) -> np.ndarray:
        return end_values(self.table, self.scores, circled, self.crossed)

    def cross_values(self) -> dict[int, float]:
        """Value of crossing out each row that has a free cell."""
        rows = [r for r in range(5) if self.free >> (5 * r) & 31]
        if not rows:
            return {}
        crossed = np.array([self.crossed | (self.free & 31 << (5 * r)) for r in rows], dtype=np.int64)
        vals = end_values(self.table, self.scores, np.full(len(rows), self.circled, dtype=np.int64), crossed)
        return {CROSS_BASE + r: float(v) for r, v in zip(rows, vals)}

    def placement_values(self) -> np.ndarray:
        """``W[m]``: the value of the best placement of final dice ``m`` (462) from this board."""
        sel = np.flatnonzero((SET_MASKS & ~self.free) == 0)
        cross_best = max(self.cross_values().values())
        w = np.full(len(FEASIBLE), cross_best)
        if sel.size:
            vals = self._end(self.circled | SET_MASKS[sel])
            masked = np.where(FEASIBLE[:, sel], vals[None, :], -np.inf)
            best = masked.max(axis=1)
            w = np.where(np.isfinite(best), best, cross_best)
        return w

    def reroll_values(self) -> dict[int, float]:
        """Value of stopping and of every legal reroll (exact over the dice still to roll)."""
        game = self.game
        w = self.placement_values()
        keeps = expected_after_roll(w)
        if game.rolls_left >= 2:
            keeps = expected_after_roll(best_keep_value(keeps))
        out = {}
        for a in game.legal_actions():
            if a == STOP:
                out[a] = float(w[FINAL_INDEX[counts_of(game.dice)]])
            else:
                out[a] = float(keeps[keep_index_of_reroll(game.dice, a)])
        return out

    def circle_values(self) -> dict[int, float]:
        """Value of every legal circle (then the best way to finish the turn) and of ending the turn."""
        game = self.game
        room = MAX_CIRCLES - game.circles - 1
        actions, groups = [], []
        for a in game.legal_actions():
            actions.append(a)
            if a == END_TURN:
                groups.append(np.zeros(1, dtype=np.int64))
                continue
            rest, bit = circle_outcome(game, a)
            sets = [np.array([bit], dtype=np.int64)]
            if room > 0 and sum(rest) > 0:
                ok = feasible_matrix(np.array([rest]))[0] & (SET_SIZES <= room)
                ok &= (SET_MASKS & ~(self.free & ~bit)) == 0
                sets.append(bit | SET_MASKS[ok])
            groups.append(np.concatenate(sets))
        vals = self._end(self.circled | np.concatenate(groups))
        out, i = {}, 0
        for a, g in zip(actions, groups):
            out[a] = float(vals[i : i + len(g)].max())
            i += len(g)
        return out

    def action_values(self) -> dict[int, float]:
        """Expected final score of every legal action (empty when the game is over)."""
        phase = self.game.phase
        if phase == REROLL:
            return self.reroll_values()
        if phase == CIRCLE:
            return self.circle_values()
        if phase == CROSS:
            return self.cross_values()
        return {}

    def turn_start_value(self) -> float:
        """Expected final score from the start of a turn on this board (the Bellman right-hand side)."""
        w = self.placement_values()
        v2 = best_keep_value(expected_after_roll(best_keep_value(expected_after_roll(w))))
        return float(TRANSITION[0] @ v2)


def best_action(values: dict[int, float], tolerance: float = 1e-9) -> int:
    """The highest value; values within ``tolerance`` of it count as tied and go to the lowest id."""
    top = max(values.values())
    return min(a for a, v in values.items() if top - v <= tolerance)


__all__ = ["SoloTurn", "best_action", "end_values"]
