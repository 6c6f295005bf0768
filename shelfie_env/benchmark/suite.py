"""The benchmark's tasks: four games under one protocol, each scored on a scale that means the same everywhere.

``shelfie bench tasks`` lists them; ``shelfie bench --task T`` trains and rates on one.

* ``versus-2p`` — the learner against one rival (``shelfie/Versus-v0``, 2 players);
* ``field-3p``, ``field-4p`` — the learner in one seat against the rest of a 3- or 4-player table;
* ``solo`` — ``shelfie/Solo-v0``: one player, the final score.

Training opponents of the versus and field tasks: every other seat ``random`` or ``greedy``, 1/2 each,
drawn per game and seat; the learner's seat drawn per game. The score of a versus or field task is the
learner's rating on that table size's ladder (:func:`shelfie_env.arena.rate`, with its 95 % interval);
at two players the luck-corrected score rate against ``greedy`` stands beside it. The score of ``solo`` is
the mean final score on the ``test`` deals with its 95 % interval.

Every task also has a **normalized score**, 0 for ``random`` and 100 for the task's top, so tasks
aggregate: on a ladder, ``100 x (rating - random's) / (the top level's - random's)`` with the two
ratings fixed per table size (:data:`~shelfie_env.arena.task_score.RATING_ENDS`); on ``solo``,
``100 x (mean - random's) / (E* - random's)`` with random's mean measured on the ``test`` deals
(package data) and E* the solo game's exact optimum (:mod:`shelfie_env.arena.solo_score`,
:mod:`shelfie_env.solo`).
Both live with the evaluation code (:mod:`shelfie_env.arena.task_score`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Task:
    """One benchmark task: the env a learner trains on, the table size and how a result is scored."""

    name: str
    env_id: str
    players: int
    options: tuple[tuple[str, Any], ...]
    score: str
    opponents: str = "every other seat random or greedy, 1/2 each, drawn per game and seat; learner seat drawn per game"

    @property
    def env_options(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def rated(self) -> bool:
        """True when the score is a rating on a ladder (every task but ``solo``)."""
        return self.players > 1

    def describe(self) -> dict[str, Any]:
        """The task as ``shelfie bench tasks --json`` writes it."""
        return {
            "task": self.name, "env_id": self.env_id, "env_options": self.env_options,
            "players": self.players, "opponents": self.opponents if self.players > 1 else "none",
            "score": self.score, "normalized": normalization(self),
        }


TASKS: dict[str, Task] = {
    "versus-2p": Task(
        "versus-2p", "shelfie/Versus-v0", 2, (("num_players", 2),),
        "rating on the 2-player ladder [95 %] (rate()); corrected score rate against greedy beside it",
    ),
    "field-3p": Task(
        "field-3p", "shelfie/Versus-v0", 3, (("num_players", 3),),
        "rating on the 3-player ladder [95 %] (rate(), alone against fields of a level)",
    ),
    "field-4p": Task(
        "field-4p", "shelfie/Versus-v0", 4, (("num_players", 4),),
        "rating on the 4-player ladder [95 %] (rate(), alone against fields of a level)",
    ),
    "solo": Task(
        "solo", "shelfie/Solo-v0", 1, (),
        "mean final score on the test deals [95 %]",
    ),
}
"""Every task by name, in the order ``shelfie bench tasks`` lists them."""
DEFAULT_TASK = "versus-2p"


def task(name: str) -> Task:
    """The task called ``name``; ``ValueError`` listing the tasks for any other name."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; the tasks are {', '.join(TASKS)}") from None


def task_of_players(players: int) -> Task:
    """The task played at ``players`` (1: ``solo``)."""
    for t in TASKS.values():
        if t.players == players:
            return t
    raise ValueError(f"no task at {players} players; the tasks are {', '.join(TASKS)}")


def normalization(t: Task) -> str:
    """How ``t``'s normalized score is computed, in words."""
    if t.rated:
        from shelfie_env.arena.task_score import ladder_ends

        low, high = ladder_ends(t.players)
        return (f"100 x (rating - {low:g}) / ({high:g} - {low:g}), fixed: random's and {top_name(t.players)}'s "
                f"ratings on the {t.players}-player ladder the baseline was scored on")
    return "100 x (mean score - random's) / (E* - random's), test deals (E*: the exact optimum)"


def top_name(players: int) -> str:
    """The ladder's top level (normalized 100 on a rated task)."""
    from shelfie_env.bots.levels import LEVELS

    return LEVELS[-1].spec


BASELINE_BUDGET = 1_000_000
BASELINE_SEEDS = (0, 1, 2)
BASELINES: dict[str, tuple[str, ...]] = {
    "ppo_flat": ("--algos", "ppo_flat", "--reroll", "keep", "--score-reward", "0.02", "--flat", "stop_bias=2.8"),
    "maskable_ppo": ("--algos", "maskable_ppo", "--obs", "features", "--reroll", "keep", "--score-reward", "0.02"),
    "td": ("--algos", "td"),
    "ppo_afterstate": ("--algos", "ppo_afterstate"),
}
"""The baseline learners and the ``shelfie bench`` options of each (SB3 MaskablePPO with the env options of
docs/environment.md's "If your PPO does not learn"; ``ppo_flat`` with its 10M rows' settings)."""
REFERENCE_BOTS = ("random", "greedy", "planner")
"""Reference rows of every task (``--bots``)."""


def baseline_command(learner: str, task_name: str, seed: int, out: str) -> list[str]:
    """The ``shelfie bench`` words of one baseline cell (1M decisions, one seed) merged into ``out``."""
    t = task(task_name)
    words = ["--task", t.name, *BASELINES[learner], "--steps", "1M", "--seeds", str(seed), "--bots"]
    if t.players == 2:
        words += ["--eval-games", "400", "--opponents", "greedy", "planner"]
    return [*words, "--out", out]


def baseline_cells() -> list[tuple[str, str, int]]:
    """Every ``(task, learner, seed)`` of the baseline matrix the learner trains on: by seed, then learner."""
    from shelfie_env.benchmark.learners import TASKS_OF

    out = []
    for seed in BASELINE_SEEDS:
        for learner, words in BASELINES.items():
            for t in TASKS:
                if t in TASKS_OF[words[1]]:
                    out.append((t, learner, seed))
    return out
