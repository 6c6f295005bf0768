"""``planner``: exact expectimax over the rolls with a documented evaluation.

The bot lives in :mod:`shelfie_env.planner`; see ``docs/planner.md``.
"""

from __future__ import annotations

from ..planner import PlannerBot
from . import register

register("planner", PlannerBot)

__all__ = ["PlannerBot"]
