"""OpenSpiel (the ``openspiel`` extra): ``import shelfie_env.openspiel`` registers ``python_shelfie``.

    import pyspiel
    import shelfie_env.openspiel  # noqa: F401
    game = pyspiel.load_game("python_shelfie", {"players": 3})

Chance nodes are the first roll and every reroll (:mod:`.chance`); decisions use
our action ids (docs/rules.md). :func:`state_dict` / :func:`from_state_dict`
convert positions; :mod:`.bots` has ``MCTSBot`` as one of our bots and our bots
as OpenSpiel bots. docs/openspiel.md is the guide.
"""

from __future__ import annotations

try:
    import pyspiel  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "shelfie_env.openspiel needs OpenSpiel: pip install 'shelfie-env[openspiel]' (open_spiel 2.x)"
    ) from exc

from shelfie_env.openspiel.chance import FACES, MAX_CHANCE_OUTCOMES, OUTCOMES, outcome_id
from shelfie_env.openspiel.convert import engine_game, from_engine, from_state_dict, load, state_dict
from shelfie_env.openspiel.game import GAME_TYPE, SHORT_NAME, ShelfieGame, ShelfieObserver, ShelfieState

__all__ = [
    "FACES",
    "GAME_TYPE",
    "MAX_CHANCE_OUTCOMES",
    "OUTCOMES",
    "SHORT_NAME",
    "ShelfieGame",
    "ShelfieObserver",
    "ShelfieState",
    "engine_game",
    "from_engine",
    "from_state_dict",
    "load",
    "outcome_id",
    "state_dict",
]
