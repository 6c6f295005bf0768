"""The keep-head policy: features, torch/numpy parity, checkpoints and the ``ppo`` bot."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from shelfie_env.actions import reroll_positions
from shelfie_env.checkpoint import NumpyPolicy
from shelfie_env.keep_head import keep_features, kept_counts
from shelfie_env.observation import layout

from .conftest import assert_plays_legally, random_positions, tiny_ppo

DICE = {name: start for name, start, _ in layout(2)}["dice_onehot"]


def _onehot(dice: list[int]) -> np.ndarray:
    out = np.zeros(36, np.float32)
    for pos, face in enumerate(sorted(dice)):
        out[6 * pos + face] = 1.0
    return out


@pytest.mark.parametrize("dice", [[0, 0, 1, 3, 4, 5], [4, 4, 4, 4, 4, 5], [5] * 6, [0, 1, 2, 3, 4, 5]])
def test_keep_features_count_the_dice_each_id_keeps(dice):
    counts = kept_counts(_onehot(dice)[None])[0]
    feats = keep_features(_onehot(dice)[None])[0]
    assert feats.shape == (64, 42) and (feats.reshape(64, 6, 7).sum(axis=2) == 1).all()
    ordered = sorted(dice)
    for action in range(64):
        rerolled = set(reroll_positions(action)) if action else set()
        kept = Counter(f for i, f in enumerate(ordered) if i not in rerolled)
        assert [kept[f] for f in range(6)] == counts[action].tolist()
        assert feats[action].reshape(6, 7).argmax(axis=1).tolist() == [kept[f] for f in range(6)]
    # the same kept multiset gives the same features whatever positions it sits at
    assert (feats[0] == keep_features(_onehot(dice)[None])[0][0]).all()


@pytest.fixture(scope="module")
def keep_model():
    from training.policy import KeepHeadPolicy

    return tiny_ppo(KeepHeadPolicy, dice_start=DICE, keep_embed=16, keep_score=8)


def test_numpy_copy_of_the_keep_head_matches_torch(keep_model):
    import torch

    obs, masks = random_positions(200, seed=1)
    # random (not just initial) weights so the head's every term matters
    with torch.no_grad():
        for p in keep_model.policy.parameters():
            p.normal_(0.0, 0.3)
    with torch.no_grad():
        dist = keep_model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        want = dist.distribution.probs.numpy()
    policy = NumpyPolicy.from_sb3(keep_model.policy)
    assert policy.head is not None and policy.head["dice_start"] == DICE
    got = policy.logits(obs)
    z = np.exp(np.where(masks, got - got.max(axis=1, keepdims=True), -np.inf))
    assert np.allclose(z / z.sum(axis=1, keepdims=True), want, atol=1e-5)
    assert np.allclose(policy.logits(obs[3]), got[3], atol=1e-5)  # one observation at a time
    assert (policy.act_many(obs, masks) == np.array([policy.act(o, m) for o, m in zip(obs, masks)])).all()
    again = NumpyPolicy.from_state(policy.state())
    assert np.array_equal(again.logits(obs), got)
    # ids with the same kept multiset get the same reroll logit
    row = next(i for i in range(len(obs)) if masks[i, 0])
    feats = keep_features(obs[row : row + 1, DICE : DICE + 36])[0]
    same = [a for a in range(64) if (feats[a] == feats[1]).all()]
    assert len(same) > 1 and np.allclose(got[row, same], got[row, 1])


def test_keep_head_checkpoint_round_trips_and_plays_legally(keep_model, tmp_path):
    from shelfie_env.bots.ppo import PPOBot
    from shelfie_env.checkpoint import load_model, make_card, save_model

    path = save_model(keep_model, tmp_path / "keep.zip", make_card(2, config={"policy_head": "keep"}))
    loaded, _ = load_model(path, num_players=2)
    obs, _ = random_positions(20, seed=2)
    assert np.allclose(
        NumpyPolicy.from_sb3(loaded.policy).logits(obs), NumpyPolicy.from_sb3(keep_model.policy).logits(obs)
    )
    for deterministic in (True, False):
        bot = PPOBot.load(path, deterministic=deterministic, seed=0)
        assert_plays_legally(bot, seed=9)


def test_keep_head_is_a_training_option():
    from training.config import TrainConfig

    assert TrainConfig().policy_head == "flat"
    with pytest.raises(ValueError, match="policy_head"):
        TrainConfig(policy_head="wide")


def test_training_run_with_the_keep_head_writes_a_playable_checkpoint(tmp_path):
    import argparse

    from shelfie_env.bots.ppo import PPOBot
    from shelfie_env.checkpoint import load_card
    from training import train as train_cli

    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    flags = "--policy-head keep --batched --n-envs 8 --n-steps 32 --batch-size 64 --n-epochs 1 --net-arch 32"
    flags += " --bc-games 2 --bc-epochs 1 --bc-dagger-rounds 0 --total-steps 512 --snapshot-every 256"
    flags += " --eval-every 256 --eval-games 2 --save-every 256"
    run_dir = tmp_path / "k"
    assert train_cli.run(parser.parse_args([*flags.split(), "--run-dir", str(run_dir)])) == 0
    card = load_card(run_dir / "latest.zip", num_players=2)
    assert card["config"]["policy_head"] == "keep" and card["steps"] >= 512
    with np.load(run_dir / "pool.npz") as data:
        assert any(k.endswith("head_keep_w") for k in data.files)  # snapshots keep their head
    bot = PPOBot.load(run_dir / "latest.zip")
    assert bot.policy.head is not None
    assert_plays_legally(bot, seed=3, via_state=False)
