"""The name helpers of ``shelfie_env.game`` that the bots and the play room share."""

from __future__ import annotations

import numpy as np

from shelfie_env.game.actions import FACE_NAMES, action_name, action_name_or_id, circle_action
from shelfie_env.game.render import dice_words
from shelfie_env.game.scoring import shelf_cells


def test_an_action_is_named_and_anything_else_shown_as_it_is() -> None:
    a = circle_action(4, 2, 1)
    assert action_name_or_id(a) == action_name(a) == "circle cat #3 +joker"
    assert action_name_or_id(np.int64(a)) == action_name(a)
    assert [action_name_or_id(x) for x in (120, -1, "cat", 2.0, True)] == ["120", "-1", "cat", "2.0", "True"]


def test_dice_are_named_face_by_face_in_order() -> None:
    assert dice_words([0, 0, 4, 5]) == "plant plant cat joker"
    assert dice_words(range(6)) == " ".join(FACE_NAMES)
    assert dice_words([]) == ""


def test_the_cells_of_a_shelf_mask_are_row_and_column_in_bit_order() -> None:
    assert shelf_cells(0) == []
    assert shelf_cells(1 << (5 * 4 + 2) | 1 << 1) == [(0, 1), (4, 2)]
    assert len(shelf_cells((1 << 25) - 1)) == 25
