"""``obs="features"`` on every env: the space, the values (scalar encoders and batched twins equal), errors."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import shelfie_env  # noqa: F401  (registers the envs)
from shelfie_env import shelfie_v0
from shelfie_env.envs.sb3_vec import ShelfieVecEnv
from shelfie_env.envs.vector import SoloVectorEnv, VersusVectorEnv
from shelfie_env.observation.features import encode_features, obs_size

POINTS = [[1, 2, 4, 7, 12]] * 5  # a custom table: circle gains above the default bound


def _check_in_space(space: gym.spaces.Box, obs: np.ndarray) -> None:
    assert obs.shape == space.shape and obs.dtype == np.float32
    assert space.contains(obs), np.flatnonzero((obs < space.low) | (obs > space.high))


@pytest.mark.parametrize("players", [1, 2, 3])
def test_aec_env_observes_features(players: int) -> None:
    env = shelfie_v0.env(num_players=players, obs="features")
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    space = env.observation_space("player_0")["observation"]
    assert space.shape == (obs_size(players, "features"),)
    for _ in range(120):
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        seat = int(agent.split("_")[1])
        np.testing.assert_array_equal(obs["observation"], encode_features(env.unwrapped.game, seat))
        _check_in_space(space, obs["observation"])
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize(("env_id", "kwargs"), [("shelfie/Solo-v0", {}), ("shelfie/Versus-v0", {"num_players": 3})])
def test_gym_envs_observe_features(env_id: str, kwargs: dict) -> None:
    env = gym.make(env_id, obs="features", points=POINTS, **kwargs)
    obs, info = env.reset(seed=1)
    raw = env.unwrapped
    assert env.observation_space.shape == (obs_size(raw.num_players, "features"),)
    rng = np.random.default_rng(1)
    for _ in range(200):
        np.testing.assert_array_equal(obs, encode_features(raw.game, raw.seat))
        _check_in_space(env.observation_space, obs)
        obs, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            obs, info = env.reset()


@pytest.mark.parametrize("vec", ["gym", "sb3"])
@pytest.mark.parametrize("players", [1, 2, 4])
def test_vector_envs_match_the_scalar_encoder(vec: str, players: int) -> None:
    if vec == "gym":
        env = (
            SoloVectorEnv(16, seed=5, obs="features")
            if players == 1
            else VersusVectorEnv(16, players, opponents="greedy", seed=5, obs="features")
        )
        obs, _ = env.reset(seed=5)
        space = env.single_observation_space
    else:
        env = ShelfieVecEnv(16, players, opponents="greedy", seed=5, obs="features")
        obs = env.reset()
        space = env.observation_space
    core = env.core
    rng = np.random.default_rng(2)
    for _ in range(60):
        assert obs.shape == (16, obs_size(players, "features"))
        for i in range(16):
            if core.batch.done[i]:
                continue
            want = encode_features(core.batch.to_game(i), int(core.learner[i]))
            np.testing.assert_allclose(obs[i], want, rtol=0, atol=1e-6)
            _check_in_space(space, obs[i])
        masks = env.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
        if vec == "gym":
            obs = env.step(acts)[0]
        else:
            env.step_async(acts)
            obs = env.step_wait()[0]


def test_rllib_env_config_obs() -> None:
    pytest.importorskip("ray")
    from shelfie_env.rllib.env import ShelfieMultiAgentEnv

    env = ShelfieMultiAgentEnv({"num_players": 2, "obs": "features"})
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    assert o["observation"].shape == (obs_size(2, "features"),)
    np.testing.assert_array_equal(o["observation"], encode_features(env.game, int(agent.split("_")[1])))
    with pytest.raises(ValueError, match="obs must be one of"):
        ShelfieMultiAgentEnv({"obs": "pixels"})


@pytest.mark.parametrize(
    "make",
    [
        lambda: shelfie_v0.env(obs="pixels"),
        lambda: gym.make("shelfie/Solo-v0", obs="pixels"),
        lambda: gym.make("shelfie/Versus-v0", obs="Features"),
        lambda: VersusVectorEnv(4, obs="pixels"),
        lambda: ShelfieVecEnv(4, 2, obs=1),
    ],
)
def test_an_unknown_obs_mode_is_refused_by_name(make) -> None:
    with pytest.raises(ValueError, match="obs must be one of 'default', 'features'"):
        make()


def test_default_observation_unchanged() -> None:
    env = gym.make("shelfie/Versus-v0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (obs_size(2),) == (186,)


@pytest.mark.parametrize("env_id", ["shelfie/Solo-v0", "shelfie/Versus-v0"])
def test_gym_reset_warns_about_unknown_option_keys(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    state = env.unwrapped.game.to_dict()
    with pytest.warns(UserWarning, match=r"ignores unknown option\(s\) \['stat'\]"):
        env.reset(options={"stat": state})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(options={"state": state})


def test_sb3_terminal_observation_has_the_features() -> None:
    env = ShelfieVecEnv(8, 2, opponents="random", seed=0, obs="features")
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(400):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()], dtype=np.int64)
        env.step_async(acts)
        _, _, done, infos = env.step_wait()
        if done.any():
            i = int(np.flatnonzero(done)[0])
            assert infos[i]["terminal_observation"].shape == (obs_size(2, "features"),)
            return
    raise AssertionError("no game ended")


# ------------------------------------------------------------------ reroll="keep"
def _keep_ids_of(mask: np.ndarray) -> set[int]:
    return {int(a) for a in np.flatnonzero(mask[1:64]) + 1}


def test_gym_and_aec_envs_play_keep_ids() -> None:
    reroll = "keep"
    from shelfie_env.game.reroll_keep import game_mask

    env = gym.make("shelfie/Versus-v0", reroll=reroll, opponents="greedy")
    _, info = env.reset(seed=2)
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    rerolls = 0
    for _ in range(300):
        np.testing.assert_array_equal(info["action_mask"], game_mask(reroll, raw.game))
        np.testing.assert_array_equal(raw.action_masks(), game_mask(reroll, raw.game).astype(bool))
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        rerolls += 1 <= a < 64
        _, _, term, _, info = env.step(a)
        if term:
            _, info = env.reset()
    assert rerolls > 20
    aec = shelfie_v0.env(reroll=reroll)
    aec.reset(seed=1)
    for _ in range(200):
        obs, _, term, _, _ = aec.last()
        if term:
            break
        np.testing.assert_array_equal(obs["action_mask"], game_mask(reroll, aec.unwrapped.game))
        aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_a_keep_id_that_rerolls_nothing_is_refused_and_the_game_unchanged() -> None:
    from shelfie_env.game.errors import IllegalActionError

    env = gym.make("shelfie/Solo-v0", reroll="keep")
    env.reset(seed=0)
    game = env.unwrapped.game
    present = int(np.bitwise_or.reduce([1 << d for d in game.dice]))
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match="rerolls no die"):
        env.step(present)  # keeps every face showing
    assert env.unwrapped.game.to_dict() == before
    venv = VersusVectorEnv(4, reroll="keep", seed=0)
    venv.reset(seed=0)
    acts = np.zeros(4, dtype=np.int64)
    acts[2] = int(np.bitwise_or.reduce(1 << venv.core.batch.dice[2]))
    with pytest.raises(IllegalActionError, match="in game 2"):
        venv.step(acts)


@pytest.mark.parametrize("vec", ["gym", "sb3"])
def test_vector_keep_masks_and_steps_match_the_scalar_translation(vec: str) -> None:
    from shelfie_env.game.reroll_keep import game_mask, spec_actions

    if vec == "gym":
        env = VersusVectorEnv(16, 2, opponents="random", seed=3, reroll="keep")
        env.reset(seed=3)
    else:
        env = ShelfieVecEnv(16, 2, opponents="random", seed=3, reroll="keep")
        env.reset()
    core = env.core
    rng = np.random.default_rng(4)
    for _ in range(40):
        masks = env.action_masks() if vec == "gym" else np.stack(env.env_method("action_masks"))
        for i in range(16):
            if vec == "sb3" or not env._autoreset[i]:
                np.testing.assert_array_equal(masks[i], game_mask("keep", core.batch.to_game(i)).astype(bool))
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
        want = spec_actions("keep", acts, core.batch.dice)
        assert core.batch.legal_mask()[np.arange(16), want].all() or vec == "gym"
        if vec == "gym":
            env.step(acts)
        else:
            env.step_async(acts)
            env.step_wait()


def test_rllib_env_config_reroll() -> None:
    pytest.importorskip("ray")
    from shelfie_env.game.reroll_keep import game_mask
    from shelfie_env.rllib.env import ShelfieMultiAgentEnv

    env = ShelfieMultiAgentEnv({"reroll": "keep"})
    obs, _ = env.reset(seed=0)
    ((agent, o),) = obs.items()
    np.testing.assert_array_equal(o["action_mask"], game_mask("keep", env.game))
    with pytest.raises(ValueError, match="reroll must be one of"):
        ShelfieMultiAgentEnv({"reroll": "faces"})


# ------------------------------------------------------------------ score_reward
W = 0.02


def test_gym_versus_return_is_final_reward_plus_the_shaped_score() -> None:
    env = gym.make("shelfie/Versus-v0", score_reward=W, opponents="greedy")
    for seed in range(3):
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        total, term = 0.0, False
        while not term:
            _, r, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            total += r
        rank = shelfie_v0.final_rewards(info["scores"], "rank")[info["seat"]]
        assert total == pytest.approx(rank + W * info["score"])


@pytest.mark.parametrize("vec", ["gym", "sb3"])
def test_vector_versus_return_is_final_reward_plus_the_shaped_score(vec: str) -> None:
    n = 8
    if vec == "gym":
        env = VersusVectorEnv(n, 3, opponents="random", seed=1, score_reward=W, autoreset_mode="SameStep")
        env.reset(seed=1)
    else:
        env = ShelfieVecEnv(n, 3, opponents="random", seed=1, score_reward=W)
        env.reset()
    rng = np.random.default_rng(0)
    totals = np.zeros(n)
    checked = 0
    for _ in range(600):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()], dtype=np.int64)
        if vec == "gym":
            _, r, done, _, info = env.step(acts)
            scores, seats = info.get("scores"), info.get("seat")
        else:
            env.step_async(acts)
            _, r, done, infos = env.step_wait()
        totals += r
        for i in np.flatnonzero(done):
            if vec == "gym":
                all_scores, seat = scores[i], seats[i]
            else:
                all_scores, seat = infos[i]["scores"], infos[i]["seat"]
            rank = shelfie_v0.final_rewards(list(all_scores), "rank")[seat]
            assert totals[i] == pytest.approx(rank + W * all_scores[seat])
            totals[i] = 0.0
            checked += 1
    assert checked >= 8


def test_aec_and_rllib_rewards_add_the_shaped_score() -> None:
    env = shelfie_v0.env(num_players=2, score_reward=W)
    env.reset(seed=4)
    rng = np.random.default_rng(1)
    totals: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, r, term, _, info = env.last()
        totals[agent] = totals.get(agent, 0.0) + r
        env.step(None if term else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    scores = info["scores"]
    for seat in range(2):
        want = shelfie_v0.final_rewards(scores, "rank")[seat] + W * scores[seat]
        assert totals[f"player_{seat}"] == pytest.approx(want)
    pytest.importorskip("ray")
    from shelfie_env.rllib.env import ShelfieMultiAgentEnv

    menv = ShelfieMultiAgentEnv({"score_reward": W})
    obs, _ = menv.reset(seed=2)
    sums = {a: 0.0 for a in menv.possible_agents}
    done = False
    while not done:
        ((agent, o),) = obs.items()
        obs, rew, term, _, infos = menv.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        for a, v in rew.items():
            sums[a] += v
        done = term["__all__"]
    scores = infos["player_0"]["scores"]
    for seat in range(2):
        want = shelfie_v0.final_rewards(scores, "rank")[seat] + W * scores[seat]
        assert sums[f"player_{seat}"] == pytest.approx(want)


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.1", True])
def test_a_bad_score_reward_is_refused(bad) -> None:
    with pytest.raises(ValueError, match="score_reward must be"):
        gym.make("shelfie/Versus-v0", score_reward=bad)
    with pytest.raises(ValueError, match="score_reward must be"):
        VersusVectorEnv(4, score_reward=bad)
    with pytest.raises(ValueError, match="score_reward"):
        ShelfieVecEnv(4, 1, score_reward=0.1)
