"""Training smoke run, model cards and checkpoint validation."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import shutil

import numpy as np
import pytest

from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card
from shelfie_env.game.engine import Game
from shelfie_env.train import cli as train_cli
from shelfie_env.train.checkpoint import load_model
from shelfie_env.train.config import field_docs
from shelfie_env.train.maskable_ppo import run as maskable
from shelfie_env.train.maskable_ppo.config import TrainConfig
from shelfie_env.train.maskable_ppo.selfplay import OpponentPool, SelfPlayEnv

TINY = [
    "--algo",
    "maskable_ppo",
    "--n-envs",
    "2",
    "--n-steps",
    "128",
    "--batch-size",
    "128",
    "--n-epochs",
    "1",
    "--net-arch",
    "32",
    "--eval-every",
    "256",
    "--eval-games",
    "4",
    "--save-every",
    "256",
    "--snapshot-every",
    "256",
    "--bc-games",
    "3",
    "--bc-epochs",
    "1",
    "--bc-dagger-rounds",
    "1",
    "--bc-dagger-games",
    "2",
    "--bc-dagger-epochs",
    "1",
]


def _args(*extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    return parser.parse_args([*TINY, *extra])


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run") / "r"
    export = run_dir.parent / "exported.zip"
    assert (
        train_cli.run(_args("--total-steps", "768", "--run-dir", str(run_dir), "--export", str(export))) == 0
    )
    return run_dir, export


def test_smoke_run_writes_loadable_checkpoint_with_card(smoke_run):
    run_dir, export = smoke_run
    card = load_card(run_dir / "latest.zip", num_players=2)
    assert card["env_id"] == "shelfie/Versus-v0" and card["steps"] >= 768
    assert card["config"]["total_steps"] == 768 and card["wall_time_s"] > 0
    model, _ = load_model(run_dir / "latest.zip")
    assert model.num_timesteps == card["steps"]
    evals = [json.loads(x) for x in (run_dir / "eval.jsonl").read_text().splitlines()]
    assert len(evals) >= 3 and evals[0]["greedy"]["games"] == 4
    best = load_card(run_dir / "best.zip")
    assert best["evaluation"]["periodic"]["opponent"] == "greedy"
    assert load_card(export)["steps"] == best["steps"]
    assert (run_dir / "tb").is_dir() and (run_dir / "pool.npz").is_file()


def test_resume_continues_the_step_count(smoke_run, tmp_path):
    run_dir = tmp_path / "copy"
    shutil.copytree(smoke_run[0], run_dir)
    assert (
        train_cli.run(
            _args("--resume", "--run-dir", str(run_dir), "--total-steps", "1024", "--learning-rate", "0.0007")
        )
        == 0
    )
    card = load_card(run_dir / "latest.zip")
    assert card["steps"] >= 1024 and card["config"]["learning_rate"] == 0.0007
    model, _ = load_model(run_dir / "latest.zip")
    assert model.learning_rate == 0.0007
    # starting afresh over an existing run is refused
    assert train_cli.run(_args("--run-dir", str(run_dir), "--total-steps", "256")) == 2


def test_mismatched_card_is_refused(smoke_run, tmp_path):
    src = smoke_run[0] / "latest"
    for field, value, message in (
        ("obs_version", 999, "obs_version"),
        ("observation_size", 1, "observation_size"),
        ("env_id", "shelfie/Other-v9", "env_id"),
    ):
        shutil.copyfile(src.with_suffix(".zip"), tmp_path / "m.zip")
        card = json.loads(src.with_suffix(".json").read_text())
        card[field] = value
        (tmp_path / "m.json").write_text(json.dumps(card))
        with pytest.raises(CheckpointMismatchError, match=message):
            load_model(tmp_path / "m.zip")
    shutil.copyfile(src.with_suffix(".json"), tmp_path / "m.json")
    with pytest.raises(CheckpointMismatchError, match="trained for 2 player"):
        load_model(tmp_path / "m.zip", num_players=3)
    (tmp_path / "m.json").unlink()
    with pytest.raises(CheckpointMismatchError, match="no model card"):
        load_model(tmp_path / "m.zip")


def test_config_validation_and_docs():
    docs = field_docs(TrainConfig)
    import dataclasses

    assert {f.name for f in dataclasses.fields(TrainConfig)} == set(docs)
    with pytest.raises(ValueError, match="players"):
        TrainConfig(players=5)
    with pytest.raises(ValueError, match="opp_random"):
        TrainConfig(opp_random=0.8, opp_greedy=0.5)
    with pytest.raises(ValueError, match="policy_head must be one of flat, expect"):
        TrainConfig(policy_head="keep")
    with pytest.raises(ValueError, match="unknown config field"):
        TrainConfig.from_dict({"nope": 1})
    assert TrainConfig.from_dict(TrainConfig().to_dict()) == TrainConfig()


def test_selfplay_env_rewards_from_the_learners_seat():
    pool = OpponentPool(opp_random=1.0, opp_greedy=0.0, seed=0)
    env = SelfPlayEnv(2, pool, margin_coef=0.0, seed=3)
    seats = set()
    for ep in range(6):
        env.reset(seed=ep)
        seats.add(env.seat)
        assert env.game.current == env.seat
        done, total = False, 0.0
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _, r, done, _, info = env.step(int(legal[0]))
            total += r
            if not done:
                assert env.game.current == env.seat
        own, other = info["scores"][env.seat], info["scores"][1 - env.seat]
        assert total == (own > other) - (own < other)
        assert info["win"] == float(own > other) and info["opponents"] == ["random"]
    assert seats == {0, 1}


def test_solo_env_reward_sums_to_scaled_score():
    env = SelfPlayEnv(1, None, solo_reward_scale=0.5, seed=1)
    env.reset(seed=1)
    total, done = 0.0, False
    while not done:
        _, r, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[-1]))
        total += r
    assert total == pytest.approx(0.5 * info["scores"][0])
    assert isinstance(env.game, Game)


def test_warm_start_records_metrics(smoke_run):
    bc = json.loads((smoke_run[0] / "bc.json").read_text())
    assert bc["decisions"] > 50 and 0.0 <= bc["bc_val_accuracy"] <= 1.0
    assert (smoke_run[0].parent / "teacher").is_dir()


def test_teacher_returns_are_discounted_outcomes():
    from shelfie_env.train.maskable_ppo.bc import record_games

    data = record_games(2, 2, "greedy", seed=4, gamma=0.5, margin_coef=0.0, solo_reward_scale=0.0)
    n = len(data["actions"])
    assert data["obs"].shape == (n, 186) and data["masks"].shape == (n, 120)
    assert all(data["masks"][i, a] for i, a in enumerate(data["actions"]))
    r = np.abs(data["returns"])
    assert r.max() == 1.0 and (r > 0).all()  # last decision of each player: +-1, earlier ones discounted


def test_dagger_records_only_the_learners_positions_with_teacher_labels():
    from shelfie_env.bots import make
    from shelfie_env.train.maskable_ppo.bc import record_games

    full = record_games(2, 2, "greedy", seed=8, gamma=0.9, margin_coef=0.0, solo_reward_scale=0.0)
    dag = record_games(
        2,
        2,
        "greedy",
        seed=8,
        gamma=0.9,
        margin_coef=0.0,
        solo_reward_scale=0.0,
        learner=make("random", seed=0),
    )
    assert 0 < len(dag["actions"]) < len(full["actions"])
    assert all(dag["masks"][i, a] for i, a in enumerate(dag["actions"]))
    # the recorded player is the one on turn: its on-turn flag is the first relative seat
    on_turn = dag["obs"][:, 50 * 2 + 60]
    assert (on_turn == 1.0).all()


def test_batched_training_run_uses_the_pool_and_resumes(tmp_path):
    run_dir = tmp_path / "b"
    args = ["--batched", "--n-envs", "8", "--n-steps", "64", "--bc-games", "0", "--total-steps", "1024"]
    assert train_cli.run(_args(*args, "--run-dir", str(run_dir))) == 0
    card = load_card(run_dir / "latest.zip", num_players=2)
    assert card["config"]["batched"] is True and card["steps"] >= 1024
    with np.load(run_dir / "pool.npz") as data:
        assert len(data["tags"]) >= 3  # the initial network and snapshots every 256 steps
    assert train_cli.run(_args(*args[:-1], "2048", "--resume", "--run-dir", str(run_dir))) == 0
    assert load_card(run_dir / "latest.zip")["steps"] >= 2048


def test_batched_selfplay_rewards_match_the_scalar_shaping():
    from shelfie_env.train.maskable_ppo.selfplay import batched_selfplay_env

    pool = OpponentPool(opp_random=1.0, opp_greedy=0.0, seed=0)
    venv = batched_selfplay_env(2, 16, pool, margin_coef=0.1, solo_reward_scale=0.02, seed=4)
    venv.reset()
    rng = np.random.default_rng(0)
    returns = np.zeros(16)
    finished = 0
    for _ in range(400):
        masks = np.stack(venv.env_method("action_masks"))
        acts = (rng.random(masks.shape) * masks).argmax(axis=1)
        venv.step_async(acts)
        _, rewards, dones, infos = venv.step_wait()
        returns += rewards
        for i in np.flatnonzero(dones):
            info = infos[i]
            own = info["scores"][info["seat"]]
            other = info["scores"][1 - info["seat"]]
            rank = float(np.sign(own - other))
            assert rewards[i] == pytest.approx(rank + 0.1 * (own - other) / 50, abs=1e-6)
            assert info["win"] == float(own > other) == info["episode"]["win"]
            assert info["episode"]["r"] == pytest.approx(returns[i], abs=1e-5)
            returns[i] = 0.0
            finished += 1
    assert finished > 10


def test_planner_teacher_records_its_action_values():
    from shelfie_env.bots.planner.search import ranked_actions
    from shelfie_env.train.maskable_ppo.bc import record_games

    data = record_games(2, 1, "planner", seed=3, gamma=0.9, margin_coef=0.0, solo_reward_scale=0.0)
    values, masks, acts = data["values"], data["masks"], data["actions"]
    assert values.shape == masks.shape and len(acts) > 10
    assert (values[~masks] == 0).all()
    for v, m, a in zip(values, masks, acts):
        legal = np.flatnonzero(m)
        # the recorded label is the planner's best action under the recorded values
        assert ranked_actions({int(i): float(v[i]) for i in legal})[0] == a
    # greedy reports no values: no "values" key
    assert "values" not in record_games(2, 1, "greedy", 3, 0.9, 0.0, 0.0)


def test_soft_targets_are_a_softmax_over_the_legal_actions():
    from shelfie_env.train.maskable_ppo.bc import soft_targets

    values = np.array([[1.0, 0.5, 9.0, 0.0], [0.0, 0.0, 0.0, 2.0]], np.float32)
    masks = np.array([[True, True, False, True], [False, True, True, False]])
    p = soft_targets(values, masks, tau=0.5)
    assert np.allclose(p.sum(axis=1), 1.0) and (p[~masks] == 0).all()
    assert p[0, 0] > p[0, 1] > p[0, 3] > 0
    assert np.isclose(p[0, 0] / p[0, 1], np.exp(1.0))  # a gap of tau is a factor e
    assert np.allclose(p[1, 1:3], 0.5)
    sharp = soft_targets(values, masks, tau=1e-3)
    assert np.isclose(sharp[0, 0], 1.0)
    with pytest.raises(ValueError, match="tau"):
        soft_targets(values, masks, tau=0.0)


def test_soft_cloning_fits_the_teacher_and_needs_values():
    from sb3_contrib import MaskablePPO

    from shelfie_env.train.maskable_ppo.bc import clone, record_games
    from shelfie_env.train.maskable_ppo.selfplay import SelfPlayEnv

    data = record_games(2, 3, "planner", seed=5, gamma=0.9, margin_coef=0.0, solo_reward_scale=0.0)
    model = MaskablePPO("MlpPolicy", SelfPlayEnv(players=2), policy_kwargs={"net_arch": [64]}, seed=0)
    first = clone(model, data, epochs=1, tau=0.05, seed=0, log=lambda *_: None)
    last = clone(model, data, epochs=30, lr=3e-3, tau=0.05, seed=0, log=lambda *_: None)
    assert last["bc_val_cross_entropy"] < first["bc_val_cross_entropy"]
    assert last["bc_val_regret"] >= 0.0 and 0.0 <= last["bc_val_top_value"] <= 1.0
    without = {k: v for k, v in data.items() if k != "values"}
    with pytest.raises(ValueError, match="action values"):
        clone(model, without, epochs=1, tau=0.05, log=lambda *_: None)


def test_soft_targets_with_a_teacher_without_values_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="bc_soft_tau"):
        train_cli.run(_args("--total-steps", "256", "--run-dir", str(tmp_path / "r"), "--bc-soft-tau", "0.1"))
    with pytest.raises(ValueError, match="bc_soft_tau"):
        TrainConfig(bc_soft_tau=-1.0)


def test_the_cards_train_command_reproduces_the_config():
    cfg = TrainConfig(
        batched=True, net_arch=[64, 32], policy_head="expect", bc_soft_tau=0.05, run_dir="runs/x"
    )
    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    words = shlex.split(maskable.train_command(cfg))
    assert words[:2] == ["shelfie", "train"] and "--batched" in words
    assert train_cli.config_from_args(parser.parse_args(words[2:])) == cfg
    other = dataclasses.replace(cfg, init_from="runs/my run/distilled.zip")
    words = shlex.split(maskable.train_command(other))
    assert train_cli.config_from_args(parser.parse_args(words[2:])) == other


def test_a_checkpoint_saved_without_optimiser_state_plays_the_same(tmp_path):
    import torch

    from shelfie_env.bots.learned.card import make_card
    from shelfie_env.train.checkpoint import save_model

    from .conftest import tiny_ppo

    model = tiny_ppo("MlpPolicy")
    model.learn(128)  # the optimiser now holds moments
    full = save_model(model, tmp_path / "full.zip", make_card(2))
    slim = save_model(model, tmp_path / "slim.zip", make_card(2), optimizer_state=False)
    assert slim.stat().st_size < full.stat().st_size
    assert model.policy.optimizer.state  # the live model keeps its optimiser
    loaded, _ = load_model(slim, num_players=2)
    want = model.policy.state_dict()
    assert all(torch.equal(v, want[k]) for k, v in loaded.policy.state_dict().items())
    assert not loaded.policy.optimizer.state


def test_teacher_cache_name_changes_with_the_teachers_weights(tmp_path):
    """Cached teacher data is keyed on the planner's weights, so new defaults never reuse old data."""
    from shelfie_env.bots import make
    from shelfie_env.observation.vector import OBS_VERSION

    cfg = TrainConfig(players=2, bc_teacher="planner", policy_head="expect")
    run = tmp_path / "run"
    path = maskable.teacher_cache_path

    same = path(cfg, run, make("planner"), valued=True, sets=True)
    assert same == path(cfg, run, make("planner"), valued=True, sets=True)
    assert same.parent == tmp_path / "teacher"
    other = path(cfg, run, make("planner", threat=0.5), valued=True, sets=True)
    assert other != same and other.name.startswith("planner_w")
    greedy_cfg = dataclasses.replace(cfg, bc_teacher="greedy")
    greedy = path(greedy_cfg, run, make("greedy"), valued=False, sets=False)
    assert greedy.name.startswith("greedy_2p_")  # no parameters, no fingerprint
    assert greedy.name.endswith(f"_obs{OBS_VERSION}.npz")


def test_teacher_spec_sets_the_teachers_weights(tmp_path):
    """``bc_teacher`` takes an arena bot spec: its settings reach the teacher and the cache name."""
    from shelfie_env.bots import make
    from shelfie_env.bots.spec import build_bot

    cfg = TrainConfig(players=2, bc_teacher="planner:threat=0.4", policy_head="expect")
    teacher = build_bot(cfg.bc_teacher)
    assert teacher.weights.threat == 0.4
    run = tmp_path / "run"
    spec_path = maskable.teacher_cache_path(cfg, run, teacher, valued=True, sets=True)
    plain = dataclasses.replace(cfg, bc_teacher="planner")
    # the same name as the bot built with those weights directly; no ':' in the file name
    assert spec_path == maskable.teacher_cache_path(
        plain, run, make("planner", threat=0.4), valued=True, sets=True
    )
    assert ":" not in spec_path.name and spec_path.name.startswith("planner_w")
    assert spec_path != maskable.teacher_cache_path(plain, run, make("planner"), valued=True, sets=True)
    # a bot without weights: the spec's settings are the fingerprint
    ppo_a = dataclasses.replace(cfg, bc_teacher="ppo:path=a.zip")
    ppo_b = dataclasses.replace(cfg, bc_teacher="ppo:path=b.zip")
    bare = object()  # stands in for the built bot (no weights attribute)
    a_path = maskable.teacher_cache_path(ppo_a, run, bare, valued=False, sets=False)
    assert a_path.name.startswith("ppo_w") and ":" not in a_path.name
    assert a_path != maskable.teacher_cache_path(ppo_b, run, bare, valued=False, sets=False)
    with pytest.raises(ValueError, match="bc_teacher: bot spec 'planner:threat': expected key=value"):
        TrainConfig(players=2, bc_teacher="planner:threat")
    with pytest.raises(ValueError, match="bc_teacher: bot spec ':x' has no name"):
        TrainConfig(players=2, bc_teacher=":x")
    with pytest.raises(ValueError, match="bc_teacher: unknown bot 'plannr'; available: .*greedy, .*planner"):
        TrainConfig(players=2, bc_teacher="plannr")


def test_record_games_plays_a_teacher_spec():
    """The teacher data of a spec is the configured bot's: its action values follow its weights."""
    from shelfie_env.train.maskable_ppo.bc import record_games

    kw = dict(gamma=0.995, margin_coef=0.1, solo_reward_scale=0.02)
    a = record_games(2, 1, "planner:threat=0.0", 5, **kw)
    b = record_games(2, 1, "planner", 5, **kw)
    assert a["values"].shape[1] == 120
    assert not np.array_equal(a["values"], b["values"])
    with pytest.raises(ValueError, match="planner has no option 'thret'"):
        record_games(2, 1, "planner:thret=1", 5, **kw)


def test_each_shipped_model_names_the_preset_that_reproduces_its_config():
    from shelfie_env.bots.learned.bot import SHIPPED, shipped_model
    from shelfie_env.train.config import preset_names, read_config

    assert set(SHIPPED.values()) <= set(preset_names())
    for players, name in SHIPPED.items():
        card = load_card(shipped_model(players), num_players=players)
        assert card["preset"] == name and card["train_command"] == f"shelfie train --config {name}"
        assert TrainConfig.from_dict(read_config(name)).to_dict() == card["config"]


def test_config_files_and_bad_presets(tmp_path):
    from shelfie_env.train.config import read_config

    (tmp_path / "r.toml").write_text("players = 1\ntotal_steps = 5000\n")
    (tmp_path / "r.json").write_text('{"players": 1}')
    assert read_config(tmp_path / "r.toml") == {"players": 1, "total_steps": 5000}
    assert read_config(str(tmp_path / "r.json")) == {"players": 1}
    with pytest.raises(FileNotFoundError, match="not a preset.*ppo_2p"):
        read_config("ppo_9p")
    (tmp_path / "bad.toml").write_text("players = = 2\n")
    with pytest.raises(ValueError, match="cannot be parsed"):
        read_config(tmp_path / "bad.toml")
    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    cfg = train_cli.config_from_args(parser.parse_args(["--config", "ppo_solo", "--total-steps", "10"]))
    assert cfg.players == 1 and cfg.total_steps == 10 and cfg.export_from == "latest"
    with pytest.raises(ValueError, match="unknown config field"):
        (tmp_path / "typo.toml").write_text("player = 2\n")
        train_cli.config_from_args(parser.parse_args(["--config", str(tmp_path / "typo.toml")]))


def test_the_selftaught_recipe_reads_no_teacher_data(tmp_path, monkeypatch):
    """``selftaught_2p`` starts from random weights: no teacher games, no cache, card teacher none."""
    from shelfie_env.train.config import read_config
    from shelfie_env.train.maskable_ppo import bc

    cfg = TrainConfig.from_dict(read_config("selftaught_2p"))
    assert cfg.bc_games == 0 and not cfg.init_from and cfg.policy_head == "expect"

    def no_teacher(*args, **kwargs):
        raise AssertionError("the self-taught recipe recorded teacher games")

    monkeypatch.setattr(bc, "record_games", no_teacher)
    monkeypatch.setattr(maskable, "warm_start", no_teacher)
    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    small = [
        "--n-envs",
        "8",
        "--n-steps",
        "32",
        "--batch-size",
        "64",
        "--net-arch",
        "32",
        "--total-steps",
        "256",
    ]
    small += ["--eval-every", "256", "--eval-games", "2", "--run-dir", str(tmp_path / "runs" / "s")]
    assert train_cli.run(parser.parse_args(["--config", "selftaught_2p", *small])) == 0
    card = load_card(tmp_path / "runs" / "s" / "latest.zip", num_players=2)
    assert card["teacher"] == "none" and card["preset"] == "selftaught_2p"
    assert not (tmp_path / "runs" / "teacher").exists() and not (tmp_path / "runs" / "s" / "bc.json").exists()


def test_the_training_guide_documents_every_config_field():
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "training.md").read_text()
    for f in dataclasses.fields(TrainConfig):
        default = getattr(TrainConfig(), f.name)
        shown = str(default).lower() if isinstance(default, bool) else str(default)
        assert f"| `{f.name}` |" in guide, f.name
        row = next(line for line in guide.splitlines() if line.startswith(f"| `{f.name}` |"))
        assert shown.replace(" ", "") in row.replace(" ", "").replace("_", ""), (f.name, row)
