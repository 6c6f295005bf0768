"""The evaluation arena: the one protocol every reported win rate comes from (``shelfie arena``).

:mod:`.protocol` plays the games (seats, common dice, duplicate seatings, decision
times) and summarises them; :mod:`.deals` names the deal sets; :mod:`.luck` and
:mod:`.values` measure luck and correct results for it; :mod:`.results` gives
means with intervals; :mod:`.evaluate` is the one-call evaluation of any agent;
:mod:`.ratings` rates the field; :mod:`.report` writes Markdown, model-card
entries and training curves; :mod:`.cli` is the command line. How far from perfect play:
:mod:`.rollouts` values every action of a position by rollouts, :mod:`.positions` holds the
labelled positions, :mod:`.errors` gives a bot's error rate against them, and
:mod:`.rollout_bot` is the ``rollout`` bot built on those rollouts (registered by name in
:mod:`shelfie_env.bots`, which does not import this room).
"""

from __future__ import annotations

from shelfie_env.arena.deals import DEAL_SETS, deal_seeds
from shelfie_env.arena.evaluate import Evaluation, evaluate
from shelfie_env.arena.protocol import play_game, run_arena, summarise, wilson
from shelfie_env.arena.report import plot_run, record_in_card, to_markdown

__all__ = [
    "DEAL_SETS",
    "Evaluation",
    "deal_seeds",
    "evaluate",
    "play_game",
    "plot_run",
    "record_in_card",
    "run_arena",
    "summarise",
    "to_markdown",
    "wilson",
]
