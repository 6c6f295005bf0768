"""The RL benchmark: learners trained from random weights under one protocol, rated luck-aware, tabled.

* :mod:`~shelfie_env.benchmark.tasks` - the budget, the options every learner shares, the training env,
  its opponents and reward (:func:`train_env`, :func:`train_vec_env`);
* :mod:`~shelfie_env.benchmark.learners` - one adapter per learner (SB3, ppo_flat, ppo_afterstate, td,
  RLlib), checkpoints and exact resume;
* :mod:`~shelfie_env.benchmark.ablations` - the settings a run may change and the wrappers they need;
* :mod:`~shelfie_env.benchmark.cli` - ``shelfie bench`` and ``shelfie bench report``.

How a row is evaluated, the results file and the report's tables are the evaluation room's
(:mod:`shelfie_env.arena.rows`, :mod:`shelfie_env.arena.results_file`, :mod:`shelfie_env.arena.aggregate`);
this package hands the names a learner of your own needs on (``docs/examples/my_learner.py``).

The room sits above ``train``, ``rllib`` and ``arena``: it imports them, nothing but the top-level
``shelfie`` command imports it. Training needs the ``train`` extra, imported when a learner runs.
"""

from __future__ import annotations

from shelfie_env.arena.evaluate import ObsBot
from shelfie_env.arena.results_file import add_rows, load_results
from shelfie_env.arena.rows import evaluate_row, task_row
from shelfie_env.benchmark.tasks import budget, parse_args, parser, train_env, train_vec_env

__all__ = [
    "ObsBot",
    "add_rows",
    "budget",
    "evaluate_row",
    "load_results",
    "parse_args",
    "parser",
    "task_row",
    "train_env",
    "train_vec_env",
]
