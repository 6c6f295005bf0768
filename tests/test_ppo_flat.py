"""The flat masked PPO trainer: exact resume, its checks, and the exported model played by the ``ppo`` bot."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from shelfie_env.bots.spec import build_bot  # noqa: E402
from shelfie_env.game.engine import Game  # noqa: E402
from shelfie_env.observation.features import encode_features  # noqa: E402
from shelfie_env.train.ppo_flat import PPOFlatConfig, Trainer  # noqa: E402
from shelfie_env.train.ppo_flat.cli import main  # noqa: E402

TINY = dict(
    num_envs=16,
    num_steps=16,
    minibatch_size=128,
    total_steps=1024,
    eval_every=512,
    eval_games=8,
    opp_random=0.3,
    opp_greedy=0.3,
    snapshot_every=256,
    net_arch=[32, 32],
)


def test_a_stopped_run_resumes_to_the_same_weights(tmp_path) -> None:
    whole = Trainer(PPOFlatConfig(run_dir=str(tmp_path / "a"), **TINY))
    whole.train(out=lambda line: None)
    part = Trainer(PPOFlatConfig(run_dir=str(tmp_path / "b"), **TINY))
    assert part.train(out=lambda line: None, stop_after=3) is None
    resumed = Trainer.resume(tmp_path / "b" / "latest.pt")
    assert resumed.iteration == 3 and len(resumed.opponents.snapshots) >= 2
    resumed.train(out=lambda line: None)
    for name, value in whole.agent.state_dict().items():
        assert torch.equal(value, resumed.agent.state_dict()[name]), name
    assert [(p["steps"], p["score_rate"]) for p in whole.curve] == [
        (p["steps"], p["score_rate"]) for p in resumed.curve
    ]


def test_the_exported_model_plays_as_the_ppo_bot(tmp_path) -> None:
    trainer = Trainer(PPOFlatConfig(run_dir=str(tmp_path), **TINY))
    path = trainer.train(out=lambda line: None)
    card = json.loads(path.with_suffix(".json").read_text())
    assert (card["algo"], card["obs"], card["policy_head"], card["teacher"]) == (
        "ppo_flat",
        "features",
        "flat",
        "none",
    )
    bot = build_bot(f"ppo:path={path}")
    game = Game.new(2, rng=np.random.default_rng(3))
    x = torch.from_numpy(encode_features(game, game.current)[None])
    mask = torch.from_numpy(game.legal_mask().astype(bool)[None])
    want = int(trainer.agent.actor(x).masked_fill(~mask, -1e9).argmax())
    assert bot.act(game.to_dict()) == want


def test_stop_bias_makes_stopping_likely_at_the_start() -> None:
    config = PPOFlatConfig(stop_bias=float(np.log(60)), **{**TINY, "total_steps": 256})
    agent = Trainer(config).agent
    game = Game.new(2, rng=np.random.default_rng(0))
    x = torch.from_numpy(encode_features(game, game.current)[None])
    mask = torch.from_numpy(game.legal_mask().astype(bool)[None])
    with torch.no_grad():
        p_stop = float(agent.log_probs(x, mask).exp()[0, 0])
    assert 0.35 < p_stop < 0.65


def test_evaluate_matches_autograd_through_log_probs_and_value() -> None:
    torch.manual_seed(0)
    agent = Trainer(PPOFlatConfig(**{**TINY, "total_steps": 256})).agent.double()
    x = torch.randn(64, agent.actor[0].in_features, dtype=torch.float64)
    mask = torch.rand(64, 120) < 0.3
    mask[:, 0] = True
    actions = torch.multinomial(mask.double(), 1).squeeze(1)
    w = torch.randn(3, 64, dtype=torch.float64)

    def grads(loss):
        agent.zero_grad()
        loss.backward()
        return [p.grad.clone() for p in agent.parameters()]

    logp, entropy, value = agent.evaluate(x, mask, actions)
    fast = grads((w[0] * logp + w[1] * entropy + w[2] * value).sum())
    ref_logp = agent.log_probs(x, mask)
    ref_entropy = -(ref_logp.exp() * ref_logp).sum(dim=-1)
    ref_value = agent.value(x)
    ref_logp_a = ref_logp.gather(1, actions[:, None]).squeeze(1)
    for got, want in ((logp, ref_logp_a), (entropy, ref_entropy), (value, ref_value)):
        torch.testing.assert_close(got, want)
    ref = grads((w[0] * ref_logp_a + w[1] * ref_entropy + w[2] * ref_value).sum())
    for a, b in zip(fast, ref):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"obs": "pixels"}, "obs must be one of"),
        ({"players": 5}, "players must be 2..4"),
        ({"opp_random": 0.8, "opp_greedy": 0.5}, "at most 1"),
        ({"minibatch_size": 100}, "multiple of minibatch_size"),
        ({"gamma": 1.5}, "gamma must be in"),
    ],
)
def test_bad_config_values_are_named(change, words) -> None:
    with pytest.raises(ValueError, match=words):
        PPOFlatConfig(**{**TINY, **change}).check()


def test_cli_refuses_a_bad_flag_and_a_missing_checkpoint(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--total-steps", "lots"])
    assert "expected a count" in capsys.readouterr().err
    assert main(["--resume", "--run-dir", str(tmp_path / "none")]) == 2
    assert "--resume: no " in capsys.readouterr().err
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "config.json").write_text(json.dumps({"algo": "ppo_flat"}))
    assert main(["--resume", "--run-dir", str(tmp_path / "none")]) == 2
    assert "no checkpoint" in capsys.readouterr().err


def test_shelfie_train_runs_the_preset_and_resumes_it_further(tmp_path, capsys) -> None:
    from shelfie_env.cli import main as shelfie

    run_dir = tmp_path / "f"
    argv = ["train", "--config", "ppo_flat_2p", "--run-dir", str(run_dir)]
    for name, value in TINY.items():
        argv += [f"--{name.replace('_', '-')}", *map(str, value if isinstance(value, list) else [value])]
    assert shelfie(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "[train] --algo ppo_flat: masked PPO with a flat policy head on the batched engine, from random weights "
        "(chosen by --config ppo_flat_2p (its algo))"
    )
    assert out[1].startswith("[ppo_flat] flat masked PPO, 2 players, 1,024 learner decisions")
    saved = json.loads((run_dir / "config.json").read_text())
    assert saved["algo"] == "ppo_flat" and saved["obs"] == "features" and saved["num_envs"] == 16
    assert shelfie(["train", "--resume", "--run-dir", str(run_dir), "--total-steps", "2k"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(f"(chosen by the run in {run_dir})")
    assert json.loads(out[-3])["steps"] == 2048  # trained on from 1,024
    assert shelfie(["train", "--resume", "--run-dir", str(run_dir), "--seed", "3"]) == 2
    assert "can change only total_steps" in capsys.readouterr().err


def test_a_corrupt_checkpoint_is_named(tmp_path) -> None:
    bad = tmp_path / "latest.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a ppo_flat checkpoint"):
        Trainer.resume(bad)
