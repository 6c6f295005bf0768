"""Evaluation: the one protocol every reported number comes from (``shelfie arena``, ``shelfie errors``, ``shelfie bench``).

Games and their results: :mod:`.protocol` plays the games (seats, common dice, duplicate
seatings, decision times) and summarises them; :mod:`.deals` names the deal sets; :mod:`.luck`
and :mod:`.values` measure luck and correct results for it; :mod:`.results` gives means with
intervals; :mod:`.evaluate` is the one-call evaluation of any agent and :mod:`.rate_agent` places it on
the ladder's rating scale (:mod:`.rating_scale`, :mod:`.ladder`); :mod:`.ratings` rates a
field; :mod:`.report` writes Markdown, model-card entries and training curves; :mod:`.cli` is
``shelfie arena``.

Rows of a results file (the benchmark's and any agent's): :mod:`.rows` evaluates an agent as one
row and draws learning curves, :mod:`.results_file` merges rows into a file, :mod:`.aggregate`
tables them over seeds (``shelfie bench report``).

:mod:`.analysis` measures decisions against rollout-valued positions: error rates
(``shelfie errors``), the labelled positions, game reviews.
"""

from __future__ import annotations

from shelfie_env.arena.deals import DEAL_SETS, deal_seeds
from shelfie_env.arena.evaluate import Evaluation, evaluate
from shelfie_env.arena.protocol import play_game, run_arena, summarise, wilson
from shelfie_env.arena.rate_agent import Rating, rate
from shelfie_env.arena.report import plot_run, record_in_card, to_markdown

__all__ = [
    "DEAL_SETS",
    "Evaluation",
    "Rating",
    "deal_seeds",
    "evaluate",
    "play_game",
    "plot_run",
    "rate",
    "record_in_card",
    "run_arena",
    "summarise",
    "to_markdown",
    "wilson",
]
