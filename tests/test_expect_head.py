"""The expectimax policy head: exact against the planner, torch/numpy parity, BC data and training."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.bots.learned.expect_head import (
    NUM_SET_VALUES,
    NUM_SETS,
    Layout,
    placement_values,
    reroll_values,
)
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.bots.planner import PlannerBot
from shelfie_env.bots.planner.dice import FINAL_INDEX, counts_of
from shelfie_env.bots.planner.search import placement_values as planner_v0
from shelfie_env.game.engine import REROLL, Game
from shelfie_env.observation.vector import encode

from .conftest import assert_plays_legally, random_positions, tiny_ppo

LAYOUT = Layout(2)


def _reroll_positions(games: int, seed: int):
    """(game, observation) at every reroll decision of planner-vs-planner games."""
    bot = PlannerBot()
    for k in range(games):
        game = Game.new(2, rng=seed + k)
        while not game.over:
            if game.phase == REROLL:
                yield game, encode(game, game.current)[None]
            game.step(bot.act_game(game))


def test_the_planners_placement_values_give_its_reroll_values_exactly():
    bot = PlannerBot()
    checked = 0
    for game, obs in _reroll_positions(3, seed=40):
        want = bot.action_values_game(game)
        sv = bot.set_values_game(game)
        assert sv.shape == (NUM_SET_VALUES,)
        v0 = placement_values(np.nan_to_num(sv)[None], LAYOUT.free_cells(obs))
        assert np.allclose(v0[0], planner_v0(bot._ctx), atol=1e-4)
        got = reroll_values(v0, obs[:, LAYOUT.dice : LAYOUT.dice + 36], obs[:, LAYOUT.two_rolls] > 0.5)[0]
        for action, value in want.items():
            assert got[action] == pytest.approx(value, abs=1e-4)
        checked += 1
    assert checked > 50


def test_free_cells_and_impossible_placements():
    game = Game.new(2, rng=5)
    game.circled[0] = 0b11111  # plant row circled
    game.crossed[0] = 0b11111 << 5  # game row crossed
    obs = encode(game, 0)[None]
    free = LAYOUT.free_cells(obs)[0]
    assert not free[:10].any() and free[10:].all()
    sv = np.zeros((1, NUM_SET_VALUES), np.float32)
    sv[0, NUM_SETS:] = [100.0, 100.0, -3.0, -2.0, -1.0]  # crossing the full rows is not possible
    v0 = placement_values(sv, free[None])[0]
    # six plants can circle nothing on this shelf: the best legal cross-out (row 4) is its value
    assert v0[FINAL_INDEX[counts_of([0] * 6)]] == pytest.approx(-1.0)
    assert v0[FINAL_INDEX[counts_of([2] * 6)]] == pytest.approx(0.0)  # books: a circle


@pytest.fixture(scope="module")
def expect_model():
    from shelfie_env.train.maskable_ppo.policy import ExpectHeadPolicy

    return tiny_ppo(ExpectHeadPolicy, players=2, set_arch=[32])


def test_numpy_copy_of_the_expect_head_matches_torch(expect_model):
    import torch

    obs, masks = random_positions(300, seed=1)
    torch.manual_seed(0)  # the same weights whatever ran before in this process
    with torch.no_grad():
        for p in expect_model.policy.parameters():
            p.normal_(0.0, 0.3)
        dist = expect_model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        want = dist.distribution.probs.numpy()
    policy = NumpyPolicy.from_sb3(expect_model.policy)
    assert policy.expect is not None
    got = policy.logits(obs)
    z = np.exp(np.where(masks, got - got.max(axis=1, keepdims=True), -np.inf))
    assert np.allclose(z / z.sum(axis=1, keepdims=True), want, atol=1e-5)
    assert np.allclose(policy.logits(obs[3]), got[3], atol=1e-5)
    # one at a time or batched: the same choice, up to float ties between equal expectations
    single = np.array([policy.act(o, m) for o, m in zip(obs, masks)])
    rows = np.arange(len(obs))
    assert np.allclose(got[rows, policy.act_many(obs, masks)], got[rows, single], atol=1e-4)
    assert np.array_equal(NumpyPolicy.from_state(policy.state()).logits(obs), got)
    # the placement values ignore the dice: the same shelves give the same values in every phase
    head = expect_model.policy.action_net
    with torch.no_grad():
        a = head.set_values(torch.as_tensor(obs[:1]))
        other = obs[:1].copy()
        other[0, LAYOUT.dice : LAYOUT.dice + 36] = np.roll(other[0, LAYOUT.dice : LAYOUT.dice + 36], 6)
        assert torch.equal(a, head.set_values(torch.as_tensor(other)))


def test_expect_head_checkpoint_plays_legally(expect_model, tmp_path):
    from shelfie_env.bots.learned.bot import PPOBot
    from shelfie_env.bots.learned.card import make_card
    from shelfie_env.train.checkpoint import save_model

    path = save_model(expect_model, tmp_path / "e.zip", make_card(2, config={"policy_head": "expect"}))
    for deterministic in (True, False):
        bot = PPOBot.load(path, deterministic=deterministic, seed=0)
        assert_plays_legally(bot, seed=11)


def test_recorded_placement_values_index_each_turn_and_merge():
    from shelfie_env.train.maskable_ppo.bc import merge, record_games

    a = record_games(2, 2, "planner", 1, 0.995, 0.1, 0.02, set_values=True)
    b = record_games(2, 1, "planner", 2, 0.995, 0.1, 0.02, set_values=True)
    for data in (a, b):
        reroll = data["masks"][:, :64].any(axis=1)
        assert ((data["sv_index"] >= 0) == reroll).all()
        first = data["obs"][:, LAYOUT.two_rolls] > 0.5
        # one placement row per turn, shared by the turn's second reroll decision
        assert len(data["sv"]) == (reroll & first).sum() and data["sv"].shape[1] == NUM_SET_VALUES
    both = merge(a, b)
    n = len(a["actions"])
    own = b["sv_index"][b["sv_index"] >= 0]
    moved = both["sv_index"][n:][b["sv_index"] >= 0]
    assert np.array_equal(both["sv"][moved], b["sv"][own], equal_nan=True)
    with pytest.raises(ValueError, match="placement values"):
        record_games(2, 1, "greedy", 1, 0.995, 0.1, 0.02, set_values=True)


def test_set_value_loss_ignores_a_common_shift(expect_model):
    import torch

    from shelfie_env.train.maskable_ppo.bc import record_games, set_value_loss

    data = record_games(2, 1, "planner", 3, 0.995, 0.1, 0.02, set_values=True)
    obs = torch.as_tensor(data["obs"])
    idx = np.arange(len(obs))
    head = expect_model.policy.action_net
    with torch.no_grad():
        pred = head.set_values(obs).numpy()
    rows = data["sv_index"] >= 0
    fitted = dict(data)
    fitted["sv"] = np.where(np.isnan(data["sv"]), np.nan, 0.0).astype(np.float32)
    fitted["sv"][data["sv_index"][rows]] = np.where(
        np.isnan(data["sv"][data["sv_index"][rows]]), np.nan, pred[rows] + 7.0
    )
    with torch.no_grad():
        assert float(set_value_loss(head, obs, fitted, idx)) == pytest.approx(0.0, abs=1e-6)
        assert float(set_value_loss(head, obs, data, idx)) > 1e-3


def test_training_run_with_the_expect_head_fits_the_planner(tmp_path):
    import argparse
    import json

    from shelfie_env.bots.learned.bot import PPOBot
    from shelfie_env.train import cli as train_cli

    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    flags = "--algo maskable_ppo --policy-head expect --batched --n-envs 8 --n-steps 32 --batch-size 64 --n-epochs 1 --net-arch 32"
    flags += " --bc-teacher planner --bc-soft-tau 0.05 --bc-games 3 --bc-epochs 1 --bc-dagger-rounds 1"
    flags += " --bc-dagger-games 1 --bc-dagger-epochs 1 --total-steps 256 --eval-every 256 --eval-games 2"
    run_dir = tmp_path / "runs" / "e"
    assert train_cli.run(parser.parse_args([*flags.split(), "--run-dir", str(run_dir)])) == 0
    assert list((tmp_path / "runs" / "teacher").glob("*_q_sv_obs*.npz"))  # placement values recorded
    assert "bc_val_regret" in json.loads((run_dir / "bc.json").read_text())
    bot = PPOBot.load(run_dir / "latest.zip")
    assert bot.policy.expect is not None
    assert_plays_legally(bot, seed=4, via_state=False)

    # a new run can start from the distilled network (distilled.zip) and skips the warm start
    bc = PPOBot.load(run_dir / "distilled.zip")
    obs, _ = random_positions(30, seed=6)
    more = "--total-steps 256 --eval-every 256 --eval-games 2 --bc-games 3"
    more += f" --init-from {run_dir / 'distilled.zip'} --learning-rate 0"
    args = [*flags.split(), *more.split()]
    assert train_cli.run(parser.parse_args([*args, "--run-dir", str(tmp_path / "runs" / "f")])) == 0
    assert not (tmp_path / "runs" / "f" / "distilled.zip").exists()
    again = PPOBot.load(tmp_path / "runs" / "f" / "latest.zip")
    assert np.allclose(again.policy.logits(obs), bc.policy.logits(obs), atol=1e-5)  # step size 0: unchanged
    wrong = [*args, "--policy-head", "flat", "--run-dir", str(tmp_path / "runs" / "g")]
    assert train_cli.run(parser.parse_args(wrong)) == 2  # refused with a message naming policy_head

    # an exported .npz (what ships) starts a run just as well, critic included
    from shelfie_env.train.checkpoint import export_weights, load_model

    model, card = load_model(run_dir / "distilled.zip")
    npz = export_weights(model, tmp_path / "exported.npz", card)
    from_npz = [*args[:-2], "--init-from", str(npz), "--learning-rate", "0"]
    assert train_cli.run(parser.parse_args([*from_npz, "--run-dir", str(tmp_path / "runs" / "h")])) == 0
    model_h, _ = load_model(tmp_path / "runs" / "h" / "latest.zip")
    for k, v in model.policy.state_dict().items():
        assert np.allclose(model_h.policy.state_dict()[k].numpy(), v.numpy(), atol=1e-6), k


def test_distillation_on_reroll_rows_only_stays_finite():
    import torch

    from shelfie_env.train.maskable_ppo.bc import clone, record_games
    from shelfie_env.train.maskable_ppo.policy import ExpectHeadPolicy

    data = record_games(2, 1, "planner", 5, 0.995, 0.1, 0.02, set_values=True)
    reroll = data["masks"][:, :64].any(axis=1)
    only = {k: v[reroll] if k not in ("sv",) else v for k, v in data.items()}
    model = tiny_ppo(ExpectHeadPolicy, players=2, set_arch=[32])
    clone(model, only, epochs=1, batch_size=8, tau=0.05, log=lambda *_: None)
    assert all(torch.isfinite(p).all() for p in model.policy.parameters())
