"""TD(λ) self-play: λ-returns, rewards from each seat's point of view, the value bot, a smoke run."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.bots.learned.afterstate import AfterstateNet, feature_size
from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.learned.value import SET_INDEX, ValueBot
from shelfie_env.game.actions import END_TURN, circle_action, cross_action
from shelfie_env.game.engine import Game

from .conftest import assert_plays_legally

torch = pytest.importorskip("torch")
td = pytest.importorskip("shelfie_env.train.td.td")


def test_lambda_returns_on_hand_built_cases():
    values = np.array([0.2, -0.4, 0.6])  # after turns 0, 1, 2; the game ends after turn 2
    assert td.lambda_returns(values, 1.0, lam=1.0).tolist() == [1.0, 1.0, 1.0]  # Monte Carlo
    # one-step TD: each turn's target is the next turn's value; the last turn's the reward
    assert td.lambda_returns(values, 1.0, lam=0.0).tolist() == pytest.approx([-0.4, 0.6, 1.0])
    # λ = 0.5: G2 = R, G1 = 0.5 V2 + 0.5 G2, G0 = 0.5 V1 + 0.5 G1
    g2 = 1.0
    g1 = 0.5 * 0.6 + 0.5 * g2
    g0 = 0.5 * -0.4 + 0.5 * g1
    assert td.lambda_returns(values, 1.0, lam=0.5).tolist() == pytest.approx([g0, g1, g2])
    assert td.lambda_returns(np.array([0.3]), -1.0, lam=0.7).tolist() == [-1.0]  # one turn: the reward


def test_each_turns_target_is_built_from_the_next_turns_value():
    turns = [(None, 0.2), (None, -0.4), (None, 0.6)]
    assert td.turn_targets(turns, 1.0, lam=0.0).tolist() == pytest.approx([-0.4, 0.6, 1.0])
    assert td.turn_targets(turns, -1.0, lam=1.0).tolist() == [-1.0, -1.0, -1.0]


def test_final_rewards_are_from_each_seats_point_of_view():
    assert td.final_rewards([50, 40], margin_coef=0.0) == [1.0, -1.0]
    assert td.final_rewards([40, 40], margin_coef=0.0) == [0.0, 0.0]
    r = td.final_rewards([60, 35], margin_coef=0.1)
    assert r == pytest.approx([1.0 + 0.1 * 25 / 50, -1.0 - 0.1 * 25 / 50])
    three = td.final_rewards([30, 50, 40], margin_coef=0.0)
    assert three == pytest.approx([-1.0, 1.0, 0.0])


def test_placement_index_names_the_set_or_the_crossed_row():
    g = Game.from_dict(
        {
            "num_players": 2,
            "points": [[1, 2, 3, 5, 8]] * 5,
            "boards": [[[0] * 5 for _ in range(5)] for _ in range(2)],
            "current_player": 0,
            "phase": "circle",
            "dice": [0, 0, 1, 3, 4, 4],
            "spent": [False] * 6,
            "rolls_left": 0,
            "circles_this_turn": 0,
            "end_triggered": False,
        }
    )
    start = g.clone()
    g.step(circle_action(0, 1))  # two plants: plant #2
    g.step(circle_action(4, 1))  # two cats: cat #2
    assert td.placement_index(start, g, 0) == SET_INDEX[(1 << 1) | (1 << 21)]
    crossed = start.clone()
    crossed.circled[0] = 0
    after = crossed.clone()
    after.crossed[0] |= 0b11111 << 10  # row 2 (books) crossed out
    assert td.placement_index(crossed, after, 0) == NUM_SETS + 2
    assert cross_action(2) == 117


def test_value_bot_follows_its_values():
    # a network that loves one cell: the bot circles it whenever the dice allow
    size = feature_size(2)
    w = np.zeros((size, 1))
    w[0, 0] = 5.0  # the mover's plant #1 circled ...
    w[1:25, 0] = -1.0  # ... and nothing else
    fan = ValueBot(AfterstateNet([(w, np.zeros(1))], 2, margin_coef=0.1))
    g = Game.new(2, rng=1)
    g.phase, g.rolls_left = 1, 0  # circle phase with the first roll
    g.dice, g.counts = [0, 1, 2, 3, 4, 5], [1] * 6
    g.spent = [False] * 6
    assert fan.act_game(g) == circle_action(0, 0)
    g.step(circle_action(0, 0))
    assert fan.act_game(g) == END_TURN


def test_td_smoke_run_writes_a_playable_card_and_resumes_exactly(tmp_path):
    cfg = td.TDConfig(
        iterations=2, games=4, eval_every=2, eval_games=4, net_arch=[16], run_dir=str(tmp_path / "r")
    )
    td.TDTrainer(cfg).run(log=lambda s: None)
    bot = bots.make("td", path=str(tmp_path / "r" / "best.npz"))
    assert bot.card["teacher"] == "none" and bot.card["algo"] == "TD(lambda)" and bot.num_players == 2
    assert_plays_legally(bot, seed=5, via_state=False)
    # two more iterations by resuming equal two more in one go
    longer = td.TDConfig(**{**cfg.__dict__, "iterations": 4, "run_dir": str(tmp_path / "one")})
    td.TDTrainer(longer).run(log=lambda s: None)
    resumed = td.TDConfig(**{**cfg.__dict__, "iterations": 4})
    td.TDTrainer(resumed).run(resume=True, log=lambda s: None)
    a = np.load(tmp_path / "one" / "latest.npz")
    b = np.load(tmp_path / "r" / "latest.npz")
    assert all(np.array_equal(a[k], b[k]) for k in a.files)
    with pytest.raises(FileExistsError):
        td.TDTrainer(cfg).run(log=lambda s: None)
    pytest.importorskip("matplotlib")
    from shelfie_env.arena import plot_run

    assert plot_run(tmp_path / "r").stat().st_size > 1000  # the curve over self-play games


def test_games_split_over_workers_give_the_same_kind_of_data(tmp_path):
    cfg = td.TDConfig(
        iterations=1, games=4, workers=2, eval_every=0, net_arch=[16], run_dir=str(tmp_path / "w")
    )
    td.TDTrainer(cfg).run(log=lambda s: None)
    assert (tmp_path / "w" / "latest.npz").is_file()
    with pytest.raises(ValueError, match="workers"):
        td.TDConfig(workers=0)


def test_the_td_recipe_reads_no_teacher_and_no_hand_written_value(tmp_path, monkeypatch):
    """``td_2p``: random weights, and the planner's evaluation is never built (only its search runs)."""
    from shelfie_env.bots.planner import evaluation
    from shelfie_env.train.config import read_config

    def refuse(*args, **kwargs):
        raise AssertionError("the planner's hand-written evaluation was used")

    monkeypatch.setattr(evaluation.Context, "__init__", refuse)
    data = {k: v for k, v in read_config("td_2p").items() if k != "algo"}
    assert "init_from" not in data
    cfg = td.TDConfig(
        **{**data, "iterations": 1, "games": 6, "eval_every": 0, "run_dir": str(tmp_path / "t")}
    )
    td.TDTrainer(cfg).run(log=lambda s: None)
    bot = bots.make("td", path=str(tmp_path / "t" / "latest.npz"))
    assert bot.card["teacher"] == "none" and bot.card["value_net"] == "afterstate"
    assert_plays_legally(bot, seed=4, via_state=False)


def test_lockstep_games_give_the_same_data_as_one_at_a_time():
    rng = np.random.default_rng(3)
    dims = [feature_size(2), 8, 1]
    net = AfterstateNet(
        [(rng.normal(size=(a, b)) * 0.3, np.zeros(b)) for a, b in zip(dims, dims[1:])], 2, 0.1
    )
    cfg = td.TDConfig(games=6, opp_greedy=0.5)
    one = td.play_games(net, td.TDConfig(**{**cfg.__dict__, "lockstep": 1}), np.random.default_rng(9))
    many = td.play_games(net, cfg, np.random.default_rng(9))
    assert one[2] == many[2] and one[2]["decisions"] > 0
    # the same positions and targets (up to float32 rounding of a bigger matrix product),
    # in the order the games finish
    a, b = (sorted(zip(map(bytes, xs), ys.tolist())) for xs, ys in (one[:2], many[:2]))
    assert [x for x, _ in a] == [x for x, _ in b]
    np.testing.assert_allclose([y for _, y in a], [y for _, y in b], atol=1e-5)
    with pytest.raises(ValueError, match="lockstep"):
        td.TDConfig(lockstep=0)


def test_the_late_step_size_takes_over_at_its_iteration(tmp_path):
    cfg = td.TDConfig(
        iterations=2,
        games=2,
        eval_every=0,
        net_arch=[8],
        lr_late=1e-4,
        lr_late_from=1,
        run_dir=str(tmp_path / "lr"),
    )
    trainer = td.TDTrainer(cfg)
    assert trainer.learning_rate() == cfg.learning_rate
    trainer.run(log=lambda s: None)
    assert trainer.learning_rate() == 1e-4 and trainer.opt.param_groups[0]["lr"] == 1e-4


def test_the_training_guide_documents_every_td_field_with_its_default():
    import dataclasses
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "training.md").read_text()
    for f in dataclasses.fields(td.TDConfig):
        rows = [line for line in guide.splitlines() if line.startswith(f"| `{f.name}` | ")]
        default = str(getattr(td.TDConfig(), f.name))
        assert any(r.split("|")[2].strip() == default for r in rows), (f.name, default, rows)


@pytest.mark.parametrize("players", [3, 4])
def test_td_trains_and_plays_bigger_tables(tmp_path, players):
    cfg = td.TDConfig(
        players=players,
        iterations=1,
        games=2,
        eval_every=1,
        eval_games=3,
        eval_opponents=["greedy"],
        net_arch=[8],
        run_dir=str(tmp_path / "n"),
    )
    td.TDTrainer(cfg).run(log=lambda s: None)
    import json

    rec = json.loads((tmp_path / "n" / "eval.jsonl").read_text().splitlines()[-1])
    assert (
        rec["greedy"]["games"] == 3 and 0.0 <= rec["greedy"]["win_rate"] <= 1.0
    )  # first places against a field
    bot = bots.make("td", path=str(tmp_path / "n" / "latest.npz"))
    assert bot.num_players == players
    game = Game.new(players, rng=1)
    while not game.over:
        action = bot.act_game(game)
        assert game.legal_mask()[action]
        game.step(action)


def test_search_returns_put_each_positions_own_value_in_the_chain():
    out = td.search_returns(np.array([0.2, -0.4]), reward=1.0, lam=0.5)
    last = 0.5 * -0.4 + 0.5 * 1.0
    assert np.allclose(out, [0.5 * 0.2 + 0.5 * last, last])
    assert np.allclose(td.search_returns(np.array([0.3, 0.1]), 1.0, 1.0), [1.0, 1.0])
    assert np.allclose(td.search_returns(np.array([0.3, 0.1]), 1.0, 0.0), [0.3, 0.1])


def test_a_run_can_start_from_the_shipped_network(tmp_path):
    from shelfie_env.bots.learned.value import load_value_bot, shipped_td_model

    trainer = td.TDTrainer(td.TDConfig(init="shipped", run_dir=str(tmp_path / "r")))
    shipped = load_value_bot(shipped_td_model(2), 2).net
    for (w, b), (w2, b2) in zip(trainer.numpy_net().layers, shipped.layers):
        assert np.allclose(w, w2) and np.allclose(b, b2)
    with pytest.raises(ValueError, match="net_arch"):
        td.TDTrainer(td.TDConfig(init="shipped", net_arch=[64], run_dir=str(tmp_path / "s")))
    with pytest.raises(FileNotFoundError, match="init"):
        td.TDTrainer(td.TDConfig(init=str(tmp_path / "none.npz"), run_dir=str(tmp_path / "t")))


# a small expert-iteration run: reply targets, games played by the depth-2 search
_REPLY_RUN = dict(target="reply", play_depth=2, search_width=2, eval_every=0, net_arch=[16], lockstep=2)


def test_reply_targets_and_the_depth_two_player_train(tmp_path):
    cfg = td.TDConfig(**_REPLY_RUN, iterations=1, games=4, run_dir=str(tmp_path / "r"))
    xs, rets, stats = td.play_games(td.TDTrainer(cfg).numpy_net(), cfg, np.random.default_rng(0))
    assert len(xs) == len(rets) == stats["positions"] > 0
    assert np.all(np.abs(rets) <= 1.0 + cfg.margin_coef * 4)
    for bad in ({"target": "mc"}, {"play_depth": 3}, {"search_width": 0}, {"players": 3, "target": "reply"}):
        with pytest.raises(
            ValueError, match=next(iter(bad)) if "players" not in bad else "players must be 2"
        ):
            td.TDConfig(**bad)


def test_an_expert_iteration_run_resumes_exactly(tmp_path):
    base = dict(_REPLY_RUN, games=2, seed=4)
    td.TDTrainer(td.TDConfig(**base, iterations=2, run_dir=str(tmp_path / "one"))).run(log=lambda s: None)
    td.TDTrainer(td.TDConfig(**base, iterations=1, run_dir=str(tmp_path / "r"))).run(log=lambda s: None)
    td.TDTrainer(td.TDConfig(**base, iterations=2, run_dir=str(tmp_path / "r"))).run(
        resume=True, log=lambda s: None
    )
    a = np.load(tmp_path / "one" / "latest.npz")
    b = np.load(tmp_path / "r" / "latest.npz")
    assert all(np.array_equal(a[k], b[k]) for k in a.files)
