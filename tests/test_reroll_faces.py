"""``reroll="faces"``: every legal face-set id rerolls exactly the dice of its faces, as a legal SPEC id."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.batched import BatchedGame, random_legal_actions, seed_streams
from shelfie_env.game.engine import Game
from shelfie_env.observation.reroll import check_reroll_mode, faces_mask, from_spec, to_spec


def _reroll_positions(spec_id: int) -> list[int]:
    return [i for i in range(6) if spec_id >> i & 1]


def test_every_face_set_is_one_legal_spec_reroll() -> None:
    rng = np.random.default_rng(0)
    seen = 0
    for seed in range(300):
        game = Game.new(2, rng=np.random.default_rng(seed))
        for _ in range(int(rng.integers(0, 40))):  # a random position of a random game
            if game.over:
                break
            game.step(int(rng.choice(game.legal_actions())))
        if game.over or not game.legal_mask()[1:64].any():
            continue
        dice = np.asarray(game.dice)
        spec_mask = game.legal_mask()
        mask = faces_mask(spec_mask, dice)
        assert mask[0] == spec_mask[0] == 1 and (mask[64:] == spec_mask[64:]).all()
        faces = set(dice.tolist())
        for a in range(1, 64):
            named = {f for f in range(6) if a >> f & 1}
            assert bool(mask[a]) == (named <= faces)
            if not mask[a]:
                continue
            spec = int(to_spec(a, dice))
            assert spec_mask[spec], (dice, a, spec)
            assert sorted(dice[_reroll_positions(spec)].tolist()) == sorted(d for d in dice.tolist() if d in named)
            assert from_spec(spec, dice) == a
            seen += 1
    assert seen > 1000


def test_a_partial_reroll_of_a_face_has_no_faces_id() -> None:
    dice = np.array([0, 0, 0, 2, 4, 5])
    assert from_spec(0b000100, dice) is None  # the third plant alone
    assert from_spec(0b000111, dice) == 0b000001  # all three plants


def test_batched_masks_and_translation_match_the_scalar_ones() -> None:
    batch = BatchedGame(64, 3, seed=4)
    streams = seed_streams(9, 64)
    for _ in range(80):
        mask = faces_mask(batch.legal_mask(), batch.dice)
        for i in range(64):
            if not batch.done[i]:
                np.testing.assert_array_equal(mask[i], faces_mask(batch.legal_mask()[i], batch.dice[i]))
        acts = np.array([np.random.default_rng(i).choice(np.flatnonzero(m)) for i, m in enumerate(mask)])
        spec = to_spec(acts, batch.dice)
        assert batch.legal_mask()[np.arange(64), spec].all()
        batch.step(random_legal_actions(batch.legal_mask(), streams))
        batch.reset(batch.done.copy())


def test_an_unknown_reroll_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="reroll must be one of 'ids', 'faces'"):
        check_reroll_mode("dice")
