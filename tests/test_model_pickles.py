"""A model file given by path is data: an SB3 ``.zip`` whose ``data`` entry carries a pickle
runs no code in any command that loads a model by path, and a normal one plays as before."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from shelfie_env import bots, cli
from shelfie_env.bots import spec
from shelfie_env.bots.learned.card import CheckpointMismatchError, make_card
from shelfie_env.game.engine import Game
from shelfie_env.play import terminal

pytest.importorskip("sb3_contrib")


class _Marker:
    """Unpickling this creates the file ``path`` (what a hostile payload would do instead)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _with_payload(clean: Path, target: Path, marker: Path) -> Path:
    """A copy of SB3 zip ``clean`` (and its card) whose ``data`` entries carry a pickled payload."""
    payload = base64.b64encode(pickle.dumps(_Marker(str(marker)))).decode()
    with zipfile.ZipFile(clean) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            raw = src.read(item)
            if item.filename == "data":
                data = json.loads(raw)
                data["payload"] = {":type:": "<class 'object'>", ":serialized:": payload}
                data["policy_kwargs"] = {":type:": "<class 'dict'>", ":serialized:": payload}
                raw = json.dumps(data).encode()
            dst.writestr(item, raw)
    shutil.copyfile(clean.with_suffix(".json"), target.with_suffix(".json"))
    return target


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """``(clean zip, zip with a payload, marker path)``: a tiny 2-player MaskablePPO saved by this package."""
    from shelfie_env.train.checkpoint import save_model
    from shelfie_env.train.maskable_ppo.config import TrainConfig

    from .conftest import tiny_ppo

    folder = tmp_path_factory.mktemp("models")
    config = dataclasses.replace(TrainConfig(), net_arch=[32, 32]).to_dict()
    clean = save_model(tiny_ppo("MlpPolicy"), folder / "clean.zip", make_card(2, config=config))
    marker = folder / "ran"
    evil = _with_payload(clean, folder / "evil.zip", marker)
    return clean, evil, marker


def test_the_payload_runs_when_unpickled(models):
    """The test's payload is live: unpickling the zip's ``data`` entry as SB3 does creates the marker."""
    import cloudpickle

    _, evil, marker = models
    with zipfile.ZipFile(evil) as archive:
        entry = json.loads(archive.read("data"))["payload"][":serialized:"]
    cloudpickle.loads(base64.b64decode(entry)).close()
    assert marker.exists()
    marker.unlink()


def _moves(bot, seed: int = 3) -> list[int]:
    game, moves = Game.new(2, rng=seed), []
    while not game.over:
        moves.append(bot.act(game.to_dict()))
        game.step(moves[-1])
    return moves


def test_the_ppo_bot_reads_a_zip_without_unpickling_and_plays_as_sb3_does(models):
    from sb3_contrib import MaskablePPO

    clean, evil, marker = models
    moves = _moves(bots.make("ppo", path=str(evil)))
    assert not marker.exists()
    assert moves == _moves(bots.make("ppo", path=str(clean)))
    sb3 = MaskablePPO.load(str(clean), device="cpu")  # the clean file is safe to unpickle
    game, want = Game.new(2, rng=3), []
    from shelfie_env.observation.vector import encode

    while not game.over:
        action, _ = sb3.predict(encode(game, game.current), action_masks=game.legal_mask(), deterministic=True)
        want.append(int(action))
        game.step(int(action))
    assert moves == want


def test_shelfie_play_with_a_zip_bot_runs_no_code(models):
    _, evil, marker = models
    args = cli.build_parser().parse_args(["play", "--bot", f"ppo:path={evil}", "--seed", "1", "--no-color"])
    out = io.StringIO()
    assert terminal.run_play(args, io.StringIO("quit\n"), out) == 0
    assert not marker.exists()


def test_shelfie_arena_with_a_zip_bot_runs_no_code(models, capsys):
    _, evil, marker = models
    assert cli.main(["arena", f"ppo:path={evil}", "random", "--games", "2", "--workers", "1", "--no-ratings"]) == 0
    assert not marker.exists()
    assert "ppo" in capsys.readouterr().out


def test_serve_bot_registration_and_play_runs_no_code(models):
    from shelfie_env.play.web.cli import _register_bots

    _, evil, marker = models
    try:
        assert _register_bots([f"pickle-test-zip=ppo:path={evil}"]) is None
        _moves(bots.make("pickle-test-zip", num_players=2))
        assert not marker.exists()
    finally:  # the registry is the process's: leave no bot behind for the tests that list every bot
        bots._REGISTRY.pop("pickle-test-zip", None)
        spec._SPECS.pop("pickle-test-zip", None)


def test_train_init_from_a_zip_runs_no_code_and_copies_the_weights(models):
    import torch

    from shelfie_env.train.maskable_ppo.config import TrainConfig
    from shelfie_env.train.maskable_ppo.run import start_from

    from .conftest import tiny_ppo

    clean, evil, marker = models
    model = tiny_ppo("MlpPolicy")
    cfg = dataclasses.replace(TrainConfig(), net_arch=[32, 32], init_from=str(evil))
    start_from(model, cfg)
    assert not marker.exists()
    from shelfie_env.bots.learned.sb3_zip import read_zip_weights

    want = read_zip_weights(clean)
    got = model.policy.state_dict()
    assert all(np.array_equal(got[k].numpy(), want[k]) for k in want)
    assert all(torch.is_tensor(v) for v in got.values())


def test_a_policy_entry_holding_objects_is_refused_in_one_line(models, tmp_path):
    clean, _, marker = models
    target = tmp_path / "objects.zip"
    with zipfile.ZipFile(clean) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            raw = src.read(item)
            if item.filename == "policy.pth":
                raw = pickle.dumps(_Marker(str(marker)))
            dst.writestr(item, raw)
    shutil.copyfile(clean.with_suffix(".json"), target.with_suffix(".json"))
    with pytest.raises(CheckpointMismatchError, match="is not a model file") as info:
        bots.make("ppo", path=str(target))
    assert "\n" not in str(info.value)
    assert not marker.exists()


def test_a_zip_without_policy_weights_is_refused_in_one_line(models, tmp_path):
    clean, _, _ = models
    target = tmp_path / "empty.zip"
    with zipfile.ZipFile(target, "w") as dst:
        dst.writestr("data", "{}")
    shutil.copyfile(clean.with_suffix(".json"), target.with_suffix(".json"))
    with pytest.raises(CheckpointMismatchError, match="has no policy.pth"):
        bots.make("ppo", path=str(target))


def test_a_run_state_holding_objects_is_refused_without_building_them(tmp_path):
    import torch

    from shelfie_env.train.checkpoint import load_run_state
    from shelfie_env.train.ppo_flat.ppo import Trainer

    marker = tmp_path / "ran"
    path = tmp_path / "latest.pt"
    torch.save({"steps": 1, "config": {}, "extra": _Marker(str(marker))}, path)
    with pytest.raises(ValueError, match="not a resume state of a run") as info:
        load_run_state(path)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="not a ppo_flat checkpoint"):
        Trainer.resume(path)
    assert not marker.exists()


def test_a_run_state_of_tensors_numbers_and_arrays_loads(tmp_path):
    import torch

    from shelfie_env.train.checkpoint import load_run_state

    path = tmp_path / "latest.pt"
    state = {"w": torch.ones(3), "steps": 7, "rng": {"state": 2**100}, "a": np.arange(4.0), "t": (1, "x")}
    torch.save(state, path)
    got = load_run_state(path)
    assert torch.equal(got["w"], state["w"]) and got["steps"] == 7 and got["rng"] == {"state": 2**100}
    assert np.array_equal(got["a"], state["a"]) and got["t"] == (1, "x")


@pytest.mark.parametrize("command", ["train", "train-td", "bench"])
def test_the_commands_that_resume_say_a_run_folder_is_trusted_like_code(command, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    assert "trusted like code" in " ".join(capsys.readouterr().out.split())
