"""``python_shelfie``: My Shelfie: The Dice Game as an OpenSpiel game, driven by our rules engine.

A state holds one attribute, a :class:`_Core` (an engine :class:`Game` plus the
throw in progress) whose ``__deepcopy__`` is :meth:`Game.clone`, so OpenSpiel's
``PyState::Clone`` (a deepcopy of every attribute) stays cheap. Chance nodes:
the first roll of a turn and every reroll, one outcome per multiset of the
thrown dice (:mod:`.chance`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from shelfie_env.envs.common import final_rewards
from shelfie_env.game.actions import FACE_NAMES, NUM_ACTIONS, REROLL_FIRST, REROLL_LAST, action_name
from shelfie_env.game.engine import OVER, REROLL, Game
from shelfie_env.game.render import render_shelf
from shelfie_env.game.scoring import FULL, ScoreTable, validate_points
from shelfie_env.observation.vector import ObservationEncoder, block_start, layout, observation_size
from shelfie_env.openspiel.chance import FACES, MAX_CHANCE_OUTCOMES, OUTCOMES

SHORT_NAME = "python_shelfie"
REWARDS = ("rank", "score")
MAX_TURNS_PER_PLAYER = 22
"""A turn fills at least one own cell, and 22 filled cells always mean two rows without a free cell."""
MAX_DECISIONS_PER_PLAYER = 3 * MAX_TURNS_PER_PLAYER + 25
"""Per turn at most 2 reroll-phase decisions, plus its circles and one end turn (or one cross-out)."""
DEFAULT_PARAMS: dict[str, Any] = {"players": 2, "points": "1/2/3/5/8", "reward": "rank"}

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python My Shelfie: The Dice Game",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=1,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


def parse_points(text: str) -> tuple[tuple[int, ...], ...]:
    """The ``points`` parameter: 5 ints joined by ``/`` (every row), or 25 (row by row).

    Commas and spaces also separate values in a Python dict; a game string needs ``/``.
    """
    if not isinstance(text, str):
        raise ValueError(f"points must be a string of 5 or 25 integers joined by '/', got {text!r}")
    items = [s for s in re.split(r"[,;/\s]+", text.strip()) if s]
    try:
        values = [int(s) for s in items]
    except ValueError:
        raise ValueError(f"points must be 5 or 25 integers joined by '/', got {text!r}") from None
    if len(values) == 5:
        values = values * 5
    if len(values) != 25:
        raise ValueError(f"points must be 5 or 25 integers joined by '/', got {len(values)} in {text!r}")
    return validate_points([values[5 * r : 5 * r + 5] for r in range(5)])


def points_param(points: Sequence[Sequence[int]]) -> str:
    """The ``points`` parameter string of a 5x5 points table."""
    rows = validate_points(points)
    if all(row == rows[0] for row in rows):
        return "/".join(map(str, rows[0]))
    return "/".join(str(v) for row in rows for v in row)


class _Dice:
    """The engine's dice source: hands out the faces of a chosen outcome, or a placeholder it notes."""

    __slots__ = ("faces", "asked")

    def __init__(self) -> None:
        self.faces: tuple[int, ...] | None = None
        self.asked = 0

    def integers(self, low: int, high: int, size: int) -> tuple[int, ...]:
        faces = self.faces
        if faces is None:  # a first roll: the chance node that follows chooses the faces
            self.asked = size
            return (0,) * size
        self.faces = None
        if len(faces) != size:
            raise RuntimeError(f"the engine threw {size} dice, the outcome has {len(faces)}")
        return faces


_DICE = _Dice()


class _Spec:
    """What a game's parameters fix: players, points table, reward (shared, never copied)."""

    __slots__ = ("players", "table", "reward", "params")

    def __init__(self, players: int, table: ScoreTable, reward: str, params: dict[str, Any]) -> None:
        self.players, self.table, self.reward, self.params = players, table, reward, params

    def __deepcopy__(self, memo: dict) -> _Spec:
        return self


_SPECS: dict[tuple, _Spec] = {}


def _spec(params: dict[str, Any]) -> _Spec:
    merged = {**DEFAULT_PARAMS, **params}
    unknown = set(merged) - set(DEFAULT_PARAMS)
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {sorted(unknown)} for {SHORT_NAME}; it has {sorted(DEFAULT_PARAMS)}"
        )
    players = merged["players"]
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= 4:
        raise ValueError(f"players must be an integer 1..4, got {players!r}")
    points = parse_points(merged["points"])
    reward = merged["reward"]
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
    key = (players, points, reward)
    spec = _SPECS.get(key)
    if spec is None:
        params = {"players": players, "points": points_param(points), "reward": reward}
        spec = _SPECS[key] = _Spec(players, ScoreTable(points), reward, params)
    return spec


class _Core:
    """The position: an engine game and the throw its chance node is waiting for.

    ``throw`` is the number of dice in the air (0 at decision and terminal nodes);
    ``reroll`` is the reroll action being resolved, or 0 for a turn's first roll
    (then the engine's dice are a placeholder until the outcome lands).
    """

    __slots__ = ("spec", "game", "throw", "reroll")

    def __init__(self, spec: _Spec, game: Game, throw: int, reroll: int) -> None:
        self.spec, self.game, self.throw, self.reroll = spec, game, throw, reroll

    def __deepcopy__(self, memo: dict) -> _Core:
        return _Core(self.spec, self.game.clone(), self.throw, self.reroll)

    def __reduce__(self) -> tuple:
        state = self.game.to_dict()
        del state["scores"]
        return (_restore, (self.spec.params, state, self.throw, self.reroll))

    def apply(self, action: int) -> None:
        """Apply a decision (an action id) or, at a chance node, an outcome id."""
        game = self.game
        if self.throw:
            outcomes = FACES[self.throw]
            if not 0 <= action < len(outcomes):
                raise ValueError(
                    f"chance outcome {action} is not one of the {len(outcomes)} of {self.throw} dice"
                )
            land(game, self.reroll, outcomes[action])
            self.throw = self.reroll = 0
            return
        if game.phase == OVER:
            raise ValueError("the game is over")
        if action not in game.legal_actions():
            raise ValueError(f"illegal action {action} ({_name(action)}): {game.why_illegal(action)}")
        if game.phase == REROLL and REROLL_FIRST <= action <= REROLL_LAST:
            self.throw, self.reroll = action.bit_count(), action
            return
        _DICE.faces, _DICE.asked = None, 0
        game.step(action)
        if _DICE.asked:
            self.throw, self.reroll = _DICE.asked, 0
            _DICE.asked = 0


def land(game: Game, reroll: int, faces: tuple[int, ...]) -> None:
    """Finish the throw of ``game``: the reroll ``reroll`` (or a first roll when 0) shows ``faces``."""
    if reroll:
        _DICE.faces = faces
        try:
            game.step(reroll)
        finally:
            _DICE.faces = None
        return
    dice = sorted(faces)
    counts = [0] * 6
    for d in dice:
        counts[d] += 1
    game.dice = dice
    game.counts = counts


def _restore(params: dict[str, Any], state: dict[str, Any], throw: int, reroll: int) -> _Core:
    return _Core(_spec(params), Game.from_dict(state, rng=_DICE), throw, reroll)


def _name(action: int) -> str:
    try:
        return action_name(action)
    except ValueError:
        return "not an action id"


def _no_information_state_tensor(*args: Any) -> None:
    raise pyspiel.SpielError(
        f"{SHORT_NAME} provides no information-state tensor (its game type says "
        "provides_information_state_tensor=False): it is a perfect-information game, so "
        "observation_tensor(player) holds the whole position; information_state_string(player) "
        "gives the history"
    )


class ShelfieGame(pyspiel.Game):
    """The game; load it with ``pyspiel.load_game("python_shelfie", {"players": 3})``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        spec = _spec(dict(params or {}))
        n = spec.players
        if spec.reward == "rank":
            low, high, total, utility = -1.0, 1.0, 0.0, GAME_TYPE.utility
        else:
            low, high, total = 0.0, float(spec.table.score(FULL)), None
            utility = pyspiel.GameType.Utility.GENERAL_SUM
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=MAX_CHANCE_OUTCOMES,
            num_players=n,
            min_utility=low,
            max_utility=high,
            utility_sum=total,
            max_game_length=MAX_DECISIONS_PER_PLAYER * n,
        )
        game_type = GAME_TYPE
        if utility != GAME_TYPE.utility:
            game_type = pyspiel.GameType(
                **{k: getattr(GAME_TYPE, k) for k in _TYPE_FIELDS},
                utility=utility,
                parameter_specification=DEFAULT_PARAMS,
            )
        super().__init__(game_type, info, spec.params)
        self.spec = spec
        self._initial = _Core(spec, Game.new(n, spec.table, rng=_DICE), 6, 0)
        _DICE.asked = 0

    def new_initial_state(self) -> ShelfieState:
        """The start: a chance node, seat 0's first roll."""
        return ShelfieState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict | None = None
    ) -> ShelfieObserver | IIGObserverForPublicInfoGame:
        """Our observation vector (docs/environment.md); the history for perfect-recall requests."""
        if iig_obs_type is None or not iig_obs_type.perfect_recall:
            return ShelfieObserver(self.spec.players, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)

    information_state_tensor_shape = _no_information_state_tensor
    information_state_tensor_size = _no_information_state_tensor
    information_state_tensor_layout = _no_information_state_tensor


_TYPE_FIELDS = (
    "short_name",
    "long_name",
    "dynamics",
    "chance_mode",
    "information",
    "reward_model",
    "max_num_players",
    "min_num_players",
    "provides_information_state_string",
    "provides_information_state_tensor",
    "provides_observation_string",
    "provides_observation_tensor",
)


class ShelfieState(pyspiel.State):
    """A position; ``state.core.game`` is the engine game behind it."""

    def __init__(self, game: ShelfieGame) -> None:
        super().__init__(game)
        self.core = game._initial.__deepcopy__({})

    def current_player(self) -> int:
        core = self.core
        if core.throw:
            return pyspiel.PlayerId.CHANCE
        if core.game.phase == OVER:
            return pyspiel.PlayerId.TERMINAL
        return core.game.current

    def _legal_actions(self, player: int) -> list[int]:
        return list(self.core.game.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(OUTCOMES[self.core.throw])

    def _apply_action(self, action: int) -> None:
        self.core.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            throw = self.core.throw
            if throw and 0 <= action < len(FACES[throw]):
                return "roll " + ",".join(FACE_NAMES[f] for f in FACES[throw][action])
            return f"chance outcome {action}"
        return _name(action)

    def is_terminal(self) -> bool:
        core = self.core
        return core.game.phase == OVER and not core.throw

    def returns(self) -> list[float]:
        core = self.core
        if core.throw or core.game.phase != OVER:
            return [0.0] * core.spec.players
        return final_rewards(core.game.scores(), core.spec.reward)

    def __str__(self) -> str:
        return describe(self.core, None)

    information_state_tensor = _no_information_state_tensor


def describe(core: _Core, viewer: int | None) -> str:
    """The position as text: every shelf, then whose turn it is and the dice (or the throw pending)."""
    game = core.game
    shelves = "\n\n".join("\n".join(render_shelf(game, p, viewer)) for p in range(game.num_players))
    scores = "scores " + " ".join(map(str, game.scores()))
    if game.phase == OVER and not core.throw:
        return f"{shelves}\n\n{scores} | game over"
    turn = (
        f"{scores} | seat {game.current} | rolls left {game.rolls_left} | circles {game.circles} | "
        f"end {'triggered' if game.end_triggered else 'not triggered'}"
    )
    if core.throw and not core.reroll:
        return f"{shelves}\n\n{turn}\nchance: first roll of seat {game.current} (6 dice)"
    dice = "dice " + " ".join(FACE_NAMES[d] + ("*" if s else "") for d, s in zip(game.dice, game.spent))
    if core.throw:
        return f"{shelves}\n\n{turn} | phase reroll | {dice}\nchance: {action_name(core.reroll)}"
    return f"{shelves}\n\n{turn} | phase {game.phase_name} | {dice}"


_DICE_BLOCKS = ("dice_onehot", "spent", "unspent_counts")


class ShelfieObserver:
    """Our observation vector (``shelfie_env.observation.vector``) for one seat, with its blocks in ``dict``.

    At a first-roll chance node the dice blocks are zero (the dice are in the air);
    at a reroll chance node they show the dice before the reroll.
    """

    def __init__(self, num_players: int, params: dict | None = None) -> None:
        if params:
            raise ValueError(f"{SHORT_NAME} observations take no parameters, got {params}")
        self.tensor = np.zeros(observation_size(num_players), np.float32)
        self.dict = {name: self.tensor[a:b] for name, a, b in layout(num_players)}
        self._encoder = ObservationEncoder(num_players)
        self._dice = slice(block_start("dice_onehot", num_players), block_start("rolls_left", num_players))

    def set_from(self, state: ShelfieState, player: int) -> None:
        core = state.core
        self.tensor[:] = self._encoder.encode(core.game, player)
        if core.throw and not core.reroll:
            self.tensor[self._dice] = 0.0

    def string_from(self, state: ShelfieState, player: int) -> str:
        return describe(state.core, player)


pyspiel.register_game(GAME_TYPE, ShelfieGame)
