"""What every env of the package shares: reward modes, player-count checks, the observation space."""

from __future__ import annotations

import difflib
import math
import operator
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from shelfie_env.game.actions import NUM_ACTIONS
from shelfie_env.game.dice import DiceTape, check_dice_mode
from shelfie_env.game.engine import MAX_PLAYERS, OVER, DiceSource, Game
from shelfie_env.game.errors import IllegalActionError, InvalidStateError
from shelfie_env.game.reroll_keep import game_mask
from shelfie_env.game.scoring import DEFAULT_POINTS, FULL, ScoreTable
from shelfie_env.observation.features import check_obs_mode, features_high
from shelfie_env.observation.vector import SCORE_SCALE, ObservationEncoder, legal_mask, observation_size

DEFAULT_TABLE = ScoreTable(DEFAULT_POINTS)

REWARD_MODES = ("rank", "score", "margin")
"""``rank``: (opponents below - opponents above) / (n - 1); ``score``: own final score;
``margin``: own score minus the best rival's (solo: own score)."""


def score_bound(table: ScoreTable | None) -> float:
    """Upper bound of the score features of the observation for ``table`` (1.0 for the default).

    A score is encoded as score / 200 (``observation.SCORE_SCALE``); the default
    table's best shelf scores 190, but a custom table may allow more.
    """
    best = (table or DEFAULT_TABLE).score(FULL)
    return max(1.0, best / SCORE_SCALE)


def observation_box(
    num_players: int, bound: float = 1.0, obs: str = "default", table: ScoreTable | None = None
) -> spaces.Box:
    """The observation vector's ``Box`` in mode ``obs``: [0, 1], score features up to ``bound``,
    and with ``obs="features"`` the circle gains up to their bound for ``table``."""
    n = num_players
    high = np.ones(observation_size(n), dtype=np.float32)
    start = 51 * n + 60  # the scores block, see observation.layout
    high[start : start + n] = bound
    if check_obs_mode(obs) == "features":
        high = np.concatenate((high, features_high(n, table or DEFAULT_TABLE)))
    return spaces.Box(np.zeros_like(high), high, dtype=np.float32)


OPTION_KEYS = frozenset({"state"})
"""The keys ``reset(options=...)`` of the scalar envs reads."""


def option_state(options: Mapping[str, Any] | None, where: str) -> Any:
    """``options["state"]`` (or ``None``). Other keys are ignored, as Gymnasium and PettingZoo let an env
    ignore options it does not take (PettingZoo's ``api_test`` passes one); a key that looks like a
    misspelled ``state`` (``stat``, ``State``) gets a warning, once per call."""
    if not options:
        return None
    misspelled = sorted(str(k) for k in set(options) - OPTION_KEYS if _close_to_a_key(k))
    if misspelled:
        warnings.warn(f"{where} ignores unknown option(s) {misspelled}; known: ['state']", stacklevel=3)
    return options.get("state")


def _close_to_a_key(key: Any) -> bool:
    return bool(difflib.get_close_matches(str(key).lower(), OPTION_KEYS, n=1, cutoff=0.6))


def game_dice(mode: str, seed: int | None, stream: np.random.Generator) -> DiceSource:
    """The dice source of a game an env starts in dice ``mode`` (docs/environment.md, "Dice").

    ``stream``: the env's own generator (seeded by ``reset(seed=...)``). ``tape``: a
    :class:`~shelfie_env.game.dice.DiceTape` seeded ``seed`` when ``reset`` was given one, so that
    game ``seed`` deals exactly the arena's deal ``seed``; otherwise one drawn from the stream.
    """
    if check_dice_mode(mode) == "stream":
        return stream
    return DiceTape(int(stream.integers(2**62)) if seed is None else seed)


def state_dice(mode: str, state: Any, dice: DiceSource) -> DiceSource | None:
    """The dice to resume ``state`` with: in tape mode the state's own tape when it names one."""
    if mode == "tape" and isinstance(state, Mapping) and state.get("tape_seed") is not None:
        return None  # Game.from_dict rebuilds the state's tape
    return dice


def game_from_state(state: Any, rng: DiceSource | None, num_players: int, bound: float) -> Game:
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


def check_score_reward(score_reward: object) -> float:
    """``score_reward`` as a float >= 0 (the reward per point a player's own score gains), or ValueError."""
    if isinstance(score_reward, bool) or not isinstance(score_reward, (int, float, np.integer, np.floating)):
        raise ValueError(f"score_reward must be a number >= 0, got {score_reward!r}")
    value = float(score_reward)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"score_reward must be a finite number >= 0, got {score_reward!r}")
    return value


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


def observation_dict(
    encoder: ObservationEncoder, game: Game, seat: int, reroll: str = "ids"
) -> dict[str, np.ndarray]:
    """``{"observation", "action_mask"}`` of ``seat``: its observation, and the legal mask (in reroll
    encoding ``reroll``) while it is on turn (all zeros otherwise). The multi-agent envs (PettingZoo,
    RLlib) share it."""
    obs = encoder.encode(game, seat)
    if seat == game.current and game.phase != OVER:
        mask = legal_mask(game.legal_actions()) if reroll == "ids" else game_mask(reroll, game)
    else:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    return {"observation": obs, "action_mask": mask}


def is_action_id(action: Any) -> bool:
    """Whether ``action`` is an integer action id 0..119 (a Python or numpy int, not a bool).

    Never raises: huge ints, floats, ``None`` and other objects are simply not ids.
    """
    if isinstance(action, (bool, np.bool_)):
        return False
    try:
        a = operator.index(action)
    except TypeError:
        return False
    return 0 <= a < NUM_ACTIONS


def action_array(actions: Any, num_envs: int) -> np.ndarray:
    """``actions`` as an ``int64`` array of ``num_envs`` ids, or an error saying what is wrong.

    A wrong shape raises ``ValueError``; an entry that is not an integer id 0..119 (a huge
    or negative int, a float, ``None``, a bool in a list) raises :class:`IllegalActionError`
    naming its game.
    """
    if isinstance(actions, np.ndarray) and actions.dtype == np.int64 and actions.shape == (num_envs,):
        bad = np.flatnonzero((actions < 0) | (actions >= NUM_ACTIONS))
        if bad.size:
            _refuse(actions[bad[0]].item(), int(bad[0]))
        return actions
    if isinstance(actions, np.ndarray) and actions.dtype.kind in "iu":
        raw: Any = actions
    else:
        raw = np.empty(0, dtype=object)
        try:
            raw = np.array(actions, dtype=object)
        except ValueError:  # ragged nesting
            pass
    if raw.shape != (num_envs,):
        raise ValueError(
            f"actions must be {num_envs} integer ids (shape ({num_envs},)), got shape {raw.shape}"
        )
    for i, a in enumerate(raw.tolist()):
        if not is_action_id(a):
            _refuse(a, i)
    return np.asarray(raw.tolist(), dtype=np.int64)


def _refuse(action: Any, game: int) -> None:
    if isinstance(action, (bool, np.bool_)):
        why = "an action must be an integer id 0..119, not a bool"
    elif isinstance(action, (int, np.integer)):
        why = f"action ids are 0..{NUM_ACTIONS - 1}"
    else:
        why = f"an action must be an integer id 0..{NUM_ACTIONS - 1}, not {type(action).__name__}"
    raise IllegalActionError(action, f"in game {game}: {why}")
