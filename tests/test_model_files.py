"""A file that is not a model is refused with a plain message, never a hint to load pickles."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.bots.learned.card import CheckpointMismatchError
from shelfie_env.bots.learned.policy import read_weights

MODELS = Path(__file__).resolve().parents[1] / "shelfie_env" / "models"


def _beside_a_valid_card(tmp_path: Path, shipped: str, content: bytes) -> Path:
    path = tmp_path / "garbage.npz"
    path.write_bytes(content)
    shutil.copy(MODELS / f"{shipped}.json", path.with_suffix(".json"))
    return path


CONTENTS = {
    "random bytes": bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)),
    "a pickle": pickle.dumps({"w0": [1.0, 2.0]}),
    "a truncated zip": b"PK\x03\x04garbage",
    "empty": b"",
}


@pytest.mark.parametrize("what", sorted(CONTENTS))
@pytest.mark.parametrize("bot, shipped", [("ppo", "ppo_2p"), ("td", "td_2p")])
def test_a_corrupt_model_beside_a_valid_card_is_not_a_model_file(tmp_path, what, bot, shipped):
    path = _beside_a_valid_card(tmp_path, shipped, CONTENTS[what])
    with pytest.raises(CheckpointMismatchError) as info:
        bots.make(bot, path=str(path))
    message = str(info.value)
    assert f"{path} is not a model file" in message
    assert "pickle" not in message.lower()


def test_an_archive_of_object_arrays_is_refused_without_unpickling(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, w0=np.array([{"a": 1}], dtype=object))
    with pytest.raises(CheckpointMismatchError, match="is not a model file") as info:
        read_weights(path)
    assert "allow_pickle" not in str(info.value)


def test_a_missing_model_file_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model file"):
        read_weights(tmp_path / "nothing.npz")


def test_a_corrupt_checkpoint_zip_is_not_a_model_file(tmp_path):
    from shelfie_env.train.checkpoint import load_model

    path = tmp_path / "best.zip"
    path.write_bytes(CONTENTS["random bytes"])
    shutil.copy(MODELS / "ppo_2p.json", path.with_suffix(".json"))
    with pytest.raises(CheckpointMismatchError, match="is not a model file"):
        load_model(path, 2)
