"""The flat masked PPO trainer at ``players=1``: the solo reward, export, exact resume and the player checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from shelfie_env.bots.learned.bot import PPOBot  # noqa: E402
from shelfie_env.game.engine import Game  # noqa: E402
from shelfie_env.train.ppo_flat import SOLO_SCORE_REWARD, PPOFlatConfig, Trainer  # noqa: E402
from shelfie_env.train.ppo_flat.cli import main  # noqa: E402
from shelfie_env.train.ppo_flat.ppo import export_agent  # noqa: E402

SOLO = dict(
    players=1,
    num_envs=16,
    num_steps=16,
    minibatch_size=128,
    total_steps=1024,
    eval_every=512,
    eval_games=8,
    net_arch=[32, 32],
)


@pytest.mark.parametrize(("score_reward", "scale"), [(0.0, SOLO_SCORE_REWARD), (0.05, 0.05)])
def test_a_solo_decision_earns_its_scale_per_point_and_nothing_at_the_end(score_reward, scale) -> None:
    trainer = Trainer(PPOFlatConfig(score_reward=score_reward, **SOLO))
    rng = np.random.default_rng(0)
    games = 0
    for _ in range(300):
        before = trainer.seats.batch.scores[:, 0].astype(np.float64)
        finals = trainer.stats.get("score", 0.0)
        legal = trainer.seats.legal_masks()
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
        reward, ended = trainer._step(actions)
        live = ~ended  # ended games restarted inside _step: their final scores went into stats
        gained = trainer.seats.batch.scores[live, 0] - before[live]
        np.testing.assert_allclose(reward[live], scale * gained, rtol=1e-6)
        final_gain = trainer.stats.get("score", 0.0) - finals - before[ended].sum()
        assert reward[ended].sum() == pytest.approx(scale * final_gain, rel=1e-5)
        games += int(ended.sum())
    assert games > 0


def test_a_solo_run_trains_exports_and_plays_a_legal_solo_game(tmp_path) -> None:
    config = PPOFlatConfig(run_dir=str(tmp_path), **{**SOLO, "total_steps": 3072, "eval_every": 1024})
    trainer = Trainer(config)
    lines: list[str] = []
    path = trainer.train(out=lines.append)
    assert trainer.global_step == 3072 and "win_rate" not in json.loads(lines[-1])
    assert [p["steps"] for p in trainer.curve] == [1024, 2048, 3072]
    assert all(0 <= p["mean_score"] for p in trainer.curve) and "score_rate" not in trainer.curve[0]
    card = json.loads(path.with_suffix(".json").read_text())
    assert (card["env_id"], card["num_players"], card["algo"]) == ("shelfie/Solo-v0", 1, "ppo_flat")
    bot = PPOBot.load(path, num_players=1)
    game = Game.new(1, rng=np.random.default_rng(5))
    while not game.over:
        game.step(bot.act_game(game))  # raises on an illegal action
    assert game.scores()[0] >= 0
    # the benchmark's curve export of a network in training
    again = export_agent(
        trainer.agent, config, tmp_path / "curve_model", trainer.global_step, trainer.train_s, []
    )
    assert PPOBot.load(again, num_players=1).act(Game.new(1, rng=np.random.default_rng(1)).to_dict()) >= 0


def test_a_stopped_solo_run_resumes_to_the_same_weights(tmp_path) -> None:
    whole = Trainer(PPOFlatConfig(run_dir=str(tmp_path / "a"), **SOLO))
    whole.train(out=lambda line: None)
    part = Trainer(PPOFlatConfig(run_dir=str(tmp_path / "b"), **SOLO))
    assert part.train(out=lambda line: None, stop_after=3) is None
    resumed = Trainer.resume(tmp_path / "b" / "latest.pt")
    assert resumed.iteration == 3 and resumed.config.players == 1
    resumed.train(out=lambda line: None)
    for name, value in whole.agent.state_dict().items():
        assert torch.equal(value, resumed.agent.state_dict()[name]), name
    assert [(p["steps"], p["mean_score"]) for p in whole.curve] == [
        (p["steps"], p["mean_score"]) for p in resumed.curve
    ]


@pytest.mark.parametrize("players", [0, 5])
def test_players_outside_1_to_4_are_refused(players) -> None:
    with pytest.raises(ValueError, match=r"players must be 2\.\.4 \(a table\) or 1 \(solo\)"):
        PPOFlatConfig(**{**SOLO, "players": players}).check()


def test_the_cli_trains_a_solo_run(tmp_path, capsys) -> None:
    argv = ["--run-dir", str(tmp_path / "s")]
    for name, value in {**SOLO, "total_steps": 256, "eval_every": 0}.items():
        argv += [f"--{name.replace('_', '-')}", *map(str, value if isinstance(value, list) else [value])]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "flat masked PPO, solo (1 player), 256 learner decisions" in out
    assert f"reward {SOLO_SCORE_REWARD:g} per point" in out and "--players 1" in out
