"""What ``shelfie train`` and ``shelfie train-td`` say: presets, config errors, header and end lines, Ctrl-C."""

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
from shelfie_env.cli import build_parser, main
from shelfie_env.rllib.train import RLlibConfig
from shelfie_env.train.config import TrainConfig, preset_names, read_config
from shelfie_env.train.fields import describe_type
from shelfie_env.train.run import planned_steps
from shelfie_env.train.td import TDConfig

ROOT = Path(__file__).resolve().parents[1]
TINY_PPO = (
    "--n-envs 2 --n-steps 128 --batch-size 128 --n-epochs 1 --net-arch 32 --eval-every 256 --eval-games 4 "
    "--save-every 256 --snapshot-every 256 --bc-games 3 --bc-epochs 1 --bc-dagger-rounds 0"
).split()
TINY_TD = "--games 4 --eval-every 1 --eval-games 4 --net-arch 16 --eval-opponents greedy".split()


def _help_of(command: str) -> str:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # type: ignore[attr-defined]
    return " ".join(sub.format_help().split())


# ------------------------------------------------------------------ presets
def test_each_command_lists_its_own_presets_and_names_the_other_commands():
    from shelfie_env.train.config import OTHER_TRAINERS, read_config

    ppo, td = preset_names("train"), preset_names("train-td")
    assert ppo and td and not set(ppo) & set(td)
    others = [n for n in preset_names() if read_config(n).get("algo") in OTHER_TRAINERS]
    assert sorted(ppo + td + others) == preset_names()
    for command, own, other, other_command in (("train", ppo, td, "train-td"), ("train-td", td, ppo, "train")):
        text = _help_of(command)
        assert f"a preset ({', '.join(own)})" in text
        assert f"({', '.join(other)}) are for shelfie {other_command}" in text


@pytest.mark.parametrize("command", ["train", "train-td"])
def test_every_preset_is_accepted_by_its_command_and_sent_to_it_by_the_other(command, capsys):
    other = "train-td" if command == "train" else "train"
    for name in preset_names(command):
        data = read_config(name, command=command)
        data.pop("algo", None)
        (TrainConfig if command == "train" else TDConfig)(**data)  # every field fits its config
        assert main([other, "--config", name]) == 2
        err = capsys.readouterr().err
        assert f"run: shelfie {command} --config {name}" in err, err


def test_an_unknown_config_lists_the_commands_presets(capsys):
    assert main(["train-td", "--config", "nope"]) == 2
    assert f"not a preset of shelfie train-td (presets: {', '.join(preset_names('train-td'))})" in capsys.readouterr().err


# -------------------------------------------------------------- field types
def _bad_value(expected: typing.Any) -> typing.Any:
    if expected is bool:
        return "yes"
    if expected is str or str in typing.get_args(expected):
        return 7
    return "many"


def _config_cases():
    for cls in (TrainConfig, TDConfig, RLlibConfig):
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
        (["train", "--learning-rate", "-1"], "--learning-rate must be >= 0"),
        (["train", "--seed", "-1"], "--seed must be >= 0"),
        (["train", "--gamma", "2"], "--gamma must be in (0, 1]"),
        (["train", "--n-envs", "0"], "--n-envs must be positive"),
        (["train", "--bc-teacher", "planner:threat=x"], "--bc-teacher: bot spec 'planner:threat=x'"),
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
    assert f"argument {argv[1]}: invalid" in capsys.readouterr().err


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
    assert out[0].startswith("[train] 2 players, 300 PPO steps (rounded up to 512: 2 whole rollouts of 256)")
    assert out[0].endswith(f"-> {run_dir}")
    assert json.loads((run_dir / "latest.json").read_text())["steps"] == 512
    assert out[-2].startswith(f"[train] done: 512 steps in {run_dir}; model {export} (best.zip")
    _play_command_works(out[-1], "ppo", export)


def test_train_td_prints_a_header_and_ends_with_the_model_and_the_command_that_plays_it(tmp_path, capsys):
    run_dir = tmp_path / "t"
    assert main(["train-td", *TINY_TD, "--iterations", "1", "--run-dir", str(run_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[td] TD(lambda) self-play, 2 players, 1 iterations x 4 games")
    assert out[0].endswith(f"-> {run_dir}")
    model = run_dir / "latest.npz"
    assert out[-2].startswith(f"[td] done: 1 iterations (4 games) in {run_dir}; model {model}")
    _play_command_works(out[-1], "td", model)


def test_a_solo_model_is_scored_by_the_arena():
    from shelfie_env.train.console import play_command

    line = play_command("ppo", Path("runs/s/best.zip"), 1)
    assert line == "shelfie arena ppo:path=runs/s/best.zip --players 1 --games 200"
    assert play_command("td", Path("a b/latest.npz"), 3) == "shelfie play --players 3 --bot 'td:path=a b/latest.npz'"


# -------------------------------------------------------------------- Ctrl-C
def _interrupt(argv: list[str], ready: str, cwd: Path) -> tuple[int, str]:
    code = f"import sys; from shelfie_env.cli import main; sys.exit(main({argv!r}))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=os.setpgrp,  # a process group of its own, which the test signals as Ctrl-C would
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
    argv = ["train-td", *TINY_TD, "--eval-every", "0", "--iterations", "100000", "--run-dir", str(run_dir),
            "--workers", workers]
    rc, err = _interrupt(argv, "[td] iteration 2:", tmp_path)
    assert rc == 130, err
    assert "Traceback" not in err
    resume = err.strip().splitlines()[-1].strip()
    assert resume == f"shelfie train-td --resume --run-dir {run_dir}"
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
    assert err.strip().splitlines()[-1].strip() == f"shelfie train --resume --run-dir {run_dir} --export x.npz"
    steps = json.loads((run_dir / "latest.json").read_text())["steps"]
    assert f"the last checkpoint is at {steps:,} steps" in err


def test_resuming_a_run_of_the_other_command_names_that_command(tmp_path, capsys):
    ppo_run, td_run = tmp_path / "ppo", tmp_path / "td"
    for run_dir, cfg in ((ppo_run, TrainConfig()), (td_run, TDConfig())):
        run_dir.mkdir()
        (run_dir / "config.json").write_text(json.dumps(dataclasses.asdict(cfg)))
    assert main(["train", "--resume", "--run-dir", str(td_run)]) == 2
    assert f"run: shelfie train-td --resume --run-dir {td_run}" in capsys.readouterr().err
    assert main(["train-td", "--resume", "--run-dir", str(ppo_run)]) == 2
    assert f"run: shelfie train --resume --run-dir {ppo_run}" in capsys.readouterr().err


def test_train_td_help_describes_every_field():
    from shelfie_env.train.config import field_docs

    parser = build_parser("train-td")
    sub = next(a for a in parser._actions if a.dest == "command").choices["train-td"]  # type: ignore[attr-defined]
    helps = {a.dest: a.help or "" for a in sub._actions}
    docs = field_docs(TDConfig)
    for f in dataclasses.fields(TDConfig):
        assert docs[f.name] and helps[f.name].startswith(docs[f.name]), f.name


def test_a_config_of_the_after_state_trainer_names_its_command() -> None:
    from shelfie_env.train.config import check_command, read_config

    with pytest.raises(ValueError, match="run: python -m shelfie_env.train.ppo_afterstate --config ppo_afterstate_2p"):
        check_command("ppo_afterstate_2p", read_config("ppo_afterstate_2p"), "train")
