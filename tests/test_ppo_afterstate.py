"""PPO with the after-state policy: torch action values equal the numpy bot's, rollouts, GAE, a run."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.bots.learned.afterstate import AfterstateNet
from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.learned.value import LearnedContext
from shelfie_env.bots.planner.search import action_values as planner_action_values
from shelfie_env.game.engine import CIRCLE, CROSS, REROLL, Game
from shelfie_env.game.scoring import FULL

from .conftest import assert_plays_legally

torch = pytest.importorskip("torch")
at = pytest.importorskip("shelfie_env.train.ppo_afterstate.torch_net")
ro = pytest.importorskip("shelfie_env.train.ppo_afterstate.rollout")
pa = pytest.importorskip("shelfie_env.train.ppo_afterstate")


def _random_net(seed: int) -> at.AfterstatePolicyNet:
    torch.manual_seed(seed)
    net = at.AfterstatePolicyNet(2, [32, 32], beta=5.0)
    with torch.no_grad():  # the output layer starts at zero: give it weights so values differ
        net.values[-1].weight.normal_(0.0, 0.5)
    return net


def _torch_values(net, game: Game, circ0: int) -> dict[int, float]:
    """The trainer's action values of ``game`` (turn started with ``circ0`` circled by the mover)."""
    numpy_net = AfterstateNet.from_state(net.numpy_state(0.1), 2)
    start = game.clone()
    p = game.current
    start.circled[p] = circ0
    vals = numpy_net.values_of(game if game.phase == REROLL else start)
    v = torch.as_tensor(np.where(np.isnan(vals), at.NEG, vals), dtype=torch.float32)[None]
    legal = np.asarray(game.legal_mask(), bool)[None]
    empty = torch.zeros(0, dtype=torch.int64)
    reroll = torch.tensor([0]) if game.phase == REROLL else empty
    keep, final = ro.reroll_keys(np.array([game.dice]))
    if game.phase == CIRCLE:
        rows, acts, slots = ro.circle_pairs(
            np.array([game.counts]),
            np.array([game.circled[p] & ~circ0]),
            np.array([FULL & ~(game.circled[p] | game.crossed[p])]),
            np.array([game.circles]),
            legal,
        )
    elif game.phase == CROSS:
        rows, acts, slots = ro.cross_pairs(legal)
    else:
        rows = acts = slots = np.zeros(0, dtype=np.int64)
    q = at.action_values(
        v,
        at.keep_values(v),
        torch.tensor([0]),
        reroll,
        torch.as_tensor(keep),
        torch.as_tensor(final),
        torch.tensor([game.rolls_left == 2]),
        torch.as_tensor(rows),
        torch.as_tensor(acts),
        torch.as_tensor(slots),
    )[0]
    return {int(a): float(q[a]) for a in np.flatnonzero(legal[0])}


def test_torch_action_values_equal_the_planner_search_on_learned_values():
    net = _random_net(0)
    numpy_net = AfterstateNet.from_state(net.numpy_state(0.1), 2)
    rng = np.random.default_rng(1)
    checked = {REROLL: 0, CIRCLE: 0, CROSS: 0}
    for g in range(6):
        game = Game.new(2, rng=np.random.default_rng(g))
        ctx, circ0 = None, 0
        while not game.over:
            if game.phase == REROLL and game.rolls_left == 2:
                ctx = LearnedContext(game, numpy_net.values_of(game))
                circ0 = game.circled[game.current]
            want = planner_action_values(game, ctx=ctx)
            got = _torch_values(net, game, circ0)
            assert sorted(got) == sorted(want)
            for a in want:
                assert got[a] == pytest.approx(want[a], abs=1e-4), (a, game.to_dict())
            checked[game.phase] += 1
            game.step(int(rng.choice(list(want))))
    assert min(checked.values()) > 0


def test_rollout_records_every_learner_decision_and_rewards_each_seat_once():
    net = _random_net(2)
    roll = ro.play_rollout(net, 6, 2, opp_greedy=0.5, margin_coef=0.1, rng=np.random.default_rng(0))
    d = roll.decisions
    assert d == roll.stats["decisions"] and len(roll.action) == len(roll.logp) == d
    assert roll.legal[np.arange(d), roll.action].all()
    assert (roll.logp <= 0).all()
    learner_seats = 12 - int(roll.stats["games_vs_greedy"])
    assert (roll.next_dec < 0).sum() == learner_seats  # one last decision per learner seat and game
    ends = roll.next_dec < 0
    assert (roll.reward[~ends] == 0).all()
    assert (np.abs(roll.reward[ends]) <= 1.0 + 0.1 * 190 / 50).all()
    assert np.diff(roll.pair_dec).min() >= 0
    assert roll.cand_off[-1] == len(roll.feats) == len(roll.cand_slot)
    assert roll.cand_slot.max() < NUM_SETS + 5
    assert roll.turn.max() + 1 == len(roll.cand_off) - 1


def test_gae_on_a_hand_built_trajectory():
    roll = ro.Rollout(
        **{
            f: np.zeros(0)
            for f in ro.Rollout.__dataclass_fields__
            if f not in ("value", "reward", "next_dec", "turn", "stats")
        },
        value=np.array([0.5, 0.2, 0.1], np.float32),
        reward=np.array([0.0, 0.0, 1.0], np.float32),
        next_dec=np.array([1, 2, -1]),
        turn=np.zeros(3, np.int64),
        stats={},
    )
    adv, ret = ro.gae(roll, gamma=1.0, lam=0.5)
    a2 = 1.0 - 0.1
    a1 = 0.1 - 0.2 + 0.5 * a2
    a0 = 0.2 - 0.5 + 0.5 * a1
    assert adv.tolist() == pytest.approx([a0, a1, a2])
    assert ret.tolist() == pytest.approx([a0 + 0.5, a1 + 0.2, a2 + 0.1])
    adv, _ = ro.gae(roll, gamma=1.0, lam=1.0)
    assert adv.tolist() == pytest.approx([0.5, 0.8, 0.9])  # Monte Carlo: reward minus value


def test_the_preset_is_read_and_a_recipe_of_another_trainer_is_refused_with_its_algo():
    from shelfie_env.cli import build_parser
    from shelfie_env.train.cli import config_from_args

    def parse(*argv: str):
        return build_parser("train").parse_args(["train", *argv])

    cfg = config_from_args(parse("--config", "ppo_afterstate_2p", "--seed", "3"))
    assert isinstance(cfg, pa.PPOAfterstateConfig)
    assert cfg.seed == 3 and cfg.players == 2 and cfg.rollout_worker and cfg.total_steps == 3_000_000
    assert config_from_args(parse()) == pa.PPOAfterstateConfig()  # no flags: the default run
    with pytest.raises(ValueError, match="is a config of --algo td, but --algo ppo_afterstate was given"):
        config_from_args(parse("--algo", "ppo_afterstate", "--config", "td_2p"))
    with pytest.raises(
        ValueError, match="is a config of --algo maskable_ppo, but --algo ppo_afterstate was given"
    ):
        config_from_args(parse("--algo", "ppo_afterstate", "--config", "ppo_2p"))


def test_the_training_guide_shows_the_default_of_every_field():
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "training.md").read_text()
    after = guide.split("Every field of `PPOAfterstateConfig`", 1)[1]
    table = after[after.index("\n| field") :].split("\n\n", 1)[0]  # its table, not the next section's
    rows = {
        line.split("|")[1].strip(" `"): line.split("|")[2].strip()
        for line in table.splitlines()
        if line.startswith("| `")
    }
    defaults = pa.PPOAfterstateConfig()

    def bare(text: str) -> str:  # 250,000 and 250_000 read 250000; [128, 128] reads [128,128]
        return text.replace(",", "").replace(" ", "").replace("_", "")

    for f in dataclasses.fields(pa.PPOAfterstateConfig):
        value = getattr(defaults, f.name)
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        assert bare(rows[f.name]) == bare(shown), (f.name, rows[f.name])


def test_a_value_network_is_not_taken_for_a_policy(tmp_path):
    from shelfie_env.bots.learned.afterstate_policy import load_afterstate_policy
    from shelfie_env.bots.learned.card import CheckpointMismatchError
    from shelfie_env.bots.learned.value import shipped_td_model

    with pytest.raises(CheckpointMismatchError, match="not an after-state policy"):
        load_afterstate_policy(shipped_td_model(2))


def test_config_refuses_bad_values():
    with pytest.raises(ValueError, match="players"):
        pa.PPOAfterstateConfig(players=1)
    with pytest.raises(ValueError, match="opp_greedy"):
        pa.PPOAfterstateConfig(opp_greedy=1.0)
    with pytest.raises(ValueError, match="net_arch"):
        pa.PPOAfterstateConfig(net_arch=[0])
    with pytest.raises(ValueError, match="learning_rate"):
        pa.PPOAfterstateConfig(learning_rate=0.0)


def test_a_short_run_trains_evaluates_exports_and_plays(tmp_path, capsys):
    run = tmp_path / "run"
    args = [
        "--run-dir",
        str(run),
        "--total-steps",
        "300",
        "--games",
        "4",
        "--net-arch",
        "16",
        "16",
        "--eval-games",
        "4",
        "--turns-per-batch",
        "32",
        "--no-rollout-worker",
    ]
    assert pa.main(args) == 0
    out = capsys.readouterr().out
    assert "[eval] steps=" in out and f"ppo:path={run / 'run.npz'}" in out  # best.npz, named after the run
    assert bots.make("ppo", path=str(run / "run.npz")).card["name"] == "run"
    progress = [json.loads(line) for line in (run / "progress.jsonl").read_text().splitlines()]
    assert progress[-1]["steps"] >= 300
    bot = bots.make("ppo", path=str(run / "best.npz"))
    assert bot.card["teacher"] == "none" and bot.card["policy_head"] == "afterstate"
    assert_plays_legally(bot, 2)
    sampler = bots.make("ppo", path=str(run / "latest.npz"), deterministic=False, seed=0)
    assert_plays_legally(sampler, 2)
    assert pa.main(args) == 2  # the directory holds a run
    assert "already holds a run" in capsys.readouterr().err
    assert pa.main(["--run-dir", str(tmp_path / "x"), "--games", "0"]) == 2
    assert "games must be positive" in capsys.readouterr().err


@pytest.mark.parametrize("worker", [False, True])
def test_an_interrupted_run_resumes_exactly(tmp_path, worker):
    def config(run_dir):
        return pa.PPOAfterstateConfig(
            total_steps=700,
            games=4,
            net_arch=[16],
            eval_games=0,
            turns_per_batch=32,
            rollout_worker=worker,
            run_dir=str(run_dir),
        )

    cut = pa.PPOAfterstateTrainer(config(tmp_path / "cut"))
    cut.run_dir.mkdir(parents=True)
    cut.source = pa.RolloutSource(cut.cfg)
    try:
        for _ in range(2):  # two iterations, then the process "dies" with the next games under way
            cut.iterate(log=lambda s: None)
    finally:
        cut.source.close()
    assert (cut.pending is not None) == worker
    resumed = pa.PPOAfterstateTrainer(config(tmp_path / "cut"))
    resumed.run(resume=True, log=lambda s: None)
    straight = pa.PPOAfterstateTrainer(config(tmp_path / "straight"))
    straight.run(log=lambda s: None)
    assert resumed.steps == straight.steps >= 700
    a, b = np.load(tmp_path / "cut" / "latest.npz"), np.load(tmp_path / "straight" / "latest.npz")
    assert a.files == b.files
    for k in a.files:
        np.testing.assert_array_equal(a[k], b[k])


def test_the_shipped_model_plays_and_its_card_names_the_recipe_that_made_it():
    from shelfie_env.bots.learned.card import load_card, models_dir
    from shelfie_env.train.config import read_config

    path = models_dir() / "ppo_afterstate_2p.npz"
    card = load_card(path, num_players=2)
    assert card["teacher"] == "none" and card["policy_head"] == "afterstate" and card["bot"] == "ppo"
    assert card["preset"] == "ppo_afterstate_2p"
    assert card["train_command"] == "python -m shelfie_env.train.ppo_afterstate --config ppo_afterstate_2p"
    recipe = read_config("ppo_afterstate_2p")
    recipe.pop("algo")
    assert pa.PPOAfterstateConfig(**recipe) == pa.PPOAfterstateConfig(**card["config"])
    bot = bots.make("ppo", path=str(path))
    assert bot.beta > 0
    assert_plays_legally(bot, 5)


@pytest.mark.parametrize("wait", [False, True])
def test_closing_the_rollout_worker_leaves_no_thread_or_process_behind(wait):
    """Closed with its games under way (or just received), the worker is gone and no thread is left
    that the interpreter's exit would wait on."""
    import threading

    cfg = pa.PPOAfterstateConfig(games=2, net_arch=[8], eval_games=0, rollout_worker=True)
    source = pa.RolloutSource(cfg)
    trainer = pa.PPOAfterstateTrainer(cfg)
    source.start(*trainer._snapshot(False)[:2])
    assert source.result().decisions > 0  # the worker plays
    before = set(threading.enumerate())  # multiprocessing's own threads (its fd sharer) are up by now
    source.start(*trainer._snapshot(False)[:2])
    source.close(wait=wait)
    assert not source.process.is_alive()
    assert set(threading.enumerate()) <= before, [t.name for t in set(threading.enumerate()) - before]
