"""``planner``: exact expectimax over the rolls with a documented evaluation.

See :mod:`shelfie_env.planner` and ``docs/planner.md``.
"""

from __future__ import annotations

from typing import Any

from ..engine import Game
from ..planner import PlannerBot
from . import register

register("planner", PlannerBot)

__all__ = ["PlannerBot", "Game", "Any"]
