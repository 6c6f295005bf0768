"""The ablation options of ``scripts/bench_algos.py``: reward and reroll wrappers, run tags."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_algos", ROOT / "scripts" / "bench_algos.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def play_out(env, seed: int) -> tuple[float, list, dict]:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    phases, total, done = [], 0.0, False
    while not done:
        phases.append(env.get_wrapper_attr("game").phase_name)
        mask = env.get_wrapper_attr("action_masks")()
        obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += reward
    return total, phases, info


def test_the_protocol_has_no_variant_tag_and_a_change_is_named(bench):
    assert bench.variant(dict(bench.ABLATION)) == ""
    assert bench.variant({**bench.ABLATION, "ent_coef": 0.0}) == "ent_coef=0.0"
    assert (
        bench.variant({**bench.ABLATION, "net_arch": [64, 64], "reroll": "stop"})
        == "net_arch=64x64,reroll=stop"
    )


@pytest.mark.parametrize("rule", ["stop", "greedy"])
def test_fixed_rerolls_leave_the_learner_only_circles_and_crosses(bench, rule):
    env = bench.make_env("maskable_ppo", 0, 0, {**bench.ABLATION, "reroll": rule})()
    for seed in range(3):
        total, phases, info = play_out(env, seed)
        assert phases and set(phases) <= {"circle", "cross"}
        margin = info["scores"][info["seat"]] - info["scores"][1 - info["seat"]]
        assert total == pytest.approx(np.sign(margin) + 0.1 * margin / 50)


def test_the_score_reward_adds_up_to_the_final_own_score(bench):
    plain = bench.make_env("maskable_ppo", 0, 0)()
    dense = bench.make_env("maskable_ppo", 0, 0, {**bench.ABLATION, "score_reward": 0.02})()
    for seed in range(3):
        base, _, _ = play_out(plain, seed)
        total, _, info = play_out(dense, seed)
        assert total - base == pytest.approx(0.02 * info["scores"][info["seat"]])


def test_a_fixed_rerolls_bot_stops_in_the_reroll_phase(bench):
    from shelfie_env.game.engine import Game

    bot = bench.FixedRerollsBot(None, bench.reroll_rule("stop"))  # the policy only plays the other phases
    game = Game.new(2, rng=0)
    assert game.phase_name == "reroll" and bot.act_game(game) == 0


def test_training_opponents_and_evaluation_opponents_are_separate_options(bench):
    from shelfie_env.train import benchmark

    args = benchmark.parse_args(
        bench.build_parser(),
        ["--train-opponents", "random", "--opponents", "greedy", "random", "--eval-games", "0"],
        train_only=True,
    )
    assert args.train_opponents == "random" and args.opponents == ["greedy", "random"]
    assert args.eval_games == 0
    settings = {k: getattr(args, k) for k in bench.ABLATION}
    assert bench.variant(settings) == "train_opponents=random"
    assert bench.train_opponents(settings) == "random 1, greedy 0 per episode"


def test_a_variant_row_neither_replaces_nor_joins_the_protocol_row(bench, tmp_path):
    from shelfie_env.train import benchmark, benchmark_report

    def row(**extra):
        side = {"score_rate": 0.1, "ci95": [0.0, 0.2], "mean_reward": -0.8}
        g = {"raw": side, "corrected": side}
        return {
            "learner": "maskable_ppo",
            "seed": 0,
            "steps": 1000,
            "mode": "masked",
            "vs_greedy": g,
            **extra,
        }

    path = benchmark.add_rows(tmp_path / "r.json", [row()])
    benchmark.add_rows(path, [row(variant="ent_coef=0.0", eval={"deals": "test"})])
    rows = benchmark.load_results(path)["rows"]
    assert sorted(r.get("variant", "") for r in rows) == ["", "ent_coef=0.0"]
    groups, _ = benchmark_report.runs({"rows": [{**r, "eval": {"deals": "test"}} for r in rows]})
    assert set(groups) == {("maskable_ppo", 1000), ("maskable_ppo (ent_coef=0.0)", 1000)}
