"""shelfie-env: My Shelfie: The Dice Game as a PettingZoo/Gymnasium environment."""

from __future__ import annotations

from .actions import NUM_ACTIONS, action_name
from .engine import Game
from .errors import IllegalActionError, InvalidStateError
from .registration import register_envs

register_envs()  # gymnasium "shelfie/Solo-v0", "shelfie/Versus-v0"; pettingzoo "shelfie/shelfie_v0"

__version__ = "0.3.0"
__all__ = ["Game", "IllegalActionError", "InvalidStateError", "NUM_ACTIONS", "action_name", "__version__"]
