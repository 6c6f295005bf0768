"""The ``reroll="keep"`` action option: reroll choices named by the faces kept.

The SPEC's reroll ids 1..63 name dice by their *positions* among the sorted dice, so the
same id rerolls a cat on one roll and a joker on the next. With ``reroll="keep"`` an env
reads ids 1..63 of the reroll phase as the faces to keep instead: id ``k`` (``1..62``)
keeps every die of each symbol ``f`` (0–4) whose bit ``f`` is set in ``k`` and, when bit 5
is set, one joker; it rerolls all the other dice. Id 63 rerolls all six. "Chase the cats
with a joker" is then one id on every roll. An id is legal when it rerolls at least one
die (faces that are not showing may be named: they keep nothing). Id 0 (stop) and ids
64..119 keep their SPEC meaning. The option gives up partial rerolls of a symbol (two of
three cats) and keeping two jokers; each id is translated to the SPEC id that rerolls the
same dice (:func:`to_spec`), so the game itself is unchanged.

numpy only; every function takes one decision (``dice`` of shape ``(6,)``) or a batch
(``(N, 6)``, masks ``(N, 120)``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from shelfie_env.game.engine import Game
from shelfie_env.game.errors import IllegalActionError

REROLL_MODES = ("ids", "keep")
"""``ids``: the SPEC's reroll ids (default); ``keep``: reroll ids as the faces kept (module doc)."""

ALL = 63
_KEEP = np.arange(64, dtype=np.int64)
_KEEP[ALL] = 0  # id 63 keeps nothing
_BITS = np.arange(6, dtype=np.int64)


def check_reroll_mode(reroll: object) -> str:
    """``reroll`` if it names a reroll encoding, else ``ValueError`` listing them."""
    if reroll not in REROLL_MODES:
        raise ValueError(f"reroll must be one of {', '.join(map(repr, REROLL_MODES))}, got {reroll!r}")
    return str(reroll)


def keep_mask(mask: np.ndarray, dice: np.ndarray) -> np.ndarray:
    """The legal mask under ``reroll="keep"`` from the SPEC ``mask`` and the sorted ``dice`` (a new array)."""
    out = np.array(mask, copy=True)
    rerolling = np.asarray(mask)[..., 1:64].any(axis=-1)
    d = np.asarray(dice, dtype=np.int64)
    kept = _kept(np.broadcast_to(_SETS, (*d.shape[:-1], 64))[..., None], d[..., None, :])
    rerolls_some = (kept == 0).any(axis=-1)[..., 1:]
    out[..., 1:64] = (rerolls_some & rerolling[..., None]).astype(out.dtype)
    return out


def _kept(a: np.ndarray, d: np.ndarray) -> np.ndarray:
    """1 where die ``d`` is kept by keep id ``a`` (broadcast over both)."""
    kept = (_KEEP[np.clip(a, 0, 63)] >> d) & 1
    joker = d == 5  # dice are sorted, jokers last: the first of them is the one kept
    first = joker & (np.cumsum(joker, axis=-1) == 1)
    return np.where(joker, kept * first, kept)


_SETS = np.arange(64, dtype=np.int64)


def to_spec(actions: np.ndarray | int, dice: np.ndarray) -> np.ndarray:
    """SPEC ids of ``actions`` chosen under ``reroll="keep"`` (ids 1..63 of a reroll decision translated).

    ``actions`` must be legal under :func:`keep_mask`; ids 0 and 64..119 pass unchanged.
    """
    a = np.asarray(actions, dtype=np.int64)
    d = np.asarray(dice, dtype=np.int64)
    kept = _kept(a[..., None], d)
    spec = ((1 - kept) << _BITS).sum(axis=-1)
    return np.where((a >= 1) & (a < 64), spec, a)


def from_spec(action: int, dice: np.ndarray) -> int | None:
    """The ``keep`` id (the faces showing that are kept) rerolling the same dice as SPEC ``action``,
    or ``None`` when it rerolls part of a face."""
    if not 1 <= action < 64:
        return int(action)
    d = np.asarray(dice, dtype=np.int64)
    kept = 1 - ((action >> _BITS) & 1)
    faces = int(np.bitwise_or.reduce(np.where(kept == 1, 1 << d, 0)))
    keep = faces if faces else ALL
    return keep if int(to_spec(keep, d)) == action else None


def reroll_mask(reroll: str, mask: np.ndarray, dice: np.ndarray) -> np.ndarray:
    """The legal mask in reroll encoding ``reroll`` (``mask`` itself for ``ids``)."""
    return mask if reroll == "ids" else keep_mask(mask, dice)


def spec_actions(reroll: str, actions: np.ndarray | int, dice: np.ndarray) -> np.ndarray:
    """SPEC ids of ``actions`` chosen in reroll encoding ``reroll``."""
    return np.asarray(actions) if reroll == "ids" else to_spec(actions, dice)


def game_mask(reroll: str, game: Game) -> np.ndarray:
    """``game.legal_mask()`` (int8, 120) in reroll encoding ``reroll``."""
    mask = game.legal_mask()
    return mask if reroll == "ids" else reroll_mask(reroll, mask, np.asarray(game.dice))


def game_action(reroll: str, game: Game, action: Any) -> Any:
    """The SPEC id of ``action`` chosen in encoding ``reroll`` on ``game``.

    Anything but a reroll id of a reroll decision passes unchanged (the engine judges it);
    a reroll id that is not legal in the encoding raises :class:`IllegalActionError`.
    """
    if reroll == "ids" or isinstance(action, (bool, np.bool_)):
        return action
    try:
        a = operator.index(action)
    except TypeError:
        return action
    spec_mask = game.legal_mask()
    if not 1 <= a < 64 or not spec_mask[1:64].any():
        return action
    dice = np.asarray(game.dice)
    if not reroll_mask(reroll, spec_mask, dice)[a]:
        raise IllegalActionError(a, f"with reroll={reroll!r} id {a} rerolls no die here (0 stops rolling)")
    return int(spec_actions(reroll, a, dice))
