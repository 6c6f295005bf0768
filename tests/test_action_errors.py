"""Every env refuses an action that is not an id 0..119 with its own documented error.

Huge ints used to overflow inside ``Discrete.contains`` (``OverflowError``) and the vector
envs answered floats, ``None`` and ``True`` with a bare ``ValueError`` (or played ``True`` as
action 1). Each env now raises its documented error and leaves the game as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shelfie_env  # noqa: F401  (registers the Gymnasium ids)
from shelfie_env import shelfie_v0
from shelfie_env.envs.common import action_array, is_action_id
from shelfie_env.envs.sb3_vec import ShelfieVecEnv
from shelfie_env.envs.vector import SoloVectorEnv, VersusVectorEnv
from shelfie_env.game.errors import IllegalActionError

FIXED_BAD: list[Any] = [
    10**30, -(10**30), 2**63, 2**64 - 1, -1, 120, 255,
    np.int64(10**18), np.int64(-1), np.uint64(2**64 - 1), np.int8(-1), np.int16(120),
    3.0, 0.0, np.float32(1.0), float("nan"), float("inf"),
    None, True, False, np.bool_(True), "3", b"3", [3], (3,), {"a": 3}, object(),
]

NOT_AN_ID = st.one_of(
    st.integers(max_value=-1),
    st.integers(min_value=120),
    st.integers(min_value=-(2**63), max_value=-1).map(np.int64),
    st.integers(min_value=120, max_value=2**63 - 1).map(np.int64),
    st.integers(min_value=120, max_value=2**64 - 1).map(np.uint64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    st.text(max_size=3),
)

PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------ one stepper per env
def _pettingzoo() -> tuple[Callable[[Any], None], Callable[[], Any], tuple[type[BaseException], ...]]:
    env = shelfie_v0.env(num_players=2)
    env.reset(seed=0)
    return env.step, lambda: env.unwrapped.state_dict(), (AssertionError,)


def _pettingzoo_raw() -> tuple[Callable[[Any], None], Callable[[], Any], tuple[type[BaseException], ...]]:
    env = shelfie_v0.raw_env(num_players=2)
    env.reset(seed=0)
    # None for the agent on turn is a ValueError (docs/environment.md), everything else IllegalActionError
    return env.step, env.state_dict, (IllegalActionError, ValueError)


def _gym(env_id: str, **kwargs: Any) -> Callable[[], Any]:
    def make() -> tuple[Callable[[Any], None], Callable[[], Any], tuple[type[BaseException], ...]]:
        env = gym.make(env_id, **kwargs)
        env.reset(seed=0)
        return env.step, lambda: env.unwrapped.game.to_dict(), (IllegalActionError,)

    return make


def _vector(cls: type, **kwargs: Any) -> Callable[[], Any]:
    def make() -> tuple[Callable[[Any], None], Callable[[], Any], tuple[type[BaseException], ...]]:
        env = cls(3, seed=0, **kwargs)
        if cls is ShelfieVecEnv:
            env.reset()
            step = env.step_async
        else:
            env.reset(seed=0)
            step = env.step
        return (
            lambda a: step([0, a, 0]),
            lambda: env.core.batch.observe(env.core.learner).tobytes(),
            (IllegalActionError,),
        )

    return make


def _rllib() -> tuple[Callable[[Any], None], Callable[[], Any], tuple[type[BaseException], ...]]:
    pytest.importorskip("ray.rllib")
    from shelfie_env.rllib import ShelfieMultiAgentEnv

    env = ShelfieMultiAgentEnv({"num_players": 2})
    env.reset(seed=0)
    return lambda a: env.step({env.possible_agents[env.game.current]: a}), env.state_dict, (IllegalActionError,)


ENVS = {
    "pettingzoo": _pettingzoo,
    "pettingzoo-raw": _pettingzoo_raw,
    "gym-solo": _gym("shelfie/Solo-v0"),
    "gym-versus": _gym("shelfie/Versus-v0", opponents="greedy"),
    "vector-solo": _vector(SoloVectorEnv),
    "vector-versus": _vector(VersusVectorEnv, num_players=2, opponents="greedy"),
    "sb3-vec": _vector(ShelfieVecEnv, num_players=2),
    "rllib": _rllib,
}


def _refused(make: Callable[[], Any], action: Any) -> None:
    step, snapshot, errors = make()
    before = snapshot()
    with pytest.raises(errors) as info:
        step(action)
    assert type(info.value) in errors  # not an OverflowError or TypeError that happens to subclass nothing
    assert snapshot() == before, "a refused action must leave the game unchanged"


def _action_id(action: object) -> str:
    """A test id that is the same in every process (a bare object's repr carries its address)."""
    return "object()" if type(action) is object else repr(action)


@pytest.mark.parametrize("action", FIXED_BAD, ids=_action_id)
@pytest.mark.parametrize("env_name", list(ENVS))
def test_every_env_refuses_actions_that_are_not_ids(env_name: str, action: Any) -> None:
    if env_name.startswith(("vector", "sb3")) and isinstance(action, (list, tuple, dict)):
        action = object()  # a nested sequence changes the batch's shape: covered below
    _refused(ENVS[env_name], action)


@pytest.mark.parametrize("env_name", list(ENVS))
@PROPS
@given(action=NOT_AN_ID)
def test_every_env_refuses_generated_non_ids(env_name: str, action: Any) -> None:
    _refused(ENVS[env_name], action)


@given(action=NOT_AN_ID)
@PROPS
def test_is_action_id_never_raises_and_says_no(action: Any) -> None:
    assert is_action_id(action) is False


@pytest.mark.parametrize("action", [0, 63, 119, np.int64(5), np.uint8(7), np.int8(1)], ids=repr)
def test_real_ids_are_ids(action: Any) -> None:
    assert is_action_id(action)
    assert action_array([action, action], 2).tolist() == [int(action)] * 2


def test_the_vector_error_names_the_game_and_a_wrong_shape_is_a_value_error() -> None:
    with pytest.raises(IllegalActionError, match=r"in game 2: action ids are 0\.\.119") as info:
        action_array([0, 1, 10**30], 3)
    assert info.value.action == 10**30
    with pytest.raises(IllegalActionError, match="in game 0"):
        action_array(np.array([2**64 - 1, 0], dtype=np.uint64), 2)  # not wrapped round to -1
    with pytest.raises(IllegalActionError, match="in game 1"):
        action_array(np.array([0, 120]), 2)
    for wrong in ([0, 1], [[0], [1], [2]], [[0, 1], [2]], "abc", 5):
        with pytest.raises(ValueError, match=r"3 integer ids \(shape \(3,\)\)"):
            action_array(wrong, 3)
