"""The SB3 export example of docs/environment.md writes a card that says how the model was trained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _snippet() -> str:
    text = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```python no-run\n")[1:]]
    (block,) = [b for b in blocks if "export_weights(model, " in b]
    return block


@pytest.mark.slow
def test_the_export_example_records_wall_time_and_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sb3_contrib")
    from shelfie_env.bots import make
    from shelfie_env.game.engine import Game

    source = _snippet()
    assert source.count("model.learn(3_000_000)") == 1 and source.count('"mine.npz"') == 1
    monkeypatch.chdir(tmp_path)
    exec(compile(source.replace("model.learn(3_000_000)", "model.learn(1)"), "environment.md", "exec"),
         {"__name__": "__main__"})
    card = json.loads((tmp_path / "mine.json").read_text())
    assert card["wall_time_s"] > 0 and card["steps"] >= 2048  # one rollout: 8 games x 256 steps
    config = card["config"]
    assert {k: config[k] for k in ("obs", "reroll", "score_reward", "n_steps", "gamma", "num_envs", "seed")} == {
        "obs": "features", "reroll": "keep", "score_reward": 0.02, "n_steps": 256, "gamma": 0.995,
        "num_envs": 8, "seed": 0,
    }
    assert config["policy_kwargs"]["net_arch"] == {"pi": [256, 256], "vf": [256, 256]}
    game = Game.new(2)
    assert game.legal_mask()[make("ppo", path=str(tmp_path / "mine.npz")).act(game.to_dict())]
