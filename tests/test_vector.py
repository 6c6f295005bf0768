"""Vector envs (Gymnasium) and the SB3 adapter over the batched engine."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from shelfie_env.batched import BatchedGame
from shelfie_env.envs.common import final_rewards
from shelfie_env.envs.vector import SoloVectorEnv, VersusVectorEnv
from shelfie_env.game.engine import Game
from shelfie_env.observation.vector import encode


def _random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random(masks.shape) * masks
    return u.argmax(axis=1)


def test_solo_rewards_add_up_to_final_score() -> None:
    env = SoloVectorEnv(8, seed=0)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    returns = np.zeros(8)
    finished = 0
    for _ in range(600):
        for i in range(8):
            if not env._autoreset[i]:
                assert np.array_equal(obs[i], encode(env.core.batch.to_game(i), 0))
        waiting = env._autoreset.copy()
        masks = env.action_masks()
        assert masks.any(axis=1).all()
        obs, rew, term, trunc, info = env.step(_random_legal(masks, rng))
        assert not trunc.any()
        assert (rew[waiting] == 0).all() and not term[waiting].any()
        returns += rew
        if term.any():
            assert np.array_equal(info["score"][term], returns[term])
            assert (info["_score"] == term).all()
            finished += int(term.sum())
        returns[waiting] = 0  # those games restarted in this step
    assert finished >= 8


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_versus_learner_on_turn_and_final_rewards(num_players: int) -> None:
    env = VersusVectorEnv(16, num_players=num_players, seed=1, reward_mode="rank")
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(1)
    seats_seen: set[int] = set()
    finished = 0
    for _ in range(400):
        b, learner = env.core.batch, env.core.learner
        live = ~env._autoreset
        assert (b.current[live] == learner[live]).all()
        seats_seen.update(int(s) for s in learner)
        for i in np.flatnonzero(live)[:4]:
            assert np.array_equal(obs[i], encode(b.to_game(i), int(learner[i])))
        obs, rew, term, _, info = env.step(_random_legal(env.action_masks(), rng))
        for i in np.flatnonzero(term):
            scores = [int(s) for s in info["scores"][i]]
            assert rew[i] == final_rewards(scores, "rank")[learner[i]]
            assert info["score"][i] == scores[learner[i]]
            finished += 1
        assert (rew[~term] == 0).all()
    assert finished > 0 and seats_seen == set(range(num_players))


def test_versus_fixed_seat_and_reward_modes() -> None:
    for mode in ("score", "margin"):
        env = VersusVectorEnv(8, num_players=3, seat=2, reward_mode=mode, seed=5)
        env.reset()
        rng = np.random.default_rng(2)
        ended = False
        for _ in range(300):
            assert (env.core.learner == 2).all()
            _, rew, term, _, info = env.step(_random_legal(env.action_masks(), rng))
            for i in np.flatnonzero(term):
                ended = True
                assert rew[i] == final_rewards(list(info["scores"][i]), mode)[2]
        assert ended


class LowestLegal:
    """A deterministic bot object without a batched path (exercises the per-game fallback)."""

    name = "lowest"

    def __init__(self) -> None:
        self.calls = 0
        self.seats: set[int] = set()

    def act(self, state: dict) -> int:
        self.calls += 1
        self.seats.add(state["current_player"])
        return int(Game.from_dict(state).legal_actions()[0])


def test_fallback_bot_moves_match_a_replay() -> None:
    bot = LowestLegal()
    env = VersusVectorEnv(6, num_players=2, seat=1, opponents=bot, seed=9)
    bot.calls = 0
    env.reset(seed=9)
    assert bot.calls >= 6  # seat 0 (the bot) opened every game
    replay = BatchedGame(6, 2, seed=9)
    while True:
        live = (replay.current == 0) & ~replay.done
        if not live.any():
            break
        lowest = np.argmax(replay.legal_mask(), axis=1)
        replay.step(np.where(live, lowest, 0), active=live)
    assert np.array_equal(env.core.batch.S, replay.S)
    calls = bot.calls
    for _ in range(12):  # a turn has at most 3 reroll decisions and 4 circle decisions
        env.step(np.argmax(env.action_masks(), axis=1))
    assert bot.calls > calls  # the learner's turns ended and the bot replied


def test_opponents_sit_in_the_other_seats_in_order() -> None:
    bot = LowestLegal()
    env = VersusVectorEnv(8, num_players=3, seat=1, opponents=[bot, "random"], seed=4)
    rng = np.random.default_rng(4)
    for _ in range(100):
        env.step(_random_legal(env.action_masks(), rng))
    assert bot.seats == {0}
    bot2 = LowestLegal()
    env = VersusVectorEnv(8, num_players=3, seat=0, opponents=["random", bot2], seed=4)
    for _ in range(100):
        env.step(_random_legal(env.action_masks(), rng))
    assert bot2.seats == {2}


def test_next_step_and_same_step_autoreset() -> None:
    env = SoloVectorEnv(4, seed=2)
    env.reset(seed=2)
    rng = np.random.default_rng(3)
    while True:
        obs, rew, term, _, _ = env.step(_random_legal(env.action_masks(), rng))
        if term.any():
            break
    i = int(np.flatnonzero(term)[0])
    masks = env.action_masks()
    assert masks[i].sum() == 1 and masks[i, 0]
    obs2, rew2, term2, _, _ = env.step(_random_legal(masks, rng))
    assert rew2[i] == 0 and not term2[i]
    assert np.array_equal(obs2[i], encode(env.core.batch.to_game(i), 0))
    assert env.core.batch.to_dict(i)["phase"] == "reroll"

    same = SoloVectorEnv(4, seed=2, autoreset_mode=AutoresetMode.SAME_STEP)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    same.reset(seed=2)
    while True:
        obs, _, term, _, info = same.step(_random_legal(same.action_masks(), rng))
        if term.any():
            break
    i = int(np.flatnonzero(term)[0])
    assert info["_final_obs"][i] and info["final_obs"][i][50 + 55 + 3] == 1.0  # phase "over"
    assert obs[i][50 + 55] == 1.0 and same.action_masks()[i].any()  # already a new game


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="num_players"):
        VersusVectorEnv(2, num_players=1)
    with pytest.raises(ValueError, match="seat"):
        VersusVectorEnv(2, num_players=2, seat=2)
    with pytest.raises(ValueError, match="opponents"):
        VersusVectorEnv(2, num_players=3, opponents=["random"])
    with pytest.raises(ValueError, match="reward_mode"):
        VersusVectorEnv(2, reward_mode="win")
    env = SoloVectorEnv(2)
    env.reset()
    with pytest.raises(ValueError, match="illegal action"):
        env.step(np.array([114, 114]))
    with pytest.raises(ValueError, match="integer"):
        env.step(np.array([0.0, 0.0]))
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=[1, 2])


def test_seeded_resets_replay_the_same_episodes() -> None:
    def run(seed: int) -> list[np.ndarray]:
        env = VersusVectorEnv(4, num_players=3, opponents=["random", "greedy"], seed=0)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        seen = [obs]
        for _ in range(60):
            seen.append(env.step(_random_legal(env.action_masks(), rng))[0])
        return seen

    a, b, c = run(7), run(7), run(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_sb3_adapter_with_maskable_ppo() -> None:
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.logger import Logger

    from shelfie_env.envs.sb3_vec import EpisodeScoreCallback, ShelfieVecEnv

    torch.set_num_threads(1)
    env = ShelfieVecEnv(16, num_players=2, seed=0)
    assert is_masking_supported(env)
    assert env.reset().shape == (16, 186)
    masks = get_action_masks(env)
    assert masks.shape == (16, 120) and np.array_equal(masks, env.action_masks())
    rng = np.random.default_rng(0)
    episodes = []
    for _ in range(200):
        _, rew, done, infos = env.step(_random_legal(get_action_masks(env), rng))
        for i in np.flatnonzero(done):
            ep = infos[i]["episode"]
            assert infos[i]["terminal_observation"].shape == (186,)
            assert ep["r"] == rew[i] and ep["l"] > 0 and ep["score"] == infos[i]["score"]
            episodes.append(ep)
    assert episodes

    model = MaskablePPO(
        "MlpPolicy", ShelfieVecEnv(8, num_players=1, seed=1), n_steps=32, batch_size=64, seed=0
    )
    logger = Logger(folder=None, output_formats=[])
    records: dict[str, float] = {}
    logger.record = lambda key, value, exclude=None: records.__setitem__(key, value)  # type: ignore[method-assign]
    model.set_logger(logger)
    model.learn(600, callback=EpisodeScoreCallback())
    assert len(model.ep_info_buffer) > 0
    assert records["rollout/ep_score_mean"] == pytest.approx(
        np.mean([e["score"] for e in model.ep_info_buffer])
    )
    assert records["rollout/ep_rew_mean"] == pytest.approx(
        records["rollout/ep_score_mean"]
    )  # solo: return = score


def test_compiled_greedy_opponents_match_the_per_game_fallback() -> None:
    from shelfie_env.bots.greedy.scalar import GreedyBot

    class PerGameGreedy(GreedyBot):
        """The same bot, but not the built-in type: the env asks it game by game."""

    compiled = VersusVectorEnv(8, num_players=3, seat=1, opponents="greedy", seed=21)
    fallback = VersusVectorEnv(
        8, num_players=3, seat=1, opponents=[PerGameGreedy(), PerGameGreedy()], seed=21
    )
    assert compiled._autoreset.sum() == 0 and np.array_equal(compiled.core.batch.S, fallback.core.batch.S)
    rng = np.random.default_rng(5)
    ended = 0
    for _ in range(150):
        actions = _random_legal(compiled.action_masks(), rng)
        _, r1, t1, _, _ = compiled.step(actions)
        _, r2, t2, _, _ = fallback.step(actions)
        assert np.array_equal(compiled.core.batch.S, fallback.core.batch.S)
        assert np.array_equal(r1, r2) and np.array_equal(t1, t2)
        ended += int(t1.sum())
    assert ended > 0


def test_disabled_autoreset_needs_a_reset_mask() -> None:
    env = SoloVectorEnv(4, seed=6, autoreset_mode="Disabled")
    assert env.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    env.reset(seed=6)
    rng = np.random.default_rng(6)
    done = np.zeros(4, dtype=bool)
    while not done.any():
        _, _, done, _, _ = env.step(_random_legal(env.action_masks(), rng))
    with pytest.raises(RuntimeError, match="reset_mask"):
        env.step(np.zeros(4, dtype=np.int64))
    obs, _ = env.reset(options={"reset_mask": done})
    assert not env.core.batch.done.any()
    assert (obs[done][:, 50 + 55] == 1.0).all()  # the reset games are in their first reroll phase


def test_make_vec_builds_the_batched_envs() -> None:
    import gymnasium as gym

    import shelfie_env  # noqa: F401  (registers the ids)

    env = gym.make_vec("shelfie/Versus-v0", num_envs=8, num_players=3, opponents="greedy")
    assert isinstance(env, VersusVectorEnv)
    assert env.num_envs == 8 and env.core.batch.num_players == 3
    obs, _ = env.reset(seed=3)
    assert obs.shape == (8, 63 * 3 + 60)
    assert env.action_masks().shape == (8, 120)
    env.step(_random_legal(env.action_masks(), np.random.default_rng(0)))
    # Same seed, same episodes as the class built directly.
    direct = VersusVectorEnv(8, num_players=3, opponents="greedy")
    assert np.array_equal(direct.reset(seed=3)[0], obs)

    solo = gym.make_vec("shelfie/Solo-v0", num_envs=4)
    assert isinstance(solo, SoloVectorEnv)
    sync = gym.make_vec("shelfie/Versus-v0", num_envs=2, vectorization_mode="sync")
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    with pytest.raises(ValueError, match="render_mode='ansi'"):
        gym.make_vec("shelfie/Versus-v0", num_envs=2, render_mode="ansi")


def _random_policy(num_players: int = 2, seed: int = 0):  # type: ignore[no-untyped-def]
    from shelfie_env.bots.learned.policy import NumpyPolicy

    rng = np.random.default_rng(seed)
    size = 63 * num_players + 60
    return NumpyPolicy(
        [
            (rng.normal(size=(size, 32)), rng.normal(size=32)),
            (rng.normal(size=(32, 120)), rng.normal(size=120)),
        ],
        "tanh",
    )


class _PerGamePolicyBot:
    """A neural opponent asked game by game (no act_batch)."""

    def __init__(self, policy) -> None:  # type: ignore[no-untyped-def]
        self.policy = policy

    def act_game(self, game: Game) -> int:
        return self.policy.act(encode(game, game.current), game.legal_mask(), True)

    def act(self, state: dict) -> int:
        return self.act_game(Game.from_dict(state))


class _BatchPolicyBot(_PerGamePolicyBot):
    """The same opponent with a batched path; counts its calls."""

    def __init__(self, policy) -> None:  # type: ignore[no-untyped-def]
        super().__init__(policy)
        self.calls = 0
        self.rows = 0

    def act_batch(self, batch: BatchedGame, rows: np.ndarray) -> np.ndarray:
        self.calls += 1
        self.rows += len(rows)
        obs = batch.observe(batch.current)[rows]
        return self.policy.act_many(obs, batch.M[rows], True)


def test_batch_acting_opponents_play_like_the_per_game_path() -> None:
    policy = _random_policy()
    batched = _BatchPolicyBot(policy)
    envs = [
        VersusVectorEnv(16, num_players=2, opponents=[bot], seed=3)
        for bot in (_PerGamePolicyBot(policy), batched)
    ]
    obs = [e.reset(seed=3)[0] for e in envs]
    assert np.array_equal(obs[0], obs[1])
    rng = np.random.default_rng(0)
    for _ in range(150):
        acts = _random_legal(envs[0].action_masks(), rng)
        out = [e.step(acts) for e in envs]
        for a, b in zip(out[0][:3], out[1][:3]):
            assert np.array_equal(a, b)
    assert batched.calls > 0 and batched.rows > 2 * batched.calls  # several games per call


class _CyclePool:
    """A pool that hands out its bots in turn."""

    def __init__(self, bots: list) -> None:
        self.bots, self.k = bots, 0

    def draw(self):  # type: ignore[no-untyped-def]
        self.k += 1
        return self.bots[self.k % len(self.bots)]


def test_pool_opponents_are_drawn_again_for_every_game() -> None:
    from shelfie_env.bots import make
    from shelfie_env.envs.vector import BatchedSeats

    pool = _CyclePool([make("random"), make("greedy"), _BatchPolicyBot(_random_policy(num_players=3))])
    core = BatchedSeats(6, num_players=3, opponents=[pool, pool], seed=1)
    drawn = [core._seat_bot[i, s] for i in range(6) for s in range(3) if s != core.learner[i]]
    assert pool.k == 12 and all(b is not None for b in drawn)
    assert {type(b).__name__ for b in drawn} == {"RandomBot", "GreedyBot", "_BatchPolicyBot"}
    for i in range(6):
        assert core._seat_bot[i, core.learner[i]] is None
    rng = np.random.default_rng(2)
    ended_games = 0
    for _ in range(400):
        _, ended = core.step(_random_legal(core.batch.legal_mask(), rng))
        if ended.any():
            ended_games += int(ended.sum())
            before = pool.k
            core.reset_games(ended)
            assert pool.k == before + 2 * int(ended.sum())
    assert ended_games > 0


def test_policy_act_many_samples_legal_actions_by_their_probability() -> None:
    policy = _random_policy(seed=5)
    obs = np.random.default_rng(1).random((4000, 186)).astype(np.float32)
    obs[:] = obs[0]
    masks = np.zeros((4000, 120), dtype=bool)
    masks[:, [3, 7, 64, 119]] = True
    acts = policy.act_many(obs, masks, deterministic=False, rng=np.random.default_rng(0))
    assert set(acts.tolist()) <= {3, 7, 64, 119}
    z = policy.logits(obs[:1])[0][[3, 7, 64, 119]].astype(np.float64)
    p = np.exp(z - z.max())
    p /= p.sum()
    freq = np.array([(acts == a).mean() for a in (3, 7, 64, 119)])
    assert np.abs(freq - p).max() < 0.03
    det = policy.act_many(obs[:5], masks[:5], deterministic=True)
    assert all(d == policy.act(obs[0], masks[0], True) for d in det)
    with pytest.raises(ValueError, match="no legal action"):
        policy.act_many(obs[:2], np.zeros((2, 120), dtype=bool))
