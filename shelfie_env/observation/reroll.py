"""The ``reroll="faces"`` action option: reroll choices named by the faces they reroll.

The SPEC's reroll ids 1..63 name dice by their *positions* among the sorted dice, so the
same id rerolls a cat on one roll and a joker on the next. With ``reroll="faces"`` an
env reads ids 1..63 of the reroll phase as a set of faces instead: bit ``f`` of the id
set = reroll every die showing face ``f`` (0–4 the symbols, 5 the joker). An id is
legal when every face it names is on the table; id 0 (stop) and ids 64..119 keep their
SPEC meaning. The option gives up partial rerolls of a face (two of three cats) for ids
whose meaning does not move with the dice; each is translated to the SPEC id that
rerolls the same dice (:func:`to_spec`), so the game itself is unchanged.

numpy only; every function takes one decision (``dice`` of shape ``(6,)``) or a batch
(``(N, 6)``, masks ``(N, 120)``).
"""

from __future__ import annotations

import numpy as np

REROLL_MODES = ("ids", "faces")
"""``ids``: the SPEC's reroll ids (default); ``faces``: reroll ids as sets of faces (module doc)."""

_SETS = np.arange(64, dtype=np.int64)
_BITS = np.arange(6, dtype=np.int64)


def check_reroll_mode(reroll: object) -> str:
    """``reroll`` if it names a reroll encoding, else ``ValueError`` listing them."""
    if reroll not in REROLL_MODES:
        raise ValueError(f"reroll must be one of {', '.join(map(repr, REROLL_MODES))}, got {reroll!r}")
    return str(reroll)


def _present(dice: np.ndarray) -> np.ndarray:
    """Bit set of the faces showing, per decision."""
    return np.bitwise_or.reduce(np.left_shift(1, np.asarray(dice, dtype=np.int64)), axis=-1)


def faces_mask(mask: np.ndarray, dice: np.ndarray) -> np.ndarray:
    """The legal mask under ``reroll="faces"`` from the SPEC ``mask`` and the sorted ``dice`` (a new array)."""
    out = np.array(mask, copy=True)
    rerolling = np.asarray(mask)[..., 1:64].any(axis=-1)
    allowed = (_SETS[1:] & ~_present(dice)[..., None]) == 0
    out[..., 1:64] = (allowed & rerolling[..., None]).astype(out.dtype)
    return out


def to_spec(actions: np.ndarray | int, dice: np.ndarray) -> np.ndarray:
    """SPEC ids of ``actions`` chosen under ``reroll="faces"`` (ids 1..63 of a reroll decision translated).

    ``actions`` must be legal under :func:`faces_mask`; ids 0 and 64..119 pass unchanged.
    """
    a = np.asarray(actions, dtype=np.int64)
    d = np.asarray(dice, dtype=np.int64)
    positions = (a[..., None] >> d) & 1  # die i rerolled when its face is in the set
    spec = (positions << _BITS).sum(axis=-1)
    return np.where((a >= 1) & (a < 64), spec, a)


def from_spec(action: int, dice: np.ndarray) -> int | None:
    """The ``faces`` id that rerolls the same dice as SPEC ``action``, or ``None`` if it rerolls part of a face."""
    if not 1 <= action < 64:
        return int(action)
    d = np.asarray(dice, dtype=np.int64)
    rerolled = (action >> _BITS) & 1
    faces = int(np.bitwise_or.reduce(np.where(rerolled == 1, 1 << d, 0)))
    return faces if int(to_spec(faces, d)) == action else None
