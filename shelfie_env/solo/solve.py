"""The solo solver: the optimal expected final score of every board between turns.

Every turn circles or crosses out at least one cell, so a board's successors have more filled
cells. The solver fills the table layer by layer, from the fullest boards (21 filled cells) down
to the empty board, each layer one parallel pass of :func:`._kernels.solve_layer`. After each
layer the values are flushed to ``values.f64`` in the run folder and the layer is recorded in
``progress.json``; a run started again on the same folder resumes after the last finished layer.
At the end the table file (:mod:`.table`) is written beside them.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from shelfie_env.bots.planner.dice import FINAL, KEEP, KEEP_INDEX
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS
from shelfie_env.game.scoring import ScoreTable
from shelfie_env.solo import _kernels as K
from shelfie_env.solo.boards import (
    BINOM,
    board_count,
    board_index,
    symmetric_boards,
    symmetric_points,
)
from shelfie_env.solo.table import RULES, SoloTable, write_table

LAYERS = range(21, -1, -1)
"""Filled cells of a board between turns, fullest first (four open rows of four and a closed row: 21)."""
EMPTY = (0, 0, 0, 0, 0)


def kernel_tables(points: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, ...]:
    """The constant arrays :func:`._kernels.turn_value` reads, for a points table."""
    table = ScoreTable(points)
    row_score = np.array(table.row_score, dtype=np.int64)
    col_score = np.array(table.col_score, dtype=np.int64)
    set_rows = np.array([[m >> (5 * r) & 31 for r in range(5)] for m in SET_MASKS.tolist()], dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum(FEASIBLE.sum(axis=1))]).astype(np.int64)
    idx = np.concatenate([np.flatnonzero(row) for row in FEASIBLE]).astype(np.int64)
    child = np.full((len(KEEP), 6), -1, dtype=np.int64)
    parent = np.full((len(KEEP), 6), -1, dtype=np.int64)
    for k, keep in enumerate(KEEP.tolist()):
        for f in range(6):
            if sum(keep) < 6:
                up = list(keep)
                up[f] += 1
                child[k, f] = KEEP_INDEX[tuple(up)]
            if keep[f] > 0:
                down = list(keep)
                down[f] -= 1
                parent[k, f] = KEEP_INDEX[tuple(down)]
    keep_of_final = np.array([KEEP_INDEX[tuple(m)] for m in FINAL.tolist()], dtype=np.int64)
    return (
        BINOM,
        row_score,
        col_score,
        set_rows,
        SET_MASKS.astype(np.int64),
        ptr,
        idx,
        child,
        parent,
        keep_of_final,
    )


def scratch_arrays(n_sets: int) -> tuple[np.ndarray, ...]:
    """Work arrays for one :func:`._kernels.turn_value` call."""
    return (
        np.empty(n_sets),
        np.empty(len(FINAL)),
        np.empty(len(KEEP)),
        np.empty(len(KEEP)),
        np.empty(len(FINAL)),
        np.empty(5, dtype=np.int64),
        np.empty(5, dtype=np.int64),
    )


class RunFolder:
    """A solver run's folder: ``values.f64`` (the table so far) and ``progress.json``."""

    def __init__(self, path: Path, points: tuple[tuple[int, ...], ...]) -> None:
        self.path = path
        self.points = points
        self.symmetric = symmetric_points(points)
        self.n_boards = board_count(self.symmetric)
        self.values_path = path / "values.f64"
        self.progress_path = path / "progress.json"

    def layers_done(self) -> list[int]:
        """Layers finished by an earlier run on this folder (``ValueError`` when it solved other points)."""
        if not self.progress_path.exists():
            return []
        try:
            progress = json.loads(self.progress_path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{self.progress_path}: not a solver progress file ({exc})") from None
        if progress.get("points") != [list(r) for r in self.points] or progress.get("rules") != RULES:
            raise ValueError(f"{self.path} holds a run for other points or rules: use another --out")
        size = self.values_path.stat().st_size if self.values_path.exists() else -1
        if size != 8 * self.n_boards:
            raise ValueError(
                f"{self.values_path} is missing or truncated: remove {self.path} and start again"
            )
        return [int(x) for x in progress.get("layers_done", [])]

    def open_values(self, fresh: bool) -> np.ndarray:
        """The values memory-mapped (NaN everywhere when ``fresh``)."""
        if fresh:
            arr = np.memmap(self.values_path, dtype=np.float64, mode="w+", shape=(self.n_boards,))
            arr[:] = np.nan
            arr.flush()
            return arr
        return np.memmap(self.values_path, dtype=np.float64, mode="r+", shape=(self.n_boards,))

    def record(self, layers: list[int], seconds: float) -> None:
        """Write progress atomically after the values are flushed."""
        tmp = self.progress_path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "points": [list(r) for r in self.points],
                    "rules": RULES,
                    "layers_done": layers,
                    "seconds": seconds,
                }
            )
        )
        os.replace(tmp, self.progress_path)


def check_writable(out: Path) -> None:
    """``ValueError`` naming ``out`` when a run folder cannot be made or written there."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-check"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"cannot write the run folder {out}: {exc.strerror or exc}") from None


def estimate_seconds(points: tuple[tuple[int, ...], ...], sample: int = 2000, seed: int = 0) -> float:
    """Seconds the whole solve should take on this machine's threads, timed on a sample of boards."""
    symmetric = symmetric_points(points)
    tabs = kernel_tables(points)
    n = board_count(symmetric)
    values = np.zeros(n)
    scratch = scratch_arrays(len(SET_MASKS))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=sample)
    boards = symmetric_boards() if symmetric else None
    st = np.empty(5, dtype=np.int64)
    K.turn_value(np.zeros(5, dtype=np.int64), values, symmetric, tabs, scratch)  # compile
    t0 = time.perf_counter()
    for i in picks:
        if boards is not None:
            st[:] = boards[i]
        else:
            K.unrank_full(int(i), st)
        K.turn_value(st, values, symmetric, tabs, scratch)
    per_board = (time.perf_counter() - t0) / sample
    threads = _threads()
    return per_board * n / threads


def _threads() -> int:
    import numba

    return int(numba.get_num_threads())


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def solve(
    points: tuple[tuple[int, ...], ...],
    out: Path,
    say: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
    stop_after: int | None = None,
) -> SoloTable | None:
    """Solve the solo game for ``points`` into the run folder ``out``; resumes a run there.

    Returns the finished table, or ``None`` when ``stop_after`` layers were solved first.
    """
    check_writable(out)
    run = RunFolder(out, points)
    done = run.layers_done()
    values = run.open_values(fresh=not done)
    tabs = kernel_tables(points)
    boards = symmetric_boards() if run.symmetric else np.empty((0, 5), dtype=np.uint8)
    threads = _threads()
    n_chunks = max(64, threads * 64)
    elapsed = 0.0
    if run.progress_path.exists():
        elapsed = float(json.loads(run.progress_path.read_text()).get("seconds", 0.0))
    if done:
        say(f"resuming {out}: {len(done)} of {len(LAYERS)} layers solved ({elapsed:.0f} s so far)")
    solved_now = 0
    total = run.n_boards
    finished_boards = 0
    for layer in LAYERS:
        if layer in done:
            continue
        if stop_after is not None and solved_now >= stop_after:
            say(f"stopped after {solved_now} layers; run the same command again to resume")
            return None
        t0 = time.perf_counter()
        count = K.solve_layer(layer, boards, run.n_boards, values, run.symmetric, tabs, n_chunks)
        values.flush()
        dt = time.perf_counter() - t0
        elapsed += dt
        done.append(layer)
        run.record(done, elapsed)
        solved_now += 1
        finished_boards += int(count)
        say(
            f"layer {len(done):2d}/{len(LAYERS)} ({layer:2d} filled cells): {count:,} boards in {dt:.1f} s "
            f"[{elapsed:.0f} s in all, peak memory {peak_memory_mb():.0f} MB]"
        )
    if np.isnan(values).any():
        raise RuntimeError(f"{int(np.isnan(values).sum())} boards were left unsolved")
    optimum = float(values[board_index(EMPTY, run.symmetric)])
    table = SoloTable(points, run.symmetric, np.asarray(values, dtype=np.float64), optimum)
    path = write_table(table, out / "table.npz")
    say(f"E* = {optimum:.6f}; {total:,} boards; {elapsed:.0f} s of solving; table written to {path}")
    return table
