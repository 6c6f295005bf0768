"""The 462 dice outcomes as constant arrays: their order, their probabilities, drawing one.

An outcome is a sorted six-dice tuple (faces 0..5, 5 the joker). Outcome ``i`` is the
``i``-th tuple in lexicographic order, the order of
``itertools.combinations_with_replacement(range(6), 6)`` and of the engine's
``tables.MULTISETS``: 0 is ``(0, 0, 0, 0, 0, 0)``, 1 is ``(0, 0, 0, 0, 0, 1)``, 461 is
``(5, 5, 5, 5, 5, 5)``.

A chance node keeps some dice (their per-face counts, ``kept``) and throws the others; the
outcome is the six dice after the throw. Its probability is the multinomial probability of the
thrown part, ``k! / prod(m_f!) / 6**k`` with ``m = counts(outcome) - kept`` and ``k`` dice thrown,
and zero when ``m`` has a negative entry (the outcome lacks a kept die).
"""

from __future__ import annotations

from math import factorial

import jax
import jax.numpy as jnp
import numpy as np

from shelfie_env.game.tables import MULTISETS

NUM_OUTCOMES = len(MULTISETS)  # 462
NUM_FACES = 6

_DICE = np.array(MULTISETS, dtype=np.int32)  # (462, 6), sorted tuples
_COUNTS = np.stack([(_DICE == f).sum(axis=1) for f in range(NUM_FACES)], axis=1).astype(np.int32)
_RADIX = 7 ** np.arange(NUM_FACES - 1, dtype=np.int32)  # counts of faces 0..4 in base 7
_INDEX_OF_KEY = np.full(7 ** (NUM_FACES - 1), -1, dtype=np.int32)
_INDEX_OF_KEY[_COUNTS[:, :5] @ _RADIX] = np.arange(NUM_OUTCOMES, dtype=np.int32)
_FACT = np.array([factorial(k) for k in range(7)], dtype=np.int32)

DICE = jnp.asarray(_DICE)
"""``DICE[i]``: the sorted faces of outcome ``i``, int32 (462, 6)."""
COUNTS = jnp.asarray(_COUNTS)
"""``COUNTS[i][f]``: how many dice of outcome ``i`` show face ``f``, int32 (462, 6)."""
INDEX_OF_KEY = jnp.asarray(_INDEX_OF_KEY)
FACT = jnp.asarray(_FACT)


def counts_index(counts: jax.Array) -> jax.Array:
    """The outcome index of per-face counts ``(..., 6)`` summing to 6."""
    return INDEX_OF_KEY[jnp.sum(counts[..., :5] * jnp.asarray(_RADIX), axis=-1)]


def dice_index(dice: jax.Array) -> jax.Array:
    """The outcome index (lexicographic, module doc) of six dice ``(..., 6)`` in any order; -1 where a
    face is outside 0..5 (no outcome, so ``step_chance`` leaves the state as it is)."""
    dice = jnp.asarray(dice, dtype=jnp.int32)
    counts = jnp.sum(jax.nn.one_hot(dice, NUM_FACES, dtype=jnp.int32), axis=-2)
    return jnp.where(jnp.sum(counts, axis=-1) == NUM_FACES, counts_index(counts), -1)


def dice_of(index: jax.Array) -> jax.Array:
    """The sorted six faces ``(..., 6)`` of outcome ``index``."""
    return DICE[jnp.asarray(index, dtype=jnp.int32)]


def outcome_probs(kept: jax.Array) -> jax.Array:
    """Probabilities ``(462,)`` of the outcomes of a throw that keeps the dice counted by ``kept`` (6,)."""
    thrown = COUNTS - kept[None, :]  # (462, 6)
    k = NUM_FACES - jnp.sum(kept)
    possible = jnp.all(thrown >= 0, axis=1)
    ways = FACT[k] // jnp.prod(FACT[jnp.clip(thrown, 0, 6)], axis=1)  # exact integers <= 720
    return jnp.where(possible, ways.astype(jnp.float32) / (6**k).astype(jnp.float32), 0.0)


def draw_outcome(kept: jax.Array, key: jax.Array) -> jax.Array:
    """One outcome index drawn for a throw that keeps ``kept`` (6,): the others thrown as fair dice."""
    k = NUM_FACES - jnp.sum(kept)
    faces = jax.random.randint(key, (NUM_FACES,), 0, NUM_FACES, dtype=jnp.int32)
    thrown = jax.nn.one_hot(faces, NUM_FACES, dtype=jnp.int32) * (jnp.arange(NUM_FACES) < k)[:, None]
    return counts_index(kept + jnp.sum(thrown, axis=0))
