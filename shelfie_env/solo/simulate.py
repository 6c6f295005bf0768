"""Optimal solo games played fast: the compiled twin of ``solo-optimal`` for large samples.

:func:`._kernels.play_games` plays whole games against the table, every choice the option of highest
exact value, as :class:`.bot.SoloOptimalBot` does decision by decision (the twin is tested to choose
options of the same value). Its mean over many games estimates E* independently of the solver's
backward pass: :func:`optimal_scores`.
"""

from __future__ import annotations

import numpy as np

from shelfie_env.bots.planner.dice import FINAL, KEEP
from shelfie_env.solo import _kernels as K
from shelfie_env.solo.solve import kernel_tables
from shelfie_env.solo.table import SoloTable, shipped_table


def _codes(counts: np.ndarray) -> np.ndarray:
    """Index of each count vector, looked up by its base-7 code."""
    out = np.full(7**6, -1, dtype=np.int64)
    codes = (counts * (7 ** np.arange(5, -1, -1))).sum(axis=1)
    out[codes] = np.arange(len(counts))
    return out


def optimal_scores(games: int, seed: int, table: SoloTable | None = None) -> np.ndarray:
    """Final scores of ``games`` solo games played optimally on dice drawn from ``seed``."""
    table = table or shipped_table()
    out = np.zeros(games, dtype=np.float64)
    tabs = kernel_tables(table.points)
    K.play_games(games, seed, table.values, table.symmetric, tabs, _codes(FINAL), _codes(KEEP), out)
    return out
