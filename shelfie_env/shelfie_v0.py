# noqa: D212, D415
"""
# My Shelfie: The Dice Game (``shelfie_v0``)

| Import             | `from shelfie_env import shelfie_v0`                      |
|--------------------|-----------------------------------------------------------|
| Actions            | Discrete(120), with an int8 legal-action mask             |
| Parallel API       | No                                                        |
| Agents             | `["player_0", ..., "player_{n-1}"]`, n = 1..4            |
| Observation        | Dict(observation=Box(0, 1, (63n+60,), float32),           |
|                    |      action_mask=Box(0, 1, (120,), int8))                 |

Each player owns a 5x5 shelf (row = symbol, column = how many equal dice
the item needs). On a turn the player rolls six dice, may reroll any of them
twice, then circles one to three items (or, when nothing fits, crosses out a
row). The game ends after the round in which some shelf has two rows with no
free cell. Full rules: ``docs/rules.md``; observation layout:
:mod:`shelfie_env.observation.vector`; action ids: :mod:`shelfie_env.game.actions`.

## Turns

One agent acts at a time. The player on turn keeps ``agent_selection`` for
every decision of its turn (rerolls, stop, each circle, end turn, cross), so
an agent usually acts several times in a row.

## Observation

``observe(agent)`` returns ``{"observation": float32 vector, "action_mask":
int8 vector of 120}``. The vector is written from the observer's seat (own
shelf first, then the rivals in seat order). The mask is all zeros for an agent
that is not on turn (and for everyone once the game is over); it is never all
zeros for the agent on turn.

## Rewards

Rewards are 0 on every step except the one that ends the game, where every
agent receives its final reward (``reward_mode``):

* ``"rank"`` (default): (number of opponents with a lower final score - number
  with a higher one) / (n - 1); two players get +1 / -1 / 0 for win / loss /
  tie. Solo (n = 1): always 0.
* ``"score"``: the agent's own final score.
* ``"margin"``: own score minus the best opponent score (solo: own score).

At the end every agent terminates together and ``infos[agent]["score"]``
holds its final score (``infos[agent]["scores"]`` all of them, seat order).
The game has no step limit (it always ends), so there is no truncation.

## Illegal actions

An illegal action raises :class:`shelfie_env.game.errors.IllegalActionError` (a
``ValueError`` naming the action and why it is illegal) and leaves the game
unchanged, so the caller may catch it and choose again. Nothing is silently
remapped and the episode does not end. An id outside 0..119 fails
PettingZoo's ``AssertOutOfBoundsWrapper`` (``AssertionError``) in ``env()``.

## Starting positions and seeds

``reset(seed=s)`` seeds the dice generator; ``reset()`` continues with the
current one. ``reset(options={"state": state})`` starts from a state dict
dict (validated; a malformed state raises ``ValueError`` naming the field).
``env.unwrapped.state_dict()`` returns the current state in that form; it
round-trips through ``reset(options={"state": ...})``. A state whose phase is
``"over"`` starts an episode in which every agent is already terminated
(rewards 0, scores in ``infos``).

``env(dice="tape")`` deals common dice (:class:`shelfie_env.game.dice.DiceTape`):
a seat sees the same faces at the same turn and roll whoever plays, so agents
can be compared on the same deals; ``reset(seed=s)`` deals the arena's deal ``s``
and the state dict carries ``tape_seed``. The default ``dice="stream"`` is unchanged.

## Rendering

``render_mode="ansi"``: ``render()`` returns the table as text.
``render_mode="human"``: ``render()`` prints it (ANSI colours when stdout is a
terminal) after every step and on request.

## Version History

* v0: Initial release (shelfie-env 0.1.0), observation layout version 1.
* v0, shelfie-env 0.2.0: observation layout version 2 (a one-hot of the
  observer's own seat appended, ``63n+60`` values). The module keeps its name,
  which is part of the interface; model cards record the layout version, and checkpoints
  trained on version 1 are refused at load time.
* v0, shelfie-env 0.7.0: ``dice="tape"`` (common dice) added; the default dice,
  observations and rewards are unchanged. The state dict gains ``round`` (and
  ``tape_seed`` in tape mode).
"""

from shelfie_env.envs.aec import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, env, raw_env
from shelfie_env.envs.common import REWARD_MODES, final_rewards

__all__ = [
    "REWARD_MODES",
    "AssertOutOfBoundsWrapper",
    "OrderEnforcingWrapper",
    "env",
    "final_rewards",
    "raw_env",
]
