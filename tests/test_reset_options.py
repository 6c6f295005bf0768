"""``reset(options=...)``: ``{"state": ...}`` is read, other keys are ignored quietly (PettingZoo's ``api_test``
passes ``{"options": 1}``), and a key that looks like a misspelled ``state`` is warned about."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from pettingzoo.test import api_test

import shelfie_env  # noqa: F401  (registers the gym ids)
from shelfie_env import shelfie_v0


def test_pettingzoo_api_test_raises_no_warning_about_reset_options() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(shelfie_v0.env(num_players=2), num_cycles=20)
    ours = [str(w.message) for w in caught if "reset" in str(w.message) or "option" in str(w.message)]
    assert ours == []


@pytest.mark.parametrize("key", ["stat", "State", "states"])
def test_a_misspelled_state_key_is_still_warned_about(key: str) -> None:
    env = shelfie_v0.env(num_players=2)
    env.reset(seed=0)
    state = env.unwrapped.state_dict()
    with pytest.warns(UserWarning, match=rf"shelfie_v0.reset ignores unknown option\(s\) \['{key}'\]"):
        env.reset(options={key: state})


def test_other_keys_are_ignored_quietly_and_state_is_still_read() -> None:
    env = shelfie_v0.env(num_players=2)
    env.reset(seed=3)
    env.step(env.unwrapped.game.legal_actions()[0])
    state = env.unwrapped.state_dict()
    gym_env = gym.make("shelfie/Versus-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=1, options={"state": state, "options": 1, "render": True})
        gym_env.reset(seed=0, options={"options": 1})
    assert env.unwrapped.state_dict()["dice"] == state["dice"]
