"""The ``ppo`` bot: loads a checkpoint through its card and only plays legal actions."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.bots import make
from shelfie_env.bots.learned.bot import PPOBot, shipped_model
from shelfie_env.bots.learned.card import CheckpointMismatchError, make_card
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.game.engine import Game
from shelfie_env.train.checkpoint import save_model
from shelfie_env.train.maskable_ppo.selfplay import SelfPlayEnv


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from sb3_contrib import MaskablePPO

    model = MaskablePPO(
        "MlpPolicy",
        SelfPlayEnv(2, seed=0),
        n_steps=64,
        batch_size=64,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [16]},
    )
    path = tmp_path_factory.mktemp("m") / "tiny.zip"
    save_model(model, path, make_card(2))
    return model, path


def _check_legal_play(bot, num_players: int, games: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    moves = 0
    for g in range(games):
        game = Game.new(num_players, rng=rng)
        while not game.over:
            if (moves + g) % 3 == 0:
                a = bot.act(game.to_dict())  # the public protocol
            else:
                a = bot.act_game(game)
            assert a in game.legal_actions(), (a, game.to_dict())
            game.step(a)
            moves += 1
    return moves


def test_tiny_model_only_plays_legal_actions(tiny_model):
    _, path = tiny_model
    for det in (True, False):
        bot = make("ppo", path=str(path), deterministic=det, seed=1)
        assert _check_legal_play(bot, 2, 8, seed=int(det)) > 200


def test_numpy_actor_matches_sb3(tiny_model):
    import torch

    model, _ = tiny_model
    pol = NumpyPolicy.from_sb3(model.policy)
    env = SelfPlayEnv(2, seed=5)
    obs, _ = env.reset(seed=5)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs[None]))
        ref = dist.distribution.logits.numpy()[0]
    got = pol.logits(obs)
    assert np.allclose(got - got.max(), ref - ref.max(), atol=1e-4)
    mask = env.action_masks()
    a, _ = model.predict(obs, action_masks=mask, deterministic=True)
    assert pol.act(obs, mask, deterministic=True) == int(a)


def test_wrong_player_count_is_refused(tiny_model):
    _, path = tiny_model
    bot = PPOBot.load(path)
    with pytest.raises(ValueError, match="2-player"):
        bot.act_game(Game.new(3, rng=0))
    with pytest.raises(FileNotFoundError, match="no model file"):
        make("ppo", path=str(path.with_name("missing.zip")))


def test_mismatched_card_is_refused_by_the_bot(tiny_model, tmp_path):
    import json
    import shutil

    _, path = tiny_model
    shutil.copyfile(path, tmp_path / "x.zip")
    card = json.loads(path.with_suffix(".json").read_text())
    card["obs_version"] = -1
    (tmp_path / "x.json").write_text(json.dumps(card))
    with pytest.raises(CheckpointMismatchError, match="obs_version"):
        make("ppo", path=str(tmp_path / "x.zip"))


def test_shipped_two_player_model_plays_legal_moves():
    assert shipped_model(2).is_file(), "shelfie_env/models/ppo_2p.npz must be shipped"
    bot = make("ppo", num_players=2)
    assert bot.num_players == 2 and bot.card["evaluation"]
    assert _check_legal_play(bot, 2, 5, seed=11) > 100


def test_shipped_models_play_their_pinned_moves():
    """The shipped networks choose the same moves as when they were trained (positions of greedy games)."""
    import json
    from pathlib import Path

    pinned = json.loads((Path(__file__).parent / "data" / "shipped_model_moves.json").read_text())
    for name, players in (("ppo_2p", 2), ("ppo_solo", 1)):
        bot = make("ppo", num_players=players)
        assert bot.card["preset"] == name
        rows = pinned[name]
        assert len(rows) > 50
        assert [bot.act(r["state"]) for r in rows] == [r["action"] for r in rows], name
