"""shelfie-env: My Shelfie: The Dice Game as a PettingZoo/Gymnasium environment."""

from __future__ import annotations

from shelfie_env.envs.registration import register_envs
from shelfie_env.game.actions import NUM_ACTIONS, action_name
from shelfie_env.game.engine import Game
from shelfie_env.game.errors import IllegalActionError, InvalidStateError

register_envs()  # gymnasium "shelfie/Solo-v0", "shelfie/Versus-v0"; pettingzoo "shelfie/shelfie_v0"

__version__ = "0.6.1"
__all__ = ["Game", "IllegalActionError", "InvalidStateError", "NUM_ACTIONS", "action_name", "__version__"]
