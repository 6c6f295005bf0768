# noqa: D212, D415
"""
# My Shelfie: The Dice Game (``shelfie_v0``)

| Import             | `from shelfie_env import shelfie_v0`                      |
|--------------------|-----------------------------------------------------------|
| Creation           | `shelfie_v0.env()` or `pettingzoo.make("aec", "shelfie/shelfie_v0")` |
| Actions            | Discrete(120), with an int8 legal-action mask             |
| Parallel API       | No                                                        |
| Agents             | `["player_0", ..., "player_{n-1}"]`, n = 1..4            |
| Observation        | Dict(observation=Box(0, 1, (63n+60,), float32),           |
|                    |      action_mask=Box(0, 1, (120,), int8))                 |
|                    | `obs="features"`: Box(0, 1, (73n+185,), float32)          |

Each player owns a 5x5 shelf (row = symbol, column = how many equal dice
the item needs). On a turn the player rolls six dice, may reroll any of them
twice, then circles one to three items (or, when nothing fits, crosses out a
row). The game ends after the round in which some shelf has two rows with no
free cell. Full rules: ``docs/rules.md``; observation layout:
:mod:`shelfie_env.observation` (:mod:`~shelfie_env.observation.vector`, and
:mod:`~shelfie_env.observation.features` for ``obs="features"``); action ids:
:mod:`shelfie_env.game.actions`.

### Arguments

``` python
shelfie_v0.env(num_players=2, render_mode=None, reward_mode="rank", points=None,
               dice="stream", obs="default", reroll="ids", score_reward=0.0)
```

`num_players`: players at the table, 1..4 (1 is the solo variant). Seat 0 starts.

`render_mode`: `None`, `"ansi"` or `"human"` (see Rendering).

`reward_mode`: the end-of-game reward, `"rank"`, `"score"` or `"margin"` (see Rewards).

`points`: a 5x5 table of non-negative integers, `points[r][c]` the points of the
cell in row r, column c; `None` is the default table (every row `[1, 2, 3, 5, 8]`).
A table whose best shelf scores more than 200 raises the `Box`'s bound of the score
features to best / 200 (and with ``obs="features"`` a table may raise the bound of the
circle gains); ``observation_space(agent)`` gives the bounds.

`dice`: `"stream"` (default) draws the dice from the env's generator; `"tape"` deals
common dice (see Starting positions and seeds).

`obs`: `"default"`, the observation vector of :mod:`shelfie_env.observation.vector`;
`"features"` appends `125 + 10n` values describing the current position (which cells
the unspent dice can circle now, with or without a joker, what each circle adds to the
score, how many more dice each free cell needs, which lines each player is one circle
from completing; :mod:`shelfie_env.observation.features`). Nothing in it looks ahead over
the dice or asks a bot.

`reroll`: `"ids"` (default), the reroll ids of the rules (ids 1..63 name dice by their
sorted positions); `"keep"`, ids 1..63 of a reroll decision name the faces kept (see
Action Space).

`score_reward`: a number >= 0; when positive, every step also rewards the agent that
acted with `score_reward` per point its own score gained on that step (see Rewards).
`0.0` (default): no such reward.

`raw_env(...)` takes the same arguments and returns the env without PettingZoo's
wrappers (see Illegal actions).

### Turns

One agent acts at a time. The player on turn keeps ``agent_selection`` for
every decision of its turn (rerolls, stop, each circle, end turn, cross), so
an agent usually acts several times in a row.

### Observation Space

``observe(agent)`` returns ``{"observation": float32 vector, "action_mask":
int8 vector of 120}``. The vector is written from the observer's seat (own
shelf first, then the rivals in seat order): `63n+60` values, then with
``obs="features"`` the `125 + 10n` values of the features block (`73n+185` in all).

#### Legal Actions Mask

The mask marks the legal actions of the agent on turn, in the encoding that
``reroll`` selects. It is all zeros for an agent that is not on turn (and for
everyone once the game is over); it is never all zeros for the agent on turn.

### Action Space

`Discrete(120)`: 0 stops rolling; 1..63 reroll; 64..113 circle row r, column c,
with or without a joker (id = 64 + 2·(5r + c) + joker); 114 ends the turn; 115..119
cross out row id − 115 (:mod:`shelfie_env.game.actions`, ``docs/rules.md``).
With ``reroll="ids"`` the set bits of a reroll id are the sorted positions of the
dice rerolled. With ``reroll="keep"`` a reroll id names the faces kept: bit f
(0..4) keeps every die of symbol f, bit 5 keeps one joker, the other dice are
rerolled (id 63: all six); a keep id is legal when it rerolls at least one die.
Each keep id is played as the rules' id that rerolls the same dice
(:mod:`shelfie_env.game.reroll_keep`); ids 0 and 64..119 mean the same in both.

### Rewards

With ``score_reward=0`` (the default) rewards are 0 on every step except the one
that ends the game, where every agent receives its final reward (``reward_mode``):

* ``"rank"`` (default): (number of opponents with a lower final score - number
  with a higher one) / (n - 1); two players get +1 / -1 / 0 for win / loss /
  tie. Solo (n = 1): always 0.
* ``"score"``: the agent's own final score.
* ``"margin"``: own score minus the best opponent score (solo: own score).

With ``score_reward=w > 0`` the agent that acted also receives ``w`` times the
points its own score gained on that step (the other agents 0), on every step
including the last, where it is added to its final reward; over a game from the
empty shelves an agent collects ``w`` times its final score on top of its final reward.

At the end every agent terminates together and ``infos[agent]["score"]``
holds its final score (``infos[agent]["scores"]`` all of them, seat order).
The game has no step limit (it always ends), so there is no truncation.

### Illegal actions

An illegal action raises :class:`shelfie_env.game.errors.IllegalActionError` (a
``ValueError`` naming the action and why it is illegal) and leaves the game
unchanged, so the caller may catch it and choose again. Nothing is silently
remapped and the episode does not end. An id outside 0..119 fails
PettingZoo's ``AssertOutOfBoundsWrapper`` (``AssertionError``) in ``env()``.

### Starting positions and seeds

``reset(seed=s)`` seeds the dice generator; ``reset()`` continues with the
current one. ``reset(options={"state": state})`` starts from a state dict
(validated; a malformed state raises ``ValueError`` naming the field).
``env.unwrapped.state_dict()`` returns the current state in that form; it
round-trips through ``reset(options={"state": ...})``. A state whose phase is
``"over"`` starts an episode in which every agent is already terminated
(rewards 0, scores in ``infos``).

``env(dice="tape")`` deals common dice (:class:`shelfie_env.game.dice.DiceTape`):
a seat sees the same faces at the same turn and roll whoever plays, so agents
can be compared on the same deals; ``reset(seed=s)`` deals the arena's deal ``s``
and the state dict carries ``tape_seed``. The default is ``dice="stream"``.

### Rendering

``render_mode="ansi"``: ``render()`` returns the table as text.
``render_mode="human"``: ``render()`` prints it (ANSI colours when stdout is a
terminal) after every step and on request.

### Version History

* v0: Initial release (shelfie-env 0.1.0), observation layout version 1.
* v0, shelfie-env 0.2.0: observation layout version 2 (a one-hot of the
  observer's own seat appended, ``63n+60`` values). The module keeps its name,
  which is part of the interface; model cards record the layout version, and checkpoints
  trained on version 1 are refused at load time.
* v0, shelfie-env 0.7.0: ``dice="tape"`` (common dice) added; the default dice,
  observations and rewards are unchanged. The state dict gains ``round`` (and
  ``tape_seed`` in tape mode).
* v0, shelfie-env 0.7.0: the options ``obs="features"``, ``reroll="keep"`` and
  ``score_reward`` added; their defaults give the observations, action ids and
  rewards of the versions above. Model cards record ``obs`` and ``reroll``.
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
