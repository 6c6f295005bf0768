"""``rollout``: a base policy improved by rollouts at every decision, and the rollouts themselves.

* :mod:`.rollouts`: every legal action of a position valued by playing the game out with a base
  policy in every seat, on common dice, corrected for luck (:func:`~.rollouts.rollout_values`);
  the labelled positions of :mod:`shelfie_env.arena.analysis.positions` are valued by it;
* :mod:`.bot`: the ``rollout`` bot (:class:`~.bot.RolloutBot`) that plays the rollout-best of its
  base policy's best actions.
"""

from shelfie_env.bots.rollout.bot import RolloutBot, make_rollout

__all__ = ["RolloutBot", "make_rollout"]
