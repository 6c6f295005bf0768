"""TD(λ) self-play of an after-state value network (``shelfie train --algo td``, or ``shelfie train-td``).

:mod:`.config` holds :class:`TDConfig`; :mod:`.td` the games, the λ-returns, the trainer and
what ``shelfie train`` runs. ``python -m shelfie_env.train.td ARGS`` is ``shelfie train-td ARGS``.
"""

from shelfie_env.train.command import Learner
from shelfie_env.train.td.config import TDConfig
from shelfie_env.train.td.td import TDTrainer, placement_index, play_games

LEARNER = Learner(
    TDConfig,
    "TD(lambda) self-play of an after-state value network, moves by the exact search over the dice",
    "shelfie_env.train.td.td",
)

__all__ = ["LEARNER", "TDConfig", "TDTrainer", "placement_index", "play_games"]
