"""Action ids, readable names and canonical reroll sets (SPEC §6)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement
from math import prod

import numpy as np
import pytest

from shelfie_env.game.actions import (
    CIRCLE_BASE,
    CROSS_BASE,
    END_TURN,
    NUM_ACTIONS,
    STOP,
    action_kind,
    action_name,
    circle_action,
    cross_action,
    decode_circle,
    reroll_action,
    reroll_positions,
)
from shelfie_env.game.engine import Game

from .conftest import make_state


def test_id_layout_constants() -> None:
    assert (NUM_ACTIONS, STOP, CIRCLE_BASE, END_TURN, CROSS_BASE) == (120, 0, 64, 114, 115)


def test_circle_ids_follow_the_formula_and_decode() -> None:
    seen = set()
    for r in range(5):
        for c in range(5):
            for j in (0, 1):
                a = circle_action(r, c, j)
                assert a == 64 + 2 * (5 * r + c) + j
                assert tuple(decode_circle(a)) == (r, c, j)
                assert action_kind(a) == "circle"
                seen.add(a)
    assert seen == set(range(64, 114))


def test_cross_and_reroll_ids() -> None:
    assert [cross_action(r) for r in range(5)] == [115, 116, 117, 118, 119]
    for a in range(1, 64):
        pos = reroll_positions(a)
        assert reroll_action(pos) == a
        assert pos == tuple(i for i in range(6) if a >> i & 1)
        assert action_kind(a) == "reroll"
    assert action_kind(0) == "stop" and action_kind(114) == "end" and action_kind(119) == "cross"


@pytest.mark.parametrize(
    "call",
    [
        lambda: circle_action(5, 0),
        lambda: circle_action(0, 5),
        lambda: circle_action(-1, 0),
        lambda: cross_action(5),
        lambda: reroll_action([]),
        lambda: reroll_action([6]),
        lambda: decode_circle(114),
        lambda: reroll_positions(0),
        lambda: reroll_positions(64),
        lambda: action_kind(120),
    ],
)
def test_helpers_refuse_out_of_range(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize(
    "action,name",
    [
        (0, "stop rolling"),
        (0b001001, "reroll dice 1,4"),
        (0b111111, "reroll dice 1,2,3,4,5,6"),
        (0b100000, "reroll dice 6"),
        (circle_action(4, 2, 1), "circle cat #3 +joker"),
        (circle_action(4, 2, 0), "circle cat #3"),
        (circle_action(0, 0, 0), "circle plant #1"),
        (circle_action(1, 4, 1), "circle game #5 +joker"),
        (circle_action(2, 1, 0), "circle book #2"),
        (circle_action(3, 3, 0), "circle trophy #4"),
        (114, "end turn"),
        (115, "cross out plants"),
        (117, "cross out books"),
        (118, "cross out trophies"),
        (119, "cross out cats"),
    ],
)
def test_readable_names(action: int, name: str) -> None:
    assert action_name(action) == name
    assert action_name(np.int64(action)) == name


def test_every_id_has_a_distinct_name() -> None:
    names = [action_name(a) for a in range(NUM_ACTIONS)]
    assert all(names) and len(set(names)) == NUM_ACTIONS


@pytest.mark.parametrize("bad", [-1, 120, "3", None, 1.5, 2.0, True])
def test_action_name_refuses_non_ids(bad: object) -> None:
    """Regression: a float such as 1.5 or a string "3" was silently converted to an id."""
    with pytest.raises(ValueError):
        action_name(bad)  # type: ignore[arg-type]


def _reroll_legal(dice: tuple[int, ...]) -> set[int]:
    g = Game.from_dict(make_state(phase="reroll", rolls_left=2, dice=dice))
    return set(g.legal_actions())


def test_canonical_reroll_sets_for_every_dice_multiset() -> None:
    """Exactly one id per "how many dice of each face to reroll", and it is the canonical one."""
    for dice in combinations_with_replacement(range(6), 6):
        legal = _reroll_legal(dice)
        assert 0 in legal
        rerolls = legal - {0}
        assert all(1 <= a <= 63 for a in rerolls)
        groups = Counter(dice)
        assert len(rerolls) == prod(m + 1 for m in groups.values()) - 1
        choices = set()
        for a in rerolls:
            pos = [i for i in range(6) if a >> i & 1]
            # canonical: a rerolled die is followed only by rerolled dice of the same face
            for i in pos:
                assert all(j in pos for j in range(i + 1, 6) if dice[j] == dice[i]), (dice, a)
            choices.add(tuple(sorted(Counter(dice[i] for i in pos).items())))
        assert len(choices) == len(rerolls)  # one id per multiset of rerolled faces


def test_two_of_three_cats_has_exactly_one_id() -> None:
    dice = (0, 2, 4, 4, 4, 5)
    ids = [a for a in _reroll_legal(dice) if a and [dice[i] for i in reroll_positions(a)] == [4, 4]]
    assert ids == [reroll_action([3, 4])]
    assert action_name(ids[0]) == "reroll dice 4,5"


def test_all_distinct_faces_allow_every_subset() -> None:
    assert _reroll_legal((0, 1, 2, 3, 4, 5)) == set(range(64))


def test_six_equal_dice_allow_six_suffixes() -> None:
    assert _reroll_legal((3,) * 6) == {0, 0b100000, 0b110000, 0b111000, 0b111100, 0b111110, 0b111111}


@pytest.mark.parametrize("bad", [3.0, True, np.True_, "3", None, 1.5])
def test_step_refuses_non_integer_action_ids(bad: object) -> None:
    from shelfie_env import Game, IllegalActionError

    game = Game.new(2, rng=0)
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match="integer id"):
        game.step(bad)  # type: ignore[arg-type]
    assert game.to_dict() == before
    assert "integer id" in game.why_illegal(bad)  # type: ignore[arg-type]
