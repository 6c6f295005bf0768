"""``shelfie_env.engine`` is :mod:`shelfie_env.game.engine` under its short, stable name.

``from shelfie_env.engine import Game`` keeps working; both names are one module object.
"""

import sys

from shelfie_env.game import engine as _engine

sys.modules[__name__] = _engine
