"""A position's digest: hash bytes of a state dict, the same on every run, machine and version.

Bots that play one fixed policy draw their randomness from it (the ladder's levels, the rollout
bot's dice tapes), so a position always gets the same move.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def state_digest(state: dict[str, Any], salt: str, size: int) -> bytes:
    """``size`` bytes of SHAKE-256 over ``salt``, ``|`` and the state dict as canonical JSON."""
    key = json.dumps(state, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.shake_256(salt.encode() + b"|" + key).digest(size)


__all__ = ["state_digest"]
