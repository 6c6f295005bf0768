"""The JAX twin of the rules (needs the ``jax`` extra): a ``pgx.Env`` with explicit chance.

``make(n)`` returns the env of an ``n``-seat table; ``dice_index`` / ``dice_of`` map six dice to
their outcome index (0..461, lexicographic order of the sorted tuples) and back. Tested equal to
:mod:`shelfie_env.game.engine`; the guide is ``docs/jax.md``.
"""

from __future__ import annotations

try:
    import jax  # noqa: F401
    import pgx  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without the extra
    raise ImportError(
        f"shelfie_env.jax_env needs the jax extra ({exc.name} is missing): pip install 'shelfie-env[jax]'"
    ) from None

from shelfie_env.jax_env.outcomes import NUM_OUTCOMES, dice_index, dice_of
from shelfie_env.jax_env.state import State
from shelfie_env.jax_env.twin import ShelfieJax, make

__all__ = ["NUM_OUTCOMES", "ShelfieJax", "State", "dice_index", "dice_of", "make"]
