"""The evaluation arena: the one protocol every reported win rate comes from (``shelfie arena``).

Plays a set of bots against each other with fixed seeds and seat rotation,
in parallel over the CPU cores, and reports per pairing wins / ties / losses
with 95% Wilson intervals (overall and by the seat the bot played from) and
mean score ± sd, plus OpenSkill ratings
(Plackett-Luce, mu ± sigma) for the whole field. Results go to JSON and
Markdown; ``--plot RUN_DIR`` draws win rate vs training steps from a run's
``eval.jsonl``.

Protocol: for each group of ``players`` distinct bots (all pairs for two
players, every combination for more), game ``i`` (``i = 0..games-1``) is
dealt from dice seed ``seed + i`` and seats the group rotated by ``i``
places, so every bot sits in every seat equally often (exactly, when
``games`` is a multiple of ``players``) and the same dice are used for every
group. With ``players = 1`` every bot plays solo games on the same seeds.
Bots with a ``seed`` parameter (``random``) get ``seed + i``-derived seeds.
"""

from __future__ import annotations

from shelfie_env.arena.protocol import play_game, run_arena, summarise, wilson
from shelfie_env.arena.report import plot_run, record_in_card, to_markdown

__all__ = ["play_game", "plot_run", "record_in_card", "run_arena", "summarise", "to_markdown", "wilson"]
