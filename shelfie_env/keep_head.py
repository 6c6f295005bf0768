"""What each reroll id keeps, as features a policy head can score.

A reroll id (SPEC §6) names *positions* of the sorted dice, so which faces it
keeps depends on the roll: id 3 keeps dice 2..5, whatever they show. A policy
that scores ids with one flat output per id must learn that mapping for every
roll. The *keep head* instead describes each id by the multiset it keeps: for
each face 0..5, how many dice of that face stay (0..6), one-hot, 6 x 7 = 42
numbers. Id 0 (stop) keeps all six dice. One shared scorer then rates every id
from the position embedding and these 42 numbers, so "keep the three cats" is
the same input whichever positions the cats occupy.

Pure numpy: used by :class:`~shelfie_env.checkpoint.NumpyPolicy` and, through
the same :data:`KEPT` table, by the torch policy in ``training/policy.py``.
"""

from __future__ import annotations

import numpy as np

from .observation import block_start

NUM_REROLL_IDS = 64
"""Ids 0..63: stop (0) and the rerolls 1..63."""

DICE_SIZE = 36
"""Numbers of the sorted-dice one-hot block (6 positions x 6 faces)."""

REROLL_FLAG = block_start("phase", 1) - block_start("dice_onehot", 1)
"""Offset, from the start of the observation's sorted-dice block, of the phase one-hot's
"reroll" entry (``observation.layout``): only those rows can reroll."""

KEEP_FEATURES = 42
"""Features per id: for each face 0..5 a one-hot of the kept count 0..6."""

KEPT = ((np.arange(NUM_REROLL_IDS)[:, None] >> np.arange(6)[None, :]) & 1 == 0).astype(np.float32)
"""``(64, 6)``: 1 where reroll id ``a`` keeps the die at sorted position ``i``."""
KEPT.setflags(write=False)


def kept_counts(dice_onehot: np.ndarray) -> np.ndarray:
    """``(m, 64, 6)`` dice of each face kept by each id, from ``(m, 36)`` sorted-dice one-hots."""
    d = np.asarray(dice_onehot, np.float32).reshape(-1, 6, 6)
    return np.einsum("ai,bif->baf", KEPT, d)


def keep_features(dice_onehot: np.ndarray) -> np.ndarray:
    """``(m, 64, 42)`` float32: the one-hot kept count of each face, for each id."""
    counts = np.rint(kept_counts(dice_onehot)).astype(np.int64)
    feats = (counts[..., None] == np.arange(7)).astype(np.float32)
    return feats.reshape(counts.shape[0], NUM_REROLL_IDS, KEEP_FEATURES)
