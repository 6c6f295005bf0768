"""The solo value table as a file: values plus a fingerprint checked on every load.

A table file is a NumPy ``.npz`` (read without pickle) holding ``values`` (float64, one per
board, :mod:`.boards` order) and ``header``, a JSON text: the format, the rules version, the
points, whether the rows are interchangeable, the number of boards, E* (the empty board's value)
and the SHA-256 of the values. A file whose header, size or checksum does not match is refused
with one line (:class:`TableError`), never read as wrong values.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from shelfie_env.game.scoring import DEFAULT_POINTS, validate_points
from shelfie_env.solo.boards import board_count, board_index

FORMAT = "shelfie-solo-table"
RULES = 1
"""Version of the rules the table was solved under (docs/rules.md); a rules change bumps it."""
MAX_HEADER = 4096
SHIPPED = "solo_table.npz"
"""The default points' table, package data in ``shelfie_env/data/solo/``."""
SOLVE_COMMAND = "shelfie solo solve --out runs/solo"


class TableError(ValueError):
    """A table file that is missing, damaged, or solved for other points or rules."""


@dataclass(frozen=True)
class SoloTable:
    """Optimal expected final scores of every solo board between turns."""

    points: tuple[tuple[int, ...], ...]
    symmetric: bool
    values: np.ndarray
    optimum: float

    def fingerprint(self) -> str:
        """Short id of (points, rules, E*): the first 12 hex digits of their SHA-256."""
        text = json.dumps(
            {"points": [list(r) for r in self.points], "rules": RULES, "optimum": round(self.optimum, 9)}
        )
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def value(self, states: tuple[int, ...]) -> float:
        """Value of a board between turns given by its row states."""
        return float(self.values[board_index(states, self.symmetric)])


def _digest(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values, dtype="<f8").tobytes()).hexdigest()


def write_table(table: SoloTable, path: Path) -> Path:
    """Write ``table`` to ``path`` (a compressed ``.npz``)."""
    header = {
        "format": FORMAT,
        "rules": RULES,
        "points": [list(r) for r in table.points],
        "symmetric": table.symmetric,
        "boards": int(table.values.size),
        "optimum": table.optimum,
        "sha256": _digest(table.values),
    }
    with open(path, "wb") as f:
        np.savez_compressed(
            f, values=np.asarray(table.values, dtype="<f8"), header=np.array(json.dumps(header))
        )
    return path


def read_table(path: Path | str, points: tuple[tuple[int, ...], ...] | None = None) -> SoloTable:
    """Read and check a table file; ``points`` (when given) must be the ones it was solved for."""
    name = str(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            if set(data.files) != {"values", "header"}:
                raise TableError(f"{name}: not a solo table (it holds {sorted(data.files)})")
            raw_header = data["header"]
            if raw_header.dtype.kind != "U" or raw_header.shape != () or len(str(raw_header)) > MAX_HEADER:
                raise TableError(f"{name}: not a solo table (bad header)")
            header = json.loads(str(raw_header))
            values = data["values"]
    except TableError:
        raise
    except FileNotFoundError:
        raise TableError(f"{name}: no such table file") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise TableError(f"{name}: not a readable solo table ({type(exc).__name__}: {exc})") from None
    return _checked(name, header, values, points)


def _checked(
    name: str, header: object, values: np.ndarray, points: tuple[tuple[int, ...], ...] | None
) -> SoloTable:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TableError(f"{name}: not a solo table (no {FORMAT} header)")
    if header.get("rules") != RULES:
        raise TableError(
            f"{name}: solved under rules version {header.get('rules')!r}, these rules are {RULES}"
        )
    try:
        table_points = validate_points(header.get("points"))
    except ValueError as exc:
        raise TableError(f"{name}: bad points in the header ({exc})") from None
    if points is not None and table_points != validate_points(points):
        raise TableError(
            f"{name}: solved for points {[list(r) for r in table_points]}, not the ones asked for"
        )
    symmetric = bool(header.get("symmetric"))
    expected = board_count(symmetric)
    if values.dtype != np.dtype("<f8") or values.shape != (expected,):
        raise TableError(
            f"{name}: truncated or damaged: {values.size:,} values of {values.dtype}, expected {expected:,} float64"
        )
    if header.get("boards") != expected or header.get("sha256") != _digest(values):
        raise TableError(f"{name}: damaged: its values do not match the checksum in its header")
    optimum = float(values[board_index((0, 0, 0, 0, 0), symmetric)])
    if header.get("optimum") != optimum:
        raise TableError(f"{name}: damaged: E* in the header is not the empty board's value")
    return SoloTable(table_points, symmetric, values, optimum)


_CACHE: dict[str, SoloTable] = {}


def shipped_table() -> SoloTable:
    """The default points' table shipped with the package (read and checked once)."""
    if SHIPPED not in _CACHE:
        ref = resources.files("shelfie_env.data").joinpath("solo").joinpath(SHIPPED)
        with resources.as_file(ref) as path:
            if not Path(path).exists():
                raise TableError(f"the shipped solo table is missing; rebuild it with `{SOLVE_COMMAND}`")
            _CACHE[SHIPPED] = read_table(path, DEFAULT_POINTS)
    return _CACHE[SHIPPED]
