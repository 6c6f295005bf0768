"""What ``shelfie train`` and ``shelfie train-td`` say: algorithms, presets, config errors, header and end
lines, Ctrl-C."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import typing
from pathlib import Path

import pytest

from shelfie_env import bots
from shelfie_env.bots.learned.card import load_card, models_dir
from shelfie_env.cli import build_parser, main
from shelfie_env.rllib.train import RLlibConfig
from shelfie_env.train.cli import LEARNERS, choose_algo
from shelfie_env.train.config import preset_names, read_config
from shelfie_env.train.fields import describe_type
from shelfie_env.train.maskable_ppo.config import TrainConfig
from shelfie_env.train.maskable_ppo.run import planned_steps
from shelfie_env.train.ppo_afterstate.config import PPOAfterstateConfig
from shelfie_env.train.td import TDConfig

ROOT = Path(__file__).resolve().parents[1]
TINY_PPO = (
    "--algo maskable_ppo --n-envs 2 --n-steps 128 --batch-size 128 --n-epochs 1 --net-arch 32 --eval-every 256 --eval-games 4 "
    "--save-every 256 --snapshot-every 256 --bc-games 3 --bc-epochs 1 --bc-dagger-rounds 0"
).split()
TINY_AS = "--games 4 --net-arch 16 --eval-games 4 --turns-per-batch 32".split()
TINY_TD = "--games 4 --eval-every 1 --eval-games 4 --net-arch 16 --eval-opponents greedy".split()


@pytest.fixture(autouse=True)
def shelfie_on_path(monkeypatch):
    """This installation's ``shelfie`` on the ``PATH``, so printed commands name it ``shelfie``."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))


def _help_of(command: str) -> str:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # type: ignore[attr-defined]
    return " ".join(sub.format_help().split())


# ------------------------------------------------------------------ presets
def test_every_preset_names_its_algorithm_and_shelfie_train_lists_them_all():
    text = _help_of("train")
    assert f"a preset ({', '.join(n for a in LEARNERS for n in preset_names(a))})" in text
    assert sorted(n for a in LEARNERS for n in preset_names(a)) == preset_names()
    assert "ppo_flat_2p" in preset_names("ppo_flat") and "td_2p" in preset_names("td")
    for algo, learner in LEARNERS.items():
        for name in preset_names(algo):
            data = read_config(name)
            assert data.pop("algo") == algo
            learner.config(**data)  # every field fits its config


def test_the_flat_ppo_preset_is_the_shipped_models_first_ten_million_decisions():
    data = read_config("ppo_flat_2p")
    assert data == {
        "algo": "ppo_flat", "players": 2, "obs": "features", "reroll": "keep", "stop_bias": 2.8,
        "score_reward": 0.02, "seed": 1, "eval_every": 1_000_000, "eval_games": 200, "total_steps": 10_000_000,
    }
    card = load_card(models_dir() / "ppo_flat_2p.npz")
    for key, value in data.items():
        if key not in ("algo", "total_steps"):
            assert card["config"][key] == value, key


def test_train_td_refuses_a_preset_of_another_algorithm_by_name(capsys):
    assert main(["train-td", "--config", "ppo_2p"]) == 2
    err = capsys.readouterr().err
    assert "shelfie train-td: error: --config ppo_2p is a config of --algo maskable_ppo" in err, err


def test_an_unknown_config_lists_the_presets(capsys):
    assert main(["train-td", "--config", "nope"]) == 2
    assert f"not a preset (presets: {', '.join(preset_names())})" in capsys.readouterr().err


# -------------------------------------------------------------- field types
def _bad_value(expected: typing.Any) -> typing.Any:
    if expected is bool:
        return "yes"
    if expected is str or str in typing.get_args(expected):
        return 7
    return "many"


def _config_cases():
    for cls in (TrainConfig, PPOAfterstateConfig, TDConfig, RLlibConfig):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            yield pytest.param(cls, f.name, hints[f.name], id=f"{cls.__name__}.{f.name}")


@pytest.mark.parametrize("cls, name, expected", list(_config_cases()))
def test_a_wrongly_typed_field_names_the_field_the_value_and_the_type(cls, name, expected):
    value = _bad_value(expected)
    with pytest.raises(ValueError) as info:
        cls(**{name: value})
    message = str(info.value)
    assert message.startswith(f"{name} must be {describe_type(expected)}, got {value!r}"), message


@pytest.mark.parametrize("command", ["train", "train-td"])
def test_a_wrongly_typed_value_in_a_config_file_is_reported_not_raised(command, tmp_path, capsys):
    path = tmp_path / "bad.toml"
    field = "total_steps" if command == "train" else "iterations"
    path.write_text(f'{field} = "many"\n' + ('algo = "td"\n' if command == "train-td" else ""))
    assert main([command, "--config", str(path), "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"--config {path}: {field} must be an integer, got 'many' (str)" in err
    assert not (tmp_path / "r").exists()


def test_an_integer_for_a_float_field_is_taken_as_a_float():
    assert TrainConfig(learning_rate=1).learning_rate == 1.0
    assert isinstance(TDConfig(lam=1).lam, float)


# ----------------------------------------------------------- argument errors
@pytest.mark.parametrize(
    "argv, words",
    [
        (["train", "--total-steps", "-5"], "--total-steps must be positive, got -5"),
        (["train", "--learning-rate", "-1"], "--learning-rate must be positive"),
        (["train", "--seed", "-1"], "--seed must be >= 0"),
        (["train", "--gamma", "2"], "--gamma must be in [0, 1], got 2.0"),
        (["train", "--games", "0"], "--games must be positive"),
        (["train", "--players", "1"], "--players must be 2..4, got 1 (a solo policy: --algo maskable_ppo)"),
        (
            ["train", "--algo", "maskable_ppo", "--total-steps", "-5"],
            "--total-steps must be positive, got -5",
        ),
        (["train", "--algo", "maskable_ppo", "--learning-rate", "-1"], "--learning-rate must be >= 0"),
        (["train", "--algo", "maskable_ppo", "--seed", "-1"], "--seed must be >= 0"),
        (["train", "--algo", "maskable_ppo", "--gamma", "2"], "--gamma must be in (0, 1]"),
        (["train", "--algo", "maskable_ppo", "--n-envs", "0"], "--n-envs must be positive"),
        (
            ["train", "--config", "ppo_2p", "--bc-teacher", "planner:threat=x"],
            "--bc-teacher: bot spec 'planner:threat=x'",
        ),
        (["train-td", "--iterations", "-1"], "--iterations must be positive"),
        (["train-td", "--seed", "-2"], "--seed must be >= 0"),
        (["train-td", "--learning-rate", "0"], "--learning-rate must be positive"),
        (["train-td", "--eval-opponents", "foo"], "--eval-opponents: unknown bot(s) foo"),
        (["train-td", "--eval-games", "0"], "--eval-games must be positive when eval_every is"),
        (["train-td", "--net-arch", "0"], "--net-arch needs positive layer sizes"),
        (["train", "--backend", "rllib", "--num-env-runners", "-1"], "--num-env-runners must be >= 0"),
        (["train", "--backend", "rllib", "--n-envs", "0"], "--n-envs must be positive, got 0"),
        (["train", "--backend", "rllib", "--n-epochs", "0"], "--n-epochs must be positive, got 0"),
    ],
)
def test_a_bad_training_argument_is_named(argv, words, tmp_path, capsys):
    assert main([*argv, "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["train", "--total-steps", "x"], ["train-td", "--lam", "x"]])
def test_a_non_numeric_argument_is_named_by_argparse(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert f"argument {argv[1]}: " in capsys.readouterr().err


# ------------------------------------------------------- header and end lines
def test_the_budget_rounds_up_to_whole_rollouts():
    cfg = TrainConfig(total_steps=20_000, n_envs=64, n_steps=256)
    assert planned_steps(cfg) == 32_768
    assert planned_steps(TrainConfig(total_steps=32_768)) == 32_768
    assert planned_steps(cfg, done=16_384 + 10) == 16_384 + 10 + 16_384
    assert planned_steps(cfg, done=40_000) == 40_000
    assert "rounded up to whole rollouts" in _help_of("train")


def _play_command_works(line: str, bot: str, model: Path) -> None:
    argv = shlex.split(line.removeprefix("play it: "))
    assert argv[0] == "shelfie"
    args = build_parser(argv[1]).parse_args(argv[1:])
    spec = args.bot if argv[1] == "play" else args.bots[0]
    assert spec == f"{bot}:path={model}"
    name, _, path = spec.partition(":path=")
    assert bots.make(name, path=path).card  # the named file is a model its bot plays


def test_train_prints_a_header_and_ends_with_the_model_and_the_command_that_plays_it(tmp_path, capsys):
    run_dir, export = tmp_path / "r", tmp_path / "mine.npz"
    argv = ["train", *TINY_PPO, "--total-steps", "300", "--run-dir", str(run_dir), "--export", str(export)]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[train] --algo maskable_ppo: sb3-contrib's MaskablePPO, warm-started by behaviour cloning of a teacher (chosen by --algo maskable_ppo)"
    out = out[1:]
    assert out[0].startswith("[train] 2 players, 300 PPO steps (rounded up to 512: 2 whole rollouts of 256)")
    assert out[0].endswith(f"-> {run_dir}")
    assert json.loads((run_dir / "latest.json").read_text())["steps"] == 512
    assert out[-2].startswith(f"[train] done: 512 steps in {run_dir}; model {export} (best.zip")
    _play_command_works(out[-1], "ppo", export)


def test_train_td_prints_a_header_and_ends_with_the_model_and_the_command_that_plays_it(tmp_path, capsys):
    run_dir = tmp_path / "t"
    assert main(["train-td", *TINY_TD, "--iterations", "1", "--run-dir", str(run_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out.pop(0).startswith("[train] --algo td: TD(lambda) self-play")
    assert out[0].startswith("[td] TD(lambda) self-play, 2 players, 1 iterations x 4 games")
    assert out[0].endswith(f"-> {run_dir}")
    model = run_dir / "t.npz"  # latest.npz, named after the run
    assert out[-2].startswith(f"[td] done: 1 iterations (4 games) in {run_dir}; model {model} (latest.npz: ")
    _play_command_works(out[-1], "td", model)


def test_a_solo_model_is_scored_by_the_arena():
    from shelfie_env.train.messages import play_command

    line = play_command("ppo", Path("runs/s/best.zip"), 1)
    assert line == "shelfie arena ppo:path=runs/s/best.zip --players 1 --games 200"
    assert (
        play_command("td", Path("a b/latest.npz"), 3)
        == "shelfie play --players 3 --bot 'td:path=a b/latest.npz'"
    )


def test_a_printed_command_names_the_program_as_it_runs_from_here(monkeypatch, tmp_path):
    from shelfie_env.train.messages import play_command, program, resume_command

    script = Path(sys.executable).with_name("shelfie")
    assert script.is_file()
    monkeypatch.setattr(sys, "argv", ["-c"])
    assert program() == "shelfie"  # this installation's shelfie is on the PATH
    monkeypatch.setenv("PATH", str(tmp_path))  # not on the PATH: its path, from where the user is
    monkeypatch.chdir(script.parents[2])
    local = str(script.relative_to(script.parents[2]))
    assert program() == local
    assert play_command("ppo", Path("m.npz"), 2) == f"{local} play --bot ppo:path=m.npz"
    assert resume_command("train", "runs/x") == f"{local} train --resume --run-dir runs/x"
    monkeypatch.chdir(tmp_path)
    assert program() == str(script.absolute())
    other = tmp_path / "shelfie"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    assert program() == str(script.absolute())  # a shelfie on the PATH that is another program
    monkeypatch.setattr(sys, "argv", [str(other)])
    assert program() == "shelfie"  # the command the user typed is the one on the PATH


# -------------------------------------------------------------------- Ctrl-C
def _own_group() -> None:
    """In the child: a process group of its own, which the test signals as Ctrl-C would, with Ctrl-C
    handled as in a terminal even when the tests run as a background job (which ignores SIGINT)."""
    os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(argv: list[str], ready: str, cwd: Path) -> tuple[int, str]:
    code = f"import sys; from shelfie_env.cli import main; sys.exit(main({argv!r}))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_own_group,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 240
    for line in proc.stdout:
        if ready in line or time.monotonic() > deadline:
            break
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: to every process of the command
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_in_train_td_prints_the_command_that_resumes_it(tmp_path, capsys, workers):
    run_dir = tmp_path / "t"
    argv = [
        "train-td",
        *TINY_TD,
        "--eval-every",
        "0",
        "--iterations",
        "100000",
        "--run-dir",
        str(run_dir),
        "--workers",
        workers,
    ]
    rc, err = _interrupt(argv, "[td] iteration 2:", tmp_path)
    assert rc == 130, err
    assert "Traceback" not in err
    resume = err.strip().splitlines()[-1].strip()
    assert resume == f"shelfie train --resume --run-dir {run_dir}"
    found = re.search(r"the last checkpoint is after iteration (\d+) of 100000", err)
    assert found, err
    done = int(found.group(1))
    assert done >= 1
    # the printed command continues the run (here to one more iteration)
    assert main([*shlex.split(resume)[1:], "--iterations", str(done + 1)]) == 0
    assert f"[td] resumed {run_dir} at iteration {done}" in capsys.readouterr().out


def test_ctrl_c_in_train_prints_the_command_that_resumes_it(tmp_path):
    run_dir = tmp_path / "r"
    argv = ["train", *TINY_PPO, "--total-steps", "10000000", "--run-dir", str(run_dir), "--export", "x.npz"]
    rc, err = _interrupt(argv, "[eval] steps=258", tmp_path)
    assert rc == 130, err
    assert "Traceback" not in err
    assert (
        err.strip().splitlines()[-1].strip() == f"shelfie train --resume --run-dir {run_dir} --export x.npz"
    )
    steps = json.loads((run_dir / "latest.json").read_text())["steps"]
    assert f"the last checkpoint is at {steps:,} steps" in err


def test_resume_trains_the_algorithm_of_the_run(tmp_path, capsys):
    for algo, learner in LEARNERS.items():
        run_dir = tmp_path / algo
        run_dir.mkdir()
        (run_dir / "config.json").write_text(json.dumps(dataclasses.asdict(learner.config())))
        args = build_parser("train").parse_args(["train", "--resume", "--run-dir", str(run_dir)])
        assert choose_algo(args) == (algo, f"the run in {run_dir}")
    assert main(["train-td", "--resume", "--run-dir", str(tmp_path / "maskable_ppo")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'maskable_ppo'} is for no single algorithm; shelfie train-td trains td" in err, err


def test_train_td_help_describes_every_field():
    from shelfie_env.train.config import field_docs

    parser = build_parser("train-td")
    sub = next(a for a in parser._actions if a.dest == "command").choices["train-td"]  # type: ignore[attr-defined]
    helps = {a.dest: a.help or "" for a in sub._actions}
    docs = field_docs(TDConfig)
    for f in dataclasses.fields(TDConfig):
        assert docs[f.name] and helps[f.name].startswith(docs[f.name]), f.name


# ---------------------------------------------------------------- algorithms
def test_train_with_no_algorithm_flag_runs_the_after_state_trainer_and_names_the_model_and_its_command(
    tmp_path, capsys
):
    from shelfie_env.bots.learned.card import load_card
    from shelfie_env.train.cli import config_from_args

    run_dir = tmp_path / "r"
    assert (
        main(["train", *TINY_AS, "--no-rollout-worker", "--total-steps", "300", "--run-dir", str(run_dir)])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out.pop(0) == (
        "[train] --algo ppo_afterstate: PPO with the after-state policy, from random weights, no teacher "
        "(chosen by the default)"
    )
    assert out[0].startswith(
        "[train] PPO with the after-state policy, 2 players, 300 steps from random weights"
    )
    assert out[0].endswith(f"-> {run_dir}")
    assert any(line.startswith("[eval] steps=") for line in out)
    model = run_dir / "r.npz"  # best.npz, named after the run
    assert (
        out[-2].startswith("[train] done: ")
        and f" in {run_dir}; model {model} (best.npz: the best periodic evaluation: " in out[-2]
    )
    _play_command_works(out[-1], "ppo", model)
    card = load_card(model, num_players=2)
    assert card["teacher"] == "none" and card["policy_head"] == "afterstate" and card["preset"] is None
    words = shlex.split(card["train_command"])  # the card's command reproduces the run's config
    args = build_parser("train").parse_args(words[1:])
    assert dataclasses.asdict(config_from_args(args)) == card["config"]


def test_the_after_state_preset_runs_through_shelfie_train(tmp_path, capsys):
    from shelfie_env.bots.learned.card import load_card

    run_dir, export = tmp_path / "p", tmp_path / "mine.npz"
    argv = [
        "train",
        "--config",
        "ppo_afterstate_2p",
        *TINY_AS,
        "--no-rollout-worker",
        "--total-steps",
        "200",
        "--run-dir",
        str(run_dir),
        "--export",
        str(export),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out.pop(0).endswith("(chosen by --config ppo_afterstate_2p (its algo))")
    assert (
        out[0].startswith("[train] PPO with the after-state policy")
        and "(config ppo_afterstate_2p)" in out[0]
    )
    config = json.loads((run_dir / "config.json").read_text())
    recipe = read_config("ppo_afterstate_2p")
    assert config["games"] == 4 and config["net_arch"] == [16] and config["total_steps"] == 200
    assert all(config[k] == recipe[k] for k in ("learning_rate", "opp_greedy", "beta", "gae_lambda", "seed"))
    assert (
        out[-2].startswith("[train] done: ")
        and f"model {export} (best.npz: the best periodic evaluation" in out[-2]
    )
    _play_command_works(out[-1], "ppo", export)
    assert load_card(export, num_players=2)["preset"] == "ppo_afterstate_2p"


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["--n-envs", "8"],
            "--n-envs is an option of --algo maskable_ppo, not of ppo_afterstate (the default); "
            "add --algo maskable_ppo to train with it",
        ),
        (["--bc-games", "0", "--progress"], "--bc-games, --progress are options of --algo maskable_ppo"),
        (
            ["--config", "ppo_2p", "--games", "8"],
            "--games is an option of --algo ppo_afterstate or --algo td, not of maskable_ppo "
            "(--config ppo_2p (its algo))",
        ),
        (
            ["--algo", "maskable_ppo", "--beta", "3"],
            "--beta is an option of --algo ppo_afterstate, not of maskable_ppo",
        ),
        (
            ["--algo", "ppo_afterstate", "--config", "ppo_2p"],
            "--config ppo_2p is a config of --algo maskable_ppo, but --algo ppo_afterstate was given",
        ),
        (
            ["--backend", "sb3", "--config", "ppo_afterstate_2p"],
            "--config ppo_afterstate_2p is a config of --algo ppo_afterstate, but --backend sb3 is the backend of "
            "--algo maskable_ppo",
        ),
        (["--backend", "rllib", "--games", "8"], "not used by --backend rllib: --games"),
        (
            ["--backend", "rllib", "--algo", "ppo_afterstate"],
            "--backend rllib trains its own PPO, not --algo ppo_afterstate",
        ),
        (
            ["--backend", "rllib", "--config", "ppo_afterstate_2p"],
            "--config ppo_afterstate_2p is a config of --algo ppo_afterstate, not of --backend rllib",
        ),
    ],
)
def test_an_option_of_the_other_algorithm_is_named(argv, words, tmp_path, capsys):
    assert main(["train", *argv, "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert "Traceback" not in err and not (tmp_path / "r").exists()


def test_resume_follows_the_algorithm_of_the_run_and_refuses_the_other(tmp_path, capsys):
    ppo_run, as_run = tmp_path / "ppo", tmp_path / "as"
    for run_dir, cfg in ((ppo_run, TrainConfig()), (as_run, PPOAfterstateConfig())):
        run_dir.mkdir()
        (run_dir / "config.json").write_text(json.dumps(dataclasses.asdict(cfg)))
    assert main(["train", "--resume", "--run-dir", str(as_run), "--algo", "maskable_ppo"]) == 2
    assert (
        f"{as_run} holds a run of --algo ppo_afterstate, but --algo maskable_ppo was given"
        in capsys.readouterr().err
    )
    assert main(["train", "--resume", "--run-dir", str(ppo_run), "--games", "3"]) == 2
    err = capsys.readouterr().err
    assert (
        f"--games is an option of --algo ppo_afterstate or --algo td, not of maskable_ppo "
        f"(the run in {ppo_run})"
        in err
    )
    assert main(["train", "--resume", "--run-dir", str(as_run)]) == 2  # config.json but no checkpoint yet
    assert f"--resume: no checkpoint {as_run / 'latest.pt'}" in capsys.readouterr().err


def test_a_directory_holding_a_run_of_either_algorithm_is_refused(tmp_path, capsys):
    for checkpoint, argv in (("latest.pt", ["--algo", "maskable_ppo"]), ("latest.zip", [])):
        run_dir = tmp_path / checkpoint
        run_dir.mkdir()
        (run_dir / checkpoint).write_bytes(b"")
        assert main(["train", *argv, "--run-dir", str(run_dir)]) == 2
        assert f"{run_dir} already holds a run; pass --resume" in capsys.readouterr().err


def test_ctrl_c_in_the_default_trainer_prints_the_command_that_resumes_it(tmp_path, capsys):
    run_dir = tmp_path / "a"
    argv = ["train", *TINY_AS, "--eval-games", "0", "--total-steps", "10000000", "--run-dir", str(run_dir)]
    rc, err = _interrupt(argv, "[ppo-as] it 2 ", tmp_path)  # games played by the rollout worker process
    assert rc == 130, err
    assert "Traceback" not in err
    resume = err.strip().splitlines()[-1].strip()
    assert resume == f"shelfie train --resume --run-dir {run_dir}"
    found = re.search(r"the last checkpoint is at ([\d,]+) steps", err)
    assert found, err
    steps = int(found.group(1).replace(",", ""))
    assert steps > 0
    # the printed command continues the run (here by one more iteration)
    assert main([*shlex.split(resume)[1:], "--total-steps", str(steps + 1), "--no-rollout-worker"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"[ppo-as] resumed {run_dir} at {steps} steps" in out
    assert out[-2].endswith(f"model {run_dir / 'a.npz'} (latest.npz: the network when training ended)")


# ------------------------------------------------------- what a run says first
def test_a_file_of_one_learners_fields_names_that_learner_in_the_first_line(tmp_path, capsys, monkeypatch):
    from shelfie_env.train.maskable_ppo import run as maskable

    handed: list = []
    monkeypatch.setattr(maskable, "train_cli", lambda *args: handed.append(args) or 0)
    monkeypatch.setattr("shelfie_env.train.messages.compile_notice", lambda: None)
    mine = tmp_path / "mine.toml"
    mine.write_text("n_envs = 8\n")
    assert main(["train", "--config", str(mine), "--run-dir", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "[train] --algo maskable_ppo: sb3-contrib's MaskablePPO, warm-started by behaviour cloning of a teacher "
        f"(chosen by --config {mine} (its fields are maskable_ppo's))"
    )
    (cfg, preset, resume, export), = handed
    assert isinstance(cfg, TrainConfig) and cfg.n_envs == 8 and preset == str(mine) and not resume


def test_the_first_run_says_it_compiles_the_kernels(tmp_path, capsys, monkeypatch):
    from shelfie_env.train import messages as console
    from shelfie_env.train.ppo_afterstate import ppo

    monkeypatch.setattr(ppo, "train_cli", lambda *args: 0)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    package = tmp_path / "pkg"
    (package / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "kern.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert console.compile_notice(["pkg.kern"]) == (
        "[train] compiling the batched engine's kernels first (numba, about a minute; cached for later runs)"
    )
    (package / "__pycache__" / "kern.step-12.py311.nbi").write_bytes(b"")
    assert console.compile_notice(["pkg.kern"]) is None  # cached: nothing to wait for
    (package / "nothing_cached.py").write_text("")
    monkeypatch.setattr(console, "KERNEL_MODULES", ("pkg.nothing_cached", "pkg.kern"))
    assert main(["train", "--run-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("[train] compiling the batched engine's kernels first")


def test_two_runs_models_are_told_apart_by_their_run(tmp_path, capsys):
    from shelfie_env.arena.protocol import model_labels
    from shelfie_env.bots.learned.card import load_card

    models = []
    for name in ("alpha", "beta"):
        run_dir = tmp_path / name
        argv = ["train", "--algo", "ppo_flat", "--num-envs", "8", "--num-steps", "8", "--minibatch-size", "64"]
        argv += ["--total-steps", "64", "--eval-every", "0", "--net-arch", "8", "--run-dir", str(run_dir)]
        assert main(argv) == 0
        line = capsys.readouterr().out.splitlines()[-2]
        model = run_dir / f"{name}.npz"
        assert f"; model {model} (model.npz: the network when training ended)" in line
        assert load_card(model)["name"] == name
        models.append(f"ppo:path={model}")
    assert model_labels(models)[0] == ["ppo:alpha", "ppo:beta"]

