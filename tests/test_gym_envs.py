"""The Gymnasium envs ``shelfie/Solo-v0`` and ``shelfie/Versus-v0``."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import shelfie_env
from shelfie_env.envs.gym_envs import LegalDiscrete, SoloEnv, VersusEnv
from shelfie_env.game.actions import CROSS_BASE, NUM_ACTIONS, STOP, circle_action
from shelfie_env.game.errors import IllegalActionError
from shelfie_env.observation.vector import encode, observation_size

from .conftest import board, make_state

ENV_IDS = ["shelfie/Solo-v0", "shelfie/Versus-v0"]
BOOK = 2


def run_episode(env: gym.Env, seed: int) -> tuple[float, dict, int]:
    """Play with ``action_space.sample()`` (legal by construction); return (return, final info, steps)."""
    env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        total += reward
        steps += 1
        assert not truncated
        if terminated:
            return total, info, steps


# ----------------------------------------------------------------- registration and checkers
def test_registered_on_import_and_idempotent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second registration must neither fail nor warn ("Overriding ...")
        shelfie_env.register_envs()
    for env_id in ENV_IDS:
        assert env_id in gym.registry
    env = gym.make("shelfie/Versus-v0")
    inner = env.unwrapped
    assert isinstance(inner, VersusEnv) and inner.num_players == 2 and inner.fixed_seat is None
    assert [type(b).__name__ for b in inner.opponents] == ["RandomBot"]
    assert env.observation_space.shape == (observation_size(2),)
    assert gym.make("shelfie/Solo-v0").observation_space.shape == (observation_size(1),)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_check_env(env_id: str) -> None:
    # check_env samples actions with action_space.sample(); LegalDiscrete draws legal ones.
    # Its step-determinism check draws an action *before* a seeded reset: after seed 123 the
    # draw is the first legal action, and reset(seed) re-seeds the sampler, so the action is
    # "stop" - legal at the start of every turn. A failure here is a real API problem.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "wrapped env" notice and human-render output
        gym_check_env(gym.make(env_id).unwrapped)
        gym_check_env(gym.make(env_id))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sb3_check_env(env_id: str) -> None:
    sb3_check_env(gym.make(env_id).unwrapped, warn=True)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_maskable_ppo_smoke(env_id: str) -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = gym.make(env_id)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu",
        policy_kwargs={"net_arch": [16]}, verbose=0,
    )
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs, _ = env.reset(seed=1)
    for _ in range(20):
        masks = get_action_masks(env)
        action, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[int(action)]
        obs, _, terminated, _, _ = env.step(int(action))
        if terminated:
            obs, _ = env.reset()


# ----------------------------------------------------------------- masks and sampling
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_action_masks_equal_the_legal_mask(env_id: str) -> None:
    env = gym.make(env_id, render_mode=None)
    inner = env.unwrapped
    obs, info = env.reset(seed=2)
    for _ in range(200):
        game = inner.game
        legal = np.zeros(NUM_ACTIONS, dtype=bool)
        legal[list(game.legal_actions())] = True
        assert game.current == inner.seat
        masks = inner.action_masks()
        assert masks.dtype == bool and masks.any()
        np.testing.assert_array_equal(masks, legal)
        np.testing.assert_array_equal(info["action_mask"], legal.astype(np.int8))
        np.testing.assert_array_equal(obs, encode(game, inner.seat))
        obs, _, terminated, _, info = env.step(env.action_space.sample())
        if terminated:
            assert not inner.action_masks().any() and not info["action_mask"].any()
            obs, info = env.reset()


def test_legal_discrete_sampling() -> None:
    env = SoloEnv()
    env.reset(seed=0)
    space = env.action_space
    assert isinstance(space, LegalDiscrete) and isinstance(space, gym.spaces.Discrete) and space.n == 120
    legal = set(env.game.legal_actions())
    assert {int(space.sample()) for _ in range(200)} <= legal
    only_cross = np.zeros(NUM_ACTIONS, dtype=np.int8)
    only_cross[CROSS_BASE] = 1
    assert int(space.sample(mask=only_cross)) == CROSS_BASE  # an explicit mask is Gymnasium's behaviour
    clone = pickle.loads(pickle.dumps(space))  # detached: a plain Discrete sampler
    assert clone == space and 0 <= int(clone.sample()) < 120
    copied = pickle.loads(pickle.dumps(env))  # an env copy binds its own space on reset
    copied.reset(seed=4)
    assert {int(copied.action_space.sample()) for _ in range(100)} <= set(copied.game.legal_actions())


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_illegal_action_raises_and_changes_nothing(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    before = env.unwrapped.state_dict()
    with pytest.raises(IllegalActionError, match="cross"):
        env.step(CROSS_BASE)  # never legal in the reroll phase that starts a turn
    with pytest.raises(IllegalActionError):
        env.step(1.5)
    assert env.unwrapped.state_dict() == before
    env.step(STOP)
    assert env.unwrapped.game.phase_name in ("circle", "cross")


def test_step_before_reset_and_after_end_are_errors() -> None:
    env = SoloEnv()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(STOP)
    run_episode(env, seed=0)
    with pytest.raises(RuntimeError, match="ended"):
        env.step(STOP)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_players": 1}, "num_players"),
        ({"num_players": 5}, "num_players"),
        ({"seat": 2}, "seat"),
        ({"seat": True}, "seat"),
        ({"opponents": ["random", "random"]}, "opponents"),
        ({"opponents": ["no-such-bot"]}, "no-such-bot"),
        ({"opponents": [object()]}, "opponent"),
        ({"opponents": 3}, "opponents"),
        ({"reward_mode": "elo"}, "reward_mode"),
        ({"render_mode": "rgb_array"}, "render_mode"),
    ],
)
def test_versus_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VersusEnv(**kwargs)


# ----------------------------------------------------------------- Solo rewards
def test_solo_return_is_the_final_score() -> None:
    env = gym.make("shelfie/Solo-v0")
    for seed in range(5):
        total, info, _ = run_episode(env, seed)
        assert total == info["score"] == info["scores"][0]
        assert info["score"] == env.unwrapped.game.score(0)


def test_solo_step_reward_is_the_score_change() -> None:
    # Books row has two circles; three books circle book #3 and the row scores 1+2+3.
    state = make_state(boards=[board(".....", ".....", "OO...")], phase="circle",
                       dice=[2, 2, 2, 3, 4, 0], rolls_left=0)
    env = SoloEnv()
    env.reset(options={"state": state})
    _, reward, terminated, _, _ = env.step(circle_action(BOOK, 2))
    assert reward == 6.0 and not terminated
    _, reward, _, _, _ = env.step(circle_action(3, 0))  # one trophy: no line reaches 3
    assert reward == 0.0


# ----------------------------------------------------------------- Versus rewards and seats
def finished_position(learner_rows: list[str], rival_rows: list[str], learner: int) -> dict:
    """The learner (seat ``learner``) is in a cross phase of the triggered last round."""
    boards = [board(*rival_rows), board(*rival_rows)]
    boards[learner] = board(*learner_rows)
    return make_state(boards=boards, current=learner, phase="cross", dice=[0] * 6, rolls_left=0)


@pytest.mark.parametrize(
    "mode, rival, expected",
    [
        ("rank", ["XXXXX", "XXXXX"], 1.0),  # rival 0 points, learner 6: a win
        ("margin", ["XXXXX", "XXXXX"], 6.0),
        ("score", ["XXXXX", "XXXXX"], 6.0),
        ("rank", ["OOOOO", "XXXXX"], -1.0),  # rival 19 points: a loss
        ("margin", ["OOOOO", "XXXXX"], -13.0),
    ],
)
def test_versus_reward_from_the_learners_seat(mode: str, rival: list[str], expected: float) -> None:
    env = VersusEnv(seat=1, reward_mode=mode)
    obs, info = env.reset(seed=0, options={"state": finished_position(["XXXXX", ".....", "OOO.."], rival, 1)})
    assert info["action_mask"][CROSS_BASE + 4] == 1
    _, reward, terminated, _, info = env.step(CROSS_BASE + 4)
    assert terminated and reward == expected
    assert info["score"] == 6 and info["seat"] == 1


def test_versus_learner_in_seat_zero_waits_for_the_round_to_finish() -> None:
    # Learner (seat 0) has 19; the rival (seat 1) still plays one turn, which can bring it to 6
    # at most (three circles from an empty-ish shelf), so the learner wins.
    env = VersusEnv(seat=0)
    state = finished_position(["OOOOO", "XXXXX"], ["XXXXX"], 0)
    env.reset(seed=3, options={"state": state})
    _, reward, terminated, _, info = env.step(CROSS_BASE + 4)
    assert terminated and reward == 1.0 and info["scores"][0] == 19 and info["scores"][1] <= 6
    assert env.game.phase_name == "over"


def test_versus_random_seat_and_opponent_objects() -> None:
    class FirstLegal:
        def __init__(self) -> None:
            self.calls = 0

        def act(self, state: dict) -> int:
            self.calls += 1
            game = shelfie_env.Game.from_dict(state)
            return game.legal_actions()[0]

    bot = FirstLegal()
    env = VersusEnv(num_players=3, opponents=[bot, "random"])
    seats = set()
    for seed in range(12):
        env.reset(seed=seed)
        seats.add(env.seat)
        assert env.game.current == env.seat
    assert seats == {0, 1, 2}
    total, info, _ = run_episode(env, seed=5)
    assert bot.calls > 0 and total in (-1.0, -0.5, 0.0, 0.5, 1.0)
    assert info["scores"][env.seat] == info["score"]


def test_versus_is_deterministic_given_the_seed() -> None:
    def trajectory(seed: int) -> list:
        env = gym.make("shelfie/Versus-v0", num_players=3)
        obs, _ = env.reset(seed=seed)
        out = [obs.tobytes()]
        while True:
            obs, reward, terminated, _, _ = env.step(env.action_space.sample())
            out.append((obs.tobytes(), reward))
            if terminated:
                return out

    assert trajectory(7) == trajectory(7)
    assert trajectory(7) != trajectory(8)


def test_versus_render_ansi_marks_the_learner() -> None:
    env = gym.make("shelfie/Versus-v0", seat=1, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "player 2 (you)" in text


def test_custom_points_table() -> None:
    points = [[1, 1, 1, 1, 1] for _ in range(5)]
    env = gym.make("shelfie/Solo-v0", points=points)
    total, info, _ = run_episode(env, seed=1)
    assert env.unwrapped.state_dict()["points"] == points
    grid = np.array(env.unwrapped.state_dict()["boards"][0]) == 1
    lines = list(grid.sum(axis=1)) + list(grid.sum(axis=0))  # every circled cell is worth 1 per scoring line
    assert total == info["score"] == sum(k for k in lines if k >= 3)


def test_versus_single_bot_object_plays_every_opponent_seat() -> None:
    class FirstLegal:
        def act(self, state: dict) -> int:
            return shelfie_env.Game.from_dict(state).legal_actions()[0]

    env = VersusEnv(num_players=4, opponents=FirstLegal(), seat=3)
    total, info, _ = run_episode(env, seed=2)
    assert len(info["scores"]) == 4 and total in (-1.0, -2 / 3, -1 / 3, 0.0, 1 / 3, 2 / 3, 1.0)
