"""Evaluation arena: ``shelfie eval`` / ``shelfie arena``.

Plays a set of bots against each other with fixed seeds and seat rotation,
in parallel over the CPU cores, and reports per pairing wins / ties / losses
with 95% Wilson intervals and mean score ± sd, plus OpenSkill ratings
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

import argparse
import inspect
import itertools
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from .bots import Bot, act_on_game, make
from .engine import Game


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion ``k / n``."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def play_game(bots: Sequence[Bot], seed: int, max_steps: int = 10_000) -> list[int]:
    """Play one game, ``bots[s]`` in seat ``s``, dice from ``seed``; returns the final scores."""
    game = Game.new(len(bots), rng=np.random.default_rng(seed))
    steps = 0
    while not game.over:
        game.step(act_on_game(bots[game.current], game))
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"game with seed {seed} did not end after {max_steps} steps")
    return game.scores()
