"""The benchmark's results file (``docs/benchmark_results.json``): rows merged by learner, variant, seed and
budget.

``{"protocols": {id: description}, "rows": [...]}``; a row is one trained run (or one bot) under one
protocol: :data:`~shelfie_env.arena.rows.PROTOCOL` rows come from
:func:`~shelfie_env.arena.rows.evaluate_row`, older rows without a ``protocol`` key are
:data:`~shelfie_env.arena.rows.PLAIN`. :func:`add_rows` merges rows in as each run finishes,
:func:`load_results` reads the file and names what is wrong with a bad one.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from shelfie_env.arena.rows import PLAIN, PROTOCOL, PROTOCOLS
from shelfie_env.clip import printable
from shelfie_env.jsonfile import JSONFileError, read_json_file

MAX_RESULTS_BYTES = 64 * 2**20
"""Largest results file read (the shipped one, every benchmark row so far, is about 250 KB)."""
DEFAULT_OUT = Path("artifacts/benchmark.json")
"""Where ``shelfie bench`` writes its rows unless ``--out`` says otherwise."""

class ResultsFileError(ValueError):
    """A results file that is missing, not JSON, or not shaped like the benchmark's."""


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row.get("protocol", PLAIN),
        row.get("task", "versus-2p"),
        row["learner"],
        row.get("variant", ""),
        row["seed"],
        row["steps"],
        row["mode"],
    )


def row_name(row: dict[str, Any]) -> str:
    """A row's learner with its ablation ``variant``, if it has one: ``maskable_ppo (ent_coef=0.0)``."""
    name = f"{row['learner']} ({row['variant']})" if row.get("variant") else row["learner"]
    return printable(str(name))


def load_results(path: str | Path) -> dict[str, Any]:
    """The results file at ``path``: ``{"protocols": {...}, "rows": [...]}``; :class:`ResultsFileError`
    names the file and what is wrong with it. Rows without a ``protocol`` are :data:`PLAIN`."""
    path = Path(path)
    if not path.is_file():
        raise ResultsFileError(f"{path}: no such file (write it with shelfie bench --out {path})")
    try:
        data = read_json_file(path, "results file", MAX_RESULTS_BYTES)
    except JSONFileError as exc:
        raise ResultsFileError(f"{path}: not a JSON file ({str(exc).partition(': ')[2]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ResultsFileError(
            f'{path}: expected a JSON object with a "rows" list (a benchmark results file)'
        )
    protocols = dict(data.get("protocols") or {})
    if "protocol" in data and PLAIN not in protocols:  # a file with one protocol block: the plain arena's
        protocols[PLAIN] = data["protocol"]
    for i, row in enumerate(data["rows"]):
        where = f"{path}: row {i}"
        if not isinstance(row, dict):
            raise ResultsFileError(f"{where}: expected an object, got {type(row).__name__}")
        missing = [k for k in ("learner", "seed", "steps", "mode") if k not in row]
        if missing:
            raise ResultsFileError(f"{where}: missing {', '.join(missing)}")
        if not isinstance(row["learner"], str) or not row["learner"]:
            raise ResultsFileError(f"{where}: learner must be a name, got {row['learner']!r}")
        if isinstance(row["steps"], bool) or not isinstance(row["steps"], int) or row["steps"] < 0:
            raise ResultsFileError(
                f"{where} ({row['learner']}): steps must be a whole number >= 0, got {row['steps']!r}"
            )
        if row["seed"] is not None and (isinstance(row["seed"], bool) or not isinstance(row["seed"], int)):
            raise ResultsFileError(
                f"{where} ({row['learner']}): seed must be an integer or null, got {row['seed']!r}"
            )
        row.setdefault("protocol", PLAIN)
        if row["protocol"] == PROTOCOL and row["mode"] != "stopped":
            g = row.get("vs_greedy")
            ok = isinstance(g, dict) and all(
                isinstance(g.get(side), dict) and isinstance(g[side].get("score_rate"), (int, float))
                for side in ("raw", "corrected")
            )
            if not ok:
                raise ResultsFileError(
                    f"{where} ({row['learner']}, seed {row['seed']}): a {PROTOCOL} row needs vs_greedy with "
                    "raw and corrected score rates"
                )
    return {"protocols": protocols, "rows": data["rows"]}


def add_rows(path: str | Path, rows: list[dict[str, Any]]) -> Path:
    """Merge ``rows`` into the results file at ``path`` (created if missing): a new row replaces an old
    one of the same protocol, learner, variant, seed, budget and mode; the others stay. Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):  # runs finishing side by side merge one after the other
        return _merge(path, rows)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock for ``path`` while the block runs (a file in the temporary folder; POSIX only)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:16]
    with (Path(tempfile.gettempdir()) / f"shelfie-bench-{digest}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _merge(path: Path, rows: list[dict[str, Any]]) -> Path:
    old = load_results(path) if path.exists() else {"protocols": {}, "rows": []}
    for row in rows:
        row.setdefault("protocol", PROTOCOL)
    new = {_key(r) for r in rows}
    kept = [r for r in old["rows"] if _key(r) not in new]
    merged = sorted(
        kept + rows,
        key=lambda r: (
            r["protocol"] != PROTOCOL,
            r["steps"] > 0,
            row_name(r),
            r["steps"],
            r["seed"] or 0,
            r["mode"],
        ),
    )
    protocols = {
        **old["protocols"],
        **{p: PROTOCOLS[p] for p in {r["protocol"] for r in rows} if p in PROTOCOLS},
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"protocols": protocols, "rows": merged}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
