"""The settings a benchmark run may change: reward and reroll wrappers, run tags, the options' checks."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.arena import aggregate as report
from shelfie_env.arena import results_file as results
from shelfie_env.benchmark import ablations, cli, tasks

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")


@pytest.fixture(scope="module")
def bench():
    return ablations


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
    env = bench.one_game_env("maskable_ppo", 0, 0, {**bench.ABLATION, "reroll": rule})
    for seed in range(3):
        total, phases, info = play_out(env, seed)
        assert phases and set(phases) <= {"circle", "cross"}
        margin = info["scores"][info["seat"]] - info["scores"][1 - info["seat"]]
        assert total == pytest.approx(np.sign(margin) + 0.1 * margin / 50)


def test_the_score_reward_adds_up_to_the_final_own_score(bench):
    plain = bench.one_game_env("maskable_ppo", 0, 0)
    dense = bench.one_game_env("maskable_ppo", 0, 0, {**bench.ABLATION, "score_reward": 0.02})
    for seed in range(3):
        base, _, _ = play_out(plain, seed)
        total, _, info = play_out(dense, seed)
        assert total - base == pytest.approx(0.02 * info["scores"][info["seat"]])


def test_a_fixed_rerolls_bot_stops_in_the_reroll_phase(bench):
    from shelfie_env.game.engine import Game

    bot = bench.FixedRerollsBot(None, bench.reroll_rule("stop"))  # the policy only plays the other phases
    game = Game.new(2, rng=0)
    assert game.phase_name == "reroll" and bot.act_game(game) == 0


def test_training_opponents_and_evaluation_opponents_are_separate_options():
    argv = ["--train-opponents", "random", "--opponents", "greedy", "random", "--eval-games", "0"]
    args = cli.build_parser().parse_args(argv)
    tasks.check_args(args._parser, args, argv, train_only=True)
    assert args.train_opponents == "random" and args.opponents == ["greedy", "random"]
    assert args.eval_games == 0
    settings = cli.settings_of("maskable_ppo", args)
    assert cli.tag_of("maskable_ppo", settings, {}) == "train_opponents=random"
    assert ablations.train_opponents(settings) == "random 1, greedy 0 per episode"


def test_a_learner_is_tagged_against_its_own_settings():
    args = cli.build_parser().parse_args(["--obs", "features"])
    assert cli.tag_of("maskable_ppo", cli.settings_of("maskable_ppo", args), {}) == "obs=features"
    assert cli.tag_of("ppo_flat", cli.settings_of("ppo_flat", args), {}) == ""  # its own observation
    plain = cli.build_parser().parse_args([])
    assert cli.tag_of("ppo_flat", cli.settings_of("ppo_flat", plain), {"stop_bias": 4.0}) == "stop_bias=4.0"
    old = cli.build_parser().parse_args([])
    old.reroll = "learner"  # the value older rows and cards record for ids
    assert cli.settings_of("maskable_ppo", old)["reroll"] == "ids"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--algos", "td", "--obs", "features"], "--obs does not apply to td"),
        (["--algos", "a2c", "--reroll", "keep"], "--reroll keep does not apply to a2c"),
        (["--algos", "ppo_flat", "--batch-size", "64"], "--batch-size does not apply to ppo_flat"),
        (["--algos", "maskable_ppo", "--flat", "stop_bias=4"], "--flat applies to ppo_flat alone"),
        (["--algos", "ppo_flat", "--flat", "stop_bias"], "--flat: expected FIELD=VALUE"),
        (["--algos", "ppo_flat", "--flat", "stop_bias=high"], "--flat: stop_bias: expected a float"),
        (["--algos", "td", "--resume"], "--resume: td cannot resume"),
        (
            ["--algos", "maskable_ppo", "--reroll", "stop", "--stop-after", "10k"],
            "maskable_ppo cannot resume",
        ),
    ],
)
def test_a_setting_a_learner_cannot_take_is_a_usage_error(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--bots", *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_variant_row_neither_replaces_nor_joins_the_protocol_row(tmp_path):
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

    path = results.add_rows(tmp_path / "r.json", [row()])
    results.add_rows(path, [row(variant="ent_coef=0.0", eval={"deals": "test"})])
    rows = results.load_results(path)["rows"]
    assert sorted(r.get("variant", "") for r in rows) == ["", "ent_coef=0.0"]
    groups, _ = report.runs({"rows": [{**r, "eval": {"deals": "test"}} for r in rows]})
    assert set(groups) == {("maskable_ppo", 1000), ("maskable_ppo (ent_coef=0.0)", 1000)}


def test_help_needs_no_training_library_and_a_learner_without_one_names_the_extra(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    hide = "import sys; sys.modules.update(torch=None, stable_baselines3=None, sb3_contrib=None); "
    run = "from shelfie_env.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": str(root)}

    def shelfie(*argv: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-c", hide + run, *argv]
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)

    helped = shelfie("bench", "--help")
    assert helped.returncode == 0 and "--resume" in helped.stdout and "report" in helped.stdout
    out = tmp_path / "r.json"
    done = shelfie("bench", "--steps", "2000", "--algos", "maskable_ppo", "--bots", "--out", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "shelfie bench: error: this needs the missing module 'torch' (pip install 'shelfie-env[train]')"
        in done.stderr
    )
