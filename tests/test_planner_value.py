"""The planner's learned win-chance evaluation: features, model files, play."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shelfie_env.bots import act_on_game, make
from shelfie_env.engine import Game
from shelfie_env.planner.evaluation import Context, Weights
from shelfie_env.planner.value_model import BUILTIN, FEATURE_VERSION, ValueModel, features


def _midgame(seed: int = 4) -> Game:
    game = Game.new(2, rng=seed)
    bots = [make("greedy"), make("greedy")]
    for _ in range(25):
        game.step(act_on_game(bots[game.current], game))
    return game


def test_features_carry_the_hand_built_terms_and_the_shelves() -> None:
    game = _midgame()
    ctx = Context(game, Weights())
    p, q = ctx.player, ctx.rivals[0]
    free = [1 << b for b in range(25) if ctx.free >> b & 1][:4]
    circled = np.array([ctx.circled | b for b in free])
    crossed = np.full(len(free), ctx.crossed)
    x = features(ctx, circled, crossed)
    assert x.shape == (len(free), 118) and x.dtype == np.float32
    np.testing.assert_allclose(x[:, 0], ctx.evaluate(circled, crossed, lookahead=False) / 10, rtol=1e-5)
    for i, c in enumerate(circled.tolist()):
        bits = x[i, 18:43]
        assert [int(v) for v in bits] == [c >> b & 1 for b in range(25)]
        rival = x[i, 68:93]
        assert [int(v) for v in rival] == [game.circled[q] >> b & 1 for b in range(25)]
    assert x[0, 7] == (1.0 if q > p else 0.0)


def _write_model(path: Path, version: int = FEATURE_VERSION) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    layers = {
        "w0": rng.normal(size=(118, 8)),
        "b0": rng.normal(size=8),
        "w1": rng.normal(size=(8, 1)),
        "b1": rng.normal(size=1),
    }
    np.savez(
        path,
        mean=np.full(118, 0.5),
        std=np.full(118, 2.0),
        feature_version=np.array(version),
        **layers,
    )
    return layers


def test_model_file_is_read_and_applied(tmp_path: Path) -> None:
    layers = _write_model(tmp_path / "m.npz")
    model = ValueModel(tmp_path / "m.npz")
    x = np.random.default_rng(1).normal(size=(5, 118))
    h = np.maximum((x - 0.5) / 2.0 @ layers["w0"] + layers["b0"], 0) @ layers["w1"] + layers["b1"]
    np.testing.assert_allclose(model.logit(x), h[:, 0])
    p = model.win_chance(x)
    assert ((p > 0) & (p < 1)).all()


def test_bad_model_files_are_refused_clearly(tmp_path: Path) -> None:
    _write_model(tmp_path / "old.npz", version=FEATURE_VERSION + 1)
    with pytest.raises(ValueError, match="feature version"):
        ValueModel(tmp_path / "old.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="cannot read the planner value model"):
        ValueModel(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="cannot read"):
        make("planner", value_model=str(tmp_path / "missing.npz")).act_game(_midgame())


def test_a_custom_model_steers_the_planner(tmp_path: Path) -> None:
    _write_model(tmp_path / "m.npz")
    bot = make("planner", value_model=str(tmp_path / "m.npz"))
    game = _midgame(7)
    while not game.over:
        a = act_on_game(bot if game.current == 0 else make("greedy"), game)
        assert a in game.legal_actions()
        game.step(a)


@pytest.mark.skipif(not BUILTIN.exists(), reason="no builtin model in this checkout")
def test_builtin_model_plays_legal_moves_in_two_player_games_only() -> None:
    bot = make("planner", value_model="builtin")
    for seed in range(3):
        game = Game.new(2, rng=seed)
        rival = make("greedy")
        while not game.over:
            a = act_on_game(bot if game.current == seed % 2 else rival, game)
            assert a in game.legal_actions()
            game.step(a)
    # Solo and 3-player games keep the hand-built evaluation.
    solo = Game.new(1, rng=0)
    assert solo.legal_actions()
    assert bot.act_game(solo) in solo.legal_actions()
