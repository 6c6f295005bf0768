"""The evaluation arena: the one protocol every reported win rate comes from (``shelfie arena``).

:mod:`.protocol` plays the games (seat rotation, shared dice, decision times) and
summarises them; :mod:`.ratings` rates the field; :mod:`.report` writes Markdown,
model-card entries and training curves; :mod:`.cli` is the command line.
"""

from __future__ import annotations

from shelfie_env.arena.protocol import play_game, run_arena, summarise, wilson
from shelfie_env.arena.report import plot_run, record_in_card, to_markdown

__all__ = ["play_game", "plot_run", "record_in_card", "run_arena", "summarise", "to_markdown", "wilson"]
