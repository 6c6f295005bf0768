"""The rules of the game: pure Python and numpy, no RL framework.

:class:`Game` is the engine (one explicit dice generator, exact
transitions, the JSON state dict); :mod:`~shelfie_env.game.actions` names the
120 action ids; :mod:`~shelfie_env.game.scoring` scores shelves;
:mod:`~shelfie_env.game.state_validation` checks a state dict field by field;
:mod:`~shelfie_env.game.render` draws a game as text;
:mod:`~shelfie_env.game.replay_check` checks a recorded game move by move against the rules
and its stored positions (replays and reviews read games through it). The rules in words:
``docs/rules.md``.
"""

from __future__ import annotations

from shelfie_env.game.actions import NUM_ACTIONS, action_name
from shelfie_env.game.engine import Game
from shelfie_env.game.errors import IllegalActionError, InvalidStateError

__all__ = ["NUM_ACTIONS", "Game", "IllegalActionError", "InvalidStateError", "action_name"]
