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
free cell. Full rules: the project's ``SPEC.md``; observation layout:
:mod:`shelfie_env.observation`; action ids: :mod:`shelfie_env.actions`.

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

An illegal action raises :class:`shelfie_env.errors.IllegalActionError` (a
``ValueError`` naming the action and why it is illegal) and leaves the game
unchanged, so the caller may catch it and choose again. Nothing is silently
remapped and the episode does not end. An id outside 0..119 fails
PettingZoo's ``AssertOutOfBoundsWrapper`` (``AssertionError``) in ``env()``.

## Starting positions and seeds

``reset(seed=s)`` seeds the dice generator; ``reset()`` continues with the
current one. ``reset(options={"state": state})`` starts from a SPEC §6 state
dict (validated; a malformed state raises ``ValueError`` naming the field).
``env.unwrapped.state_dict()`` returns the current state in that form; it
round-trips through ``reset(options={"state": ...})``. A state whose phase is
``"over"`` starts an episode in which every agent is already terminated
(rewards 0, scores in ``infos``).

## Rendering

``render_mode="ansi"``: ``render()`` returns the table as text.
``render_mode="human"``: ``render()`` prints it (ANSI colours when stdout is a
terminal) after every step and on request.

## Version History

* v0: Initial release (shelfie-env 0.1.0), observation layout version 1.
* v0, shelfie-env 0.2.0: observation layout version 2 (a one-hot of the
  observer's own seat appended, ``63n+60`` values). The module keeps its name,
  which SPEC §6 fixes; model cards record the layout version, and checkpoints
  trained on version 1 are refused at load time.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from .actions import NUM_ACTIONS
from .engine import MAX_PLAYERS, OVER, Game
from .errors import InvalidStateError
from .observation import SCORE_SCALE, ObservationEncoder, legal_mask, observation_size
from .scoring import DEFAULT_POINTS, FULL, ScoreTable, validate_points

DEFAULT_TABLE = ScoreTable(DEFAULT_POINTS)

REWARD_MODES = ("rank", "score", "margin")
_OPTION_KEYS = frozenset({"state"})


def env(
    num_players: int = 2,
    render_mode: str | None = None,
    reward_mode: str = "rank",
    points: Sequence[Sequence[int]] | None = None,
) -> AECEnv:
    """The AEC env wrapped in PettingZoo's ``AssertOutOfBounds`` and ``OrderEnforcing`` wrappers.

    Illegal (but in-range) actions raise ``IllegalActionError`` from the raw env;
    there is deliberately no ``TerminateIllegalWrapper``.
    """
    aec = raw_env(num_players=num_players, render_mode=render_mode, reward_mode=reward_mode, points=points)
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(aec))


# PettingZoo's wrappers reach the raw env's attributes through ``__getattr__``,
# which runs only after a failed normal lookup (an AttributeError per wrapper
# level). The two subclasses below keep the wrappers' behaviour but read the
# per-step attributes straight from the raw env, which makes the wrapped env
# about as fast as the raw one.
_HOT_ATTRIBUTES = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos")


class AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper``: fast path for int actions, messages naming the action."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < NUM_ACTIONS:
            self.env.step(action)
            return
        raw = self._raw
        agent = raw.agent_selection
        done = raw.terminations[agent] or raw.truncations[agent]
        assert (action is None and done) or raw.action_space(agent).contains(action), (
            f"action {action!r} of {agent} is not in the action space: an integer id 0..{NUM_ACTIONS - 1}"
            + ("" if done else " (None is only for terminated agents)")
        )
        self.env.step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self._raw.last(observe)

    def __str__(self) -> str:
        return str(self.env)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` reading the hot attributes of the raw env directly."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def __str__(self) -> str:
        return str(self.env)


def _forward(name: str) -> property:
    def get(self: Any) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    return property(get, doc=f"The raw env's ``{name}`` (after reset).")


for _name in _HOT_ATTRIBUTES:
    setattr(OrderEnforcingWrapper, _name, _forward(_name))


def score_bound(table: ScoreTable | None) -> float:
    """Upper bound of the score features of the observation for ``table`` (1.0 for the default).

    A score is encoded as score / 200 (``observation.SCORE_SCALE``); the default
    table's best shelf scores 190, but a custom table may allow more.
    """
    best = (table or DEFAULT_TABLE).score(FULL)
    return max(1.0, best / SCORE_SCALE)


def observation_box(num_players: int, bound: float = 1.0) -> spaces.Box:
    """The observation vector's ``Box``: [0, 1], score features up to ``bound``."""
    n = num_players
    high = np.ones(observation_size(n), dtype=np.float32)
    start = 51 * n + 60  # the scores block, see observation.layout
    high[start : start + n] = bound
    return spaces.Box(np.zeros_like(high), high, dtype=np.float32)


def game_from_state(state: Any, rng: np.random.Generator, num_players: int, bound: float) -> Game:
    """``Game.from_dict`` plus the checks an env adds: its player count and score bound."""
    game = Game.from_dict(state, rng=rng)
    if game.num_players != num_players:
        raise InvalidStateError(
            "num_players", f"this env has {num_players} players, the state has {game.num_players}"
        )
    if game.table.score(FULL) / SCORE_SCALE > bound:
        raise InvalidStateError(
            "points",
            "this table allows scores above the env's observation bound; create the env with these points",
        )
    return game


def final_rewards(scores: Sequence[int], reward_mode: str) -> list[float]:
    """Every seat's end-of-game reward under ``reward_mode`` (see module docstring)."""
    n = len(scores)
    out: list[float] = []
    for p, own in enumerate(scores):
        others = [s for q, s in enumerate(scores) if q != p]
        if reward_mode == "rank":
            if not others:
                out.append(0.0)
            else:
                lower = sum(s < own for s in others)
                higher = sum(s > own for s in others)
                out.append((lower - higher) / (n - 1))
        elif reward_mode == "score":
            out.append(float(own))
        elif reward_mode == "margin":
            out.append(float(own - max(others)) if others else float(own))
        else:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
    return out


def check_reward_mode(reward_mode: object) -> str:
    """Return ``reward_mode`` or raise a ValueError listing the valid modes."""
    if reward_mode not in REWARD_MODES:
        modes = ", ".join(map(repr, REWARD_MODES))
        raise ValueError(f"reward_mode must be one of {modes}, got {reward_mode!r}")
    return reward_mode  # type: ignore[return-value]


def check_num_players(num_players: object, low: int = 1) -> int:
    """Return ``num_players`` as an int in ``low..4`` or raise ValueError."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
        raise ValueError(f"num_players must be an integer {low}..{MAX_PLAYERS}, got {num_players!r}")
    if not low <= num_players <= MAX_PLAYERS:
        raise ValueError(f"num_players must be {low}..{MAX_PLAYERS}, got {num_players}")
    return int(num_players)


class raw_env(AECEnv, EzPickle):
    """My Shelfie: The Dice Game as a PettingZoo AEC env (see the module docstring)."""

    metadata = {
        "render_modes": ["ansi", "human"],
        "name": "shelfie_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 2,
        render_mode: str | None = None,
        reward_mode: str = "rank",
        points: Sequence[Sequence[int]] | None = None,
    ) -> None:
        EzPickle.__init__(self, num_players, render_mode, reward_mode, points)
        super().__init__()
        n = check_num_players(num_players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        self.num_players = n
        self.render_mode = render_mode
        self.reward_mode = check_reward_mode(reward_mode)
        self.table = ScoreTable(validate_points(points)) if points is not None else None
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self._score_bound = score_bound(self.table)
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": observation_box(n, self._score_bound),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._encoder = ObservationEncoder(n)
        self._zero_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._rng = np.random.default_rng()
        self.game: Game | None = None

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        """Start a new game (or the position ``options["state"]``); ``seed`` seeds the dice."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        state = None
        if options:
            unknown = set(options) - _OPTION_KEYS
            if unknown:
                warnings.warn(
                    f"shelfie_v0.reset ignores unknown option(s) {sorted(unknown)}; known: ['state']",
                    stacklevel=2,
                )
            state = options.get("state")
        if state is not None:
            game = game_from_state(state, self._rng, self.num_players, self._score_bound)
        else:
            game = Game.new(self.num_players, points=self.table, rng=self._rng)
        self.game = game
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        if game.phase == OVER:
            self.agent_selection = self.agents[0]
            self._finish(give_rewards=False)
        else:
            self.agent_selection = self.possible_agents[game.current]

    def step(self, action: int | None) -> None:
        """Apply ``action`` for ``agent_selection`` (``None`` for a terminated agent)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is on turn and must act; None is only for terminated agents")
        game = self.game
        game.step(action)  # raises IllegalActionError and leaves the game unchanged
        self._cumulative_rewards[agent] = 0.0
        if game.phase == OVER:
            self._finish(give_rewards=True)
        else:
            self.agent_selection = self.possible_agents[game.current]
        if self.render_mode == "human":
            self.render()

    def _finish(self, give_rewards: bool) -> None:
        game = self.game
        scores = game.scores()
        rewards = final_rewards(scores, self.reward_mode) if give_rewards else [0.0] * len(scores)
        for a, seat in self._seat.items():
            self.rewards[a] = rewards[seat]
            self.terminations[a] = True
            self.infos[a] = {"score": scores[seat], "scores": list(scores)}
        self._accumulate_rewards()

    # -------------------------------------------------------- observation
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 mask}`` for ``agent``."""
        seat = self._seat[agent]
        game = self.game
        obs = self._encoder.encode(game, seat)
        if seat == game.current and game.phase != OVER:
            mask = legal_mask(game.legal_actions())
        else:
            mask = self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def state_dict(self) -> dict[str, Any]:
        """The current SPEC §6 state (JSON-compatible); ``reset(options={"state": ...})`` takes it back."""
        if self.game is None:
            raise RuntimeError("call reset() before state_dict()")
        return self.game.to_dict()

    # ------------------------------------------------------------ render
    def render(self) -> str | None:
        """Text of the table ("ansi") or print it ("human")."""
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass 'ansi' or 'human'", stacklevel=2)
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        from .render import render_text

        if self.render_mode == "ansi":
            return render_text(self.game)
        color = bool(getattr(sys.stdout, "isatty", lambda: False)())
        print(render_text(self.game, color=color), end="\n\n")
        return None

    def close(self) -> None:
        """Nothing to release (text rendering only)."""
