"""The RL benchmark: learners trained from random weights under one protocol, rated luck-aware, tabled.

* :mod:`~shelfie_env.benchmark.protocol` - budget, training opponents and reward (:func:`train_env`,
  :func:`train_vec_env`), the evaluation of a row (:func:`evaluate_row`) and learning curves;
* :mod:`~shelfie_env.benchmark.learners` - one adapter per learner (SB3, ppo_flat, ppo_afterstate, td,
  RLlib), checkpoints and exact resume;
* :mod:`~shelfie_env.benchmark.ablations` - the settings a run may change and the wrappers they need;
* :mod:`~shelfie_env.benchmark.results` - the results file, each finished row merged in;
* :mod:`~shelfie_env.benchmark.report` - the tables, the rliable aggregate over seeds, the curves;
* :mod:`~shelfie_env.benchmark.cli` - ``shelfie bench`` and ``shelfie bench report``.

The room sits above ``train``, ``rllib`` and ``arena``: it imports them, nothing but the top-level
``shelfie`` command imports it. Training needs the ``train`` extra, imported when a learner runs.
"""

from __future__ import annotations

from shelfie_env.benchmark.protocol import (
    ObsBot,
    budget,
    evaluate_row,
    parse_args,
    parser,
    train_env,
    train_vec_env,
)
from shelfie_env.benchmark.results import add_rows, load_results

__all__ = [
    "ObsBot",
    "add_rows",
    "budget",
    "evaluate_row",
    "load_results",
    "parse_args",
    "parser",
    "train_env",
    "train_vec_env",
]
