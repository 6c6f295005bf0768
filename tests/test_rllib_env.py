"""The RLlib multi-agent env: RLlib's pre-check, turn order, the same observations as shelfie_v0."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from shelfie_env import shelfie_v0  # noqa: E402
from shelfie_env.envs.common import final_rewards  # noqa: E402
from shelfie_env.game.errors import IllegalActionError  # noqa: E402
from shelfie_env.rllib import ShelfieMultiAgentEnv  # noqa: E402


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_rllibs_own_pre_check_passes(players):
    check_multiagent_environments(ShelfieMultiAgentEnv({"num_players": players}))


@pytest.mark.parametrize("players", [2, 3])
def test_only_the_mover_observes_what_shelfie_v0_shows_and_rewards_come_at_the_end(players):
    env = ShelfieMultiAgentEnv({"num_players": players, "reward_mode": "margin"})
    ref = shelfie_v0.env(num_players=players, reward_mode="margin")
    obs, infos = env.reset(seed=7)
    ref.reset(seed=7)
    rng = np.random.default_rng(0)
    while True:
        (agent,) = obs
        assert agent == ref.agent_selection == f"player_{env.game.current}"
        mine, theirs = obs[agent], ref.observe(agent)
        np.testing.assert_array_equal(mine["observation"], theirs["observation"])
        np.testing.assert_array_equal(mine["action_mask"], theirs["action_mask"])
        action = int(rng.choice(np.flatnonzero(mine["action_mask"])))
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        ref.step(action)
        if terms["__all__"]:
            break
        assert set(rewards.values()) == {0.0} and set(obs) == {f"player_{env.game.current}"}
    scores = env.game.scores()
    assert rewards == {f"player_{i}": r for i, r in enumerate(final_rewards(scores, "margin"))}
    assert rewards == {a: ref.rewards[a] for a in ref.possible_agents}
    assert all(terms.values()) and not truncs["__all__"]
    assert infos["player_0"]["scores"] == scores
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0})


def test_illegal_and_misaddressed_actions_are_refused_and_change_nothing():
    env = ShelfieMultiAgentEnv()
    obs, _ = env.reset(seed=1)
    (agent,) = obs
    before = env.state_dict()
    illegal = int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step({agent: illegal})
    with pytest.raises(ValueError, match="on turn"):
        env.step({"player_1": 0})
    assert env.state_dict() == before
    legal = env.get_action_space(agent).sample()
    assert obs[agent]["action_mask"][legal] == 1


def test_seeds_and_states_pass_through():
    a, b = ShelfieMultiAgentEnv(), ShelfieMultiAgentEnv()
    oa, _ = a.reset(seed=3)
    ob, _ = b.reset(seed=3)
    assert a.state_dict() == b.state_dict()
    a.step({"player_0": 0})  # stop: the first roll is final
    state = a.state_dict()
    c = ShelfieMultiAgentEnv()
    obs, _ = c.reset(seed=0, options={"state": state})
    assert c.state_dict() == state and set(obs) == {f"player_{state['current_player']}"}
    with pytest.raises(ValueError, match="unknown reset option"):
        c.reset(options={"board": 1})
    with pytest.raises(ValueError, match="env_config"):
        ShelfieMultiAgentEnv({"players": 2})
    with pytest.raises(ValueError, match="num_players"):
        ShelfieMultiAgentEnv({"num_players": 5})
