"""A learned win-chance evaluation for 2-player games (numpy inference only).

The hand-built evaluation (:mod:`.evaluation`) predicts the final score
margin. ``ValueModel`` predicts instead the chance of *winning* from the
position right after the player's placement, from the hand-built terms plus
the raw shelves, with a small MLP fitted on recorded planner-vs-greedy games
(``training/planner_value.py``). The planner maximises its expected value
over the rolls exactly as before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .lines import shelf_values

FEATURE_VERSION = 1
BUILTIN = Path(__file__).with_name("value_2p.npz")
_BITS = np.arange(25, dtype=np.int64)


def _bits(masks: np.ndarray) -> np.ndarray:
    return ((masks[:, None] >> _BITS[None, :]) & 1).astype(np.float32)


def _free_rows(filled: np.ndarray) -> np.ndarray:
    """(n, 5) free cells per row."""
    return np.stack([5 - _bits((filled >> (5 * r)) & 31)[:, :5].sum(axis=1) for r in range(5)], axis=1)


def features(ctx, circled: np.ndarray, crossed: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``(n, F)`` features of candidate shelves of ``ctx.player`` (2-player games)."""
    circled = np.asarray(circled, dtype=np.int64)
    crossed = np.asarray(crossed, dtype=np.int64)
    parts: dict = {}
    value, triggered = ctx._evaluate(circled, crossed, parts)
    q = ctx.rivals[0]
    rc = np.full(circled.shape, ctx.game.circled[q], dtype=np.int64)
    rx = parts["riv_cross"][0]
    me_sec = shelf_values(ctx._zero, circled, crossed)
    riv_sec = shelf_values(ctx._zero, rc, rx)
    mine_free = np.sort(_free_rows(circled | crossed), axis=1)
    riv_free = np.sort(_free_rows(rc | rx), axis=1)
    n = circled.shape[0]
    scalars = np.stack(
        [
            value / 10.0,
            parts["me"] / 10.0,
            parts["riv"][0] / 10.0,
            me_sec / 10.0,
            riv_sec / 10.0,
            triggered.astype(np.float64),
            np.full(n, ctx.rounds / 5.0),
            np.full(n, 1.0 if q > ctx.player else 0.0),
        ],
        axis=1,
    )
    return np.concatenate(
        [
            scalars,
            mine_free / 5.0,
            riv_free / 5.0,
            _bits(circled),
            _bits(crossed),
            _bits(rc),
            _bits(rx),
        ],
        axis=1,
    ).astype(np.float32)


class ValueModel:
    """An MLP ``features -> P(win)`` stored as an ``.npz`` of layer weights."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        try:
            data = np.load(path)
        except (OSError, ValueError) as e:
            raise ValueError(f"cannot read the planner value model {path}: {e}") from e
        version = int(data["feature_version"]) if "feature_version" in data else -1
        if version != FEATURE_VERSION:
            raise ValueError(
                f"{path}: value model built for feature version {version}, this code has {FEATURE_VERSION}"
            )
        self.mean = data["mean"]
        self.std = data["std"]
        self.layers = []
        i = 0
        while f"w{i}" in data:
            self.layers.append((data[f"w{i}"], data[f"b{i}"]))
            i += 1
        if not self.layers:
            raise ValueError(f"{path}: no layers (w0, b0, ...) in the value model")

    def logit(self, x: np.ndarray) -> np.ndarray:
        h = (x[:, : len(self.mean)] - self.mean) / self.std
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0]

    def win_chance(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logit(x)))


_LOADED: dict[str, ValueModel] = {}


def load_value_model(name: str) -> ValueModel:
    """The model at path ``name`` (``"builtin"``: the one shipped in the package), loaded once."""
    path = str(BUILTIN) if name == "builtin" else name
    if path not in _LOADED:
        _LOADED[path] = ValueModel(path)
    return _LOADED[path]
