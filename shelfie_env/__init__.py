"""shelfie-env: My Shelfie: The Dice Game as a PettingZoo/Gymnasium environment."""

from __future__ import annotations

from .actions import NUM_ACTIONS, action_name
from .engine import Game
from .errors import IllegalActionError, InvalidStateError

__version__ = "0.1.0"
__all__ = ["Game", "IllegalActionError", "InvalidStateError", "NUM_ACTIONS", "action_name", "__version__"]
