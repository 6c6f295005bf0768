"""``reroll="keep"``: every legal keep-set id rerolls exactly the dice of the faces not kept, as a legal SPEC id."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.batched import BatchedGame, random_legal_actions, seed_streams
from shelfie_env.game.engine import Game
from shelfie_env.game.reroll_keep import ALL, check_reroll_mode, from_spec, keep_mask, to_spec


def _rerolled(spec_id: int, dice: np.ndarray) -> list[int]:
    return sorted(int(dice[i]) for i in range(6) if spec_id >> i & 1)


def test_every_keep_set_is_one_legal_spec_reroll() -> None:
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
        mask = keep_mask(spec_mask, dice)
        assert mask[0] == spec_mask[0] == 1 and (mask[64:] == spec_mask[64:]).all()
        for k in range(1, 64):
            kept = set() if k == ALL else {f for f in range(5) if k >> f & 1}
            want = sorted(d for d in dice.tolist() if d not in kept)
            if k != ALL and k >> 5 & 1 and 5 in want:
                want.remove(5)  # one joker kept
            assert bool(mask[k]) == bool(want)
            if not want:
                continue
            spec = int(to_spec(k, dice))
            assert spec_mask[spec], (dice, k, spec)
            assert _rerolled(spec, dice) == want
            back = from_spec(spec, dice)
            assert back is not None and int(to_spec(back, dice)) == spec
            seen += 1
    assert seen > 1000


def test_keep_ids_hold_their_meaning_and_partial_rerolls_have_none() -> None:
    cats_and_jokers = 1 << 4 | 1 << 5
    for dice in ([0, 1, 4, 4, 5, 5], [2, 3, 3, 4, 5, 5], [0, 0, 0, 0, 4, 5]):
        spec = int(to_spec(cats_and_jokers, np.array(dice)))
        rerolled = _rerolled(spec, np.array(dice))
        assert 4 not in rerolled and rerolled.count(5) == max(dice.count(5) - 1, 0)
    assert int(to_spec(ALL, np.array([0, 1, 2, 3, 4, 5]))) == 63
    dice = np.array([0, 0, 0, 2, 4, 5])
    assert from_spec(0b000100, dice) is None  # the third plant alone
    assert from_spec(0b000111, dice) == 0b110100  # all three plants: keep the book, cat and joker


def test_batched_masks_and_translation_match_the_scalar_ones() -> None:
    batch = BatchedGame(64, 3, seed=4)
    streams = seed_streams(9, 64)
    for _ in range(80):
        mask = keep_mask(batch.legal_mask(), batch.dice)
        for i in range(64):
            np.testing.assert_array_equal(mask[i], keep_mask(batch.legal_mask()[i], batch.dice[i]))
        acts = np.array([np.random.default_rng(i).choice(np.flatnonzero(m)) for i, m in enumerate(mask)])
        spec = to_spec(acts, batch.dice)
        live = ~batch.done
        assert batch.legal_mask()[np.flatnonzero(live), spec[live]].all()
        batch.step(random_legal_actions(batch.legal_mask(), streams))
        batch.reset(batch.done.copy())


def test_an_unknown_reroll_mode_is_refused() -> None:
    for bad in ("faces", "keep1"):
        with pytest.raises(ValueError, match="reroll must be one of 'ids', 'keep'"):
            check_reroll_mode(bad)


def test_the_joker_bit_keeps_one_joker_and_every_id_is_a_legal_spec_reroll() -> None:
    batch = BatchedGame(128, 2, seed=7)
    streams = seed_streams(3, 128)
    checked = 0
    for _ in range(60):
        spec_mask = batch.legal_mask()
        mask = keep_mask(spec_mask, batch.dice)
        for i in np.flatnonzero(spec_mask[:, 1:64].any(axis=1)):
            dice = batch.dice[i]
            for k in np.flatnonzero(mask[i, 1:64]) + 1:
                spec = int(to_spec(k, dice))
                assert spec_mask[i, spec]
                kept = [int(d) for j, d in enumerate(dice) if not spec >> j & 1]
                assert kept.count(5) == (1 if k != ALL and k >> 5 & 1 and 5 in dice.tolist() else 0)
                checked += 1
        batch.step(random_legal_actions(spec_mask, streams))
        batch.reset(batch.done.copy())
    assert checked > 1000
