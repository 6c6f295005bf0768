"""The expectimax policy head: rerolls valued exactly from learned placement values.

The planner (:mod:`shelfie_env.bots.planner`) values a turn in two steps: an
evaluation of every placement the turn can end with (each set of 1..3 cells
to circle, each row to cross out), then an exact expectimax over the dice. A
network imitating its rerolls one id at a time has to learn the second step
too, and misses much of the planner's strength there.
The expectimax head learns only the first step: the network outputs
``NUM_SET_VALUES`` numbers, one per circle set (``planner.placements.SETS``)
and one per cross-out, and the reroll ids are valued by the same exact
recursion as the planner's:

* ``V0[m]``: best value over the sets final multiset ``m`` can circle within the
  player's free cells, or the best cross-out when it can circle none;
* one roll left: keep ``k`` is worth ``sum_m P(m | k) V0[m]``; two rolls left:
  the same over ``V1[m] = max over keeps within m``; stop is ``V0[dice now]``.

Reroll logits are those values divided by a temperature. Pure numpy: used by :class:`~shelfie_env.bots.learned.policy.NumpyPolicy`; the torch
policy in :mod:`shelfie_env.train.maskable_ppo.policy` computes the same with the tables defined here.
"""

from __future__ import annotations

import numpy as np

from shelfie_env.bots.planner.dice import FINAL, KEEP, SUB_KEEPS, TRANSITION
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS
from shelfie_env.observation.vector import block_start

NUM_REROLL_IDS = 64
"""Ids 0..63: stop (0) and the rerolls 1..63."""

DICE_SIZE = 36
"""Numbers of the sorted-dice one-hot block (6 positions x 6 faces)."""

KEPT = ((np.arange(NUM_REROLL_IDS)[:, None] >> np.arange(6)[None, :]) & 1 == 0).astype(np.float32)
"""``(64, 6)``: 1 where reroll id ``a`` keeps the die at sorted position ``i`` (id 0 keeps all)."""
KEPT.setflags(write=False)


def kept_counts(dice_onehot: np.ndarray) -> np.ndarray:
    """``(m, 64, 6)`` dice of each face kept by each id, from ``(m, 36)`` sorted-dice one-hots."""
    d = np.asarray(dice_onehot, np.float32).reshape(-1, 6, 6)
    return np.einsum("ai,bif->baf", KEPT, d)


NUM_SETS = len(SET_MASKS)
"""Circle sets (1..3 cells whose dice fit in six dice)."""

NUM_SET_VALUES = NUM_SETS + 5
"""Network outputs: one value per circle set, then one per row to cross out."""

CELL_BITS = ((SET_MASKS[:, None] >> np.arange(25)[None, :]) & 1).astype(bool)
"""``(NUM_SETS, 25)``: the cells of each set (cell ``5 r + c``)."""

_width = int(FEASIBLE.sum(axis=1).max())
FEASIBLE_SETS = np.full((len(FINAL), _width), NUM_SETS, dtype=np.int64)
"""``(462, w)``: the sets each final multiset can circle, padded with ``NUM_SETS`` (a -inf slot)."""
for _m, _row in enumerate(FEASIBLE):
    _idx = np.flatnonzero(_row)
    FEASIBLE_SETS[_m, : len(_idx)] = _idx

_POWERS = 7 ** np.arange(6)
KEEP_OF_CODE = np.zeros(7**6, dtype=np.int64)
"""Keep index (``planner.dice.KEEP``) of a kept multiset coded as ``sum(count_f * 7**f)``."""
KEEP_OF_CODE[KEEP @ _POWERS] = np.arange(len(KEEP))
FINAL_OF_CODE = np.zeros(7**6, dtype=np.int64)
"""Final multiset index (``planner.dice.FINAL``) by the same code."""
FINAL_OF_CODE[FINAL @ _POWERS] = np.arange(len(FINAL))
TRANSITION_T = np.ascontiguousarray(TRANSITION.T.astype(np.float32))
"""``(462, 924)``: ``TRANSITION`` transposed, so ``V0 @ TRANSITION_T`` values every keep."""
_CELLS_T = np.ascontiguousarray(CELL_BITS.T.astype(np.float32))
for _a in (CELL_BITS, _CELLS_T, FEASIBLE_SETS, KEEP_OF_CODE, FINAL_OF_CODE, TRANSITION_T):
    _a.setflags(write=False)

NEG = -1e9
"""Value of an impossible placement (finite, so sums and maxima stay defined)."""


class Layout:
    """Where the head reads the observation of a ``players``-player game (``observation.layout``)."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.dice = block_start("dice_onehot", players)
        self.two_rolls = block_start("rolls_left", players) + 2
        self.reroll = block_start("phase", players)  # phase one-hot: reroll comes first
        # Blocks the placement values must not depend on (they change within a turn).
        self.turn_blocks = [
            (block_start(name, players), block_start(name, players) + size)
            for name, size in (
                ("dice_onehot", DICE_SIZE),
                ("spent", 6),
                ("unspent_counts", 6),
                ("rolls_left", 3),
            )
        ]

    def free_cells(self, obs: np.ndarray) -> np.ndarray:
        """``(m, 25)`` bool: the observer's free cells (its circled and crossed bits come first)."""
        return (obs[:, :25] + obs[:, 25:50]) < 0.5

    def position(self, obs: np.ndarray) -> np.ndarray:
        """The observation with the dice and rolls-left blocks zeroed: the placement-value network's input."""
        x = np.array(obs, dtype=np.float32, copy=True)
        for a, b in self.turn_blocks:
            x[:, a:b] = 0.0
        return x


def placement_values(set_values: np.ndarray, free: np.ndarray) -> np.ndarray:
    """``V0``: ``(m, 462)`` from ``(m, NUM_SET_VALUES)`` values and ``(m, 25)`` free cells."""
    sv = np.asarray(set_values, np.float32)
    ok = (~free).astype(np.float32) @ _CELLS_T < 0.5  # (m, NUM_SETS): set within the free cells
    circ = np.concatenate([np.where(ok, sv[:, :NUM_SETS], NEG), np.full((len(sv), 1), NEG, np.float32)], 1)
    v0 = circ[:, FEASIBLE_SETS].max(axis=2)
    rows_free = free.reshape(-1, 5, 5).any(axis=2)
    cross = np.where(rows_free, sv[:, NUM_SETS:], NEG).max(axis=1)
    return np.where(v0 <= NEG / 2, cross[:, None], v0).astype(np.float32)  # nothing to circle: cross


def reroll_values(v0: np.ndarray, dice_onehot: np.ndarray, two_rolls: np.ndarray) -> np.ndarray:
    """``(m, 64)``: the exact expected ``V0`` of stopping (id 0) and of every reroll id."""
    ev = v0 @ TRANSITION_T  # one roll left: every keep
    if np.any(two_rolls):
        padded = np.concatenate([ev, np.full((len(ev), 1), NEG, np.float32)], axis=1)
        ev2 = padded[:, SUB_KEEPS].max(axis=2) @ TRANSITION_T
        ev = np.where(np.asarray(two_rolls, bool)[:, None], ev2, ev)
    codes = np.rint(kept_counts(dice_onehot)).astype(np.int64) @ _POWERS  # (m, 64)
    out = np.take_along_axis(ev, KEEP_OF_CODE[codes], axis=1)
    out[:, 0] = np.take_along_axis(v0, FINAL_OF_CODE[codes[:, :1]], axis=1)[:, 0]
    return out.astype(np.float32)
