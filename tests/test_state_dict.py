"""SPEC §6 state dicts: round-trips, refused states (naming the field) and illegal-action errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from shelfie_env.game.actions import CROSS_BASE, END_TURN, STOP, action_name, circle_action, reroll_action
from shelfie_env.game.engine import Game
from shelfie_env.game.errors import IllegalActionError, InvalidStateError

from .conftest import (
    BOOK,
    CAT,
    GAME,
    JOKER,
    PLANT,
    SPEC_KEYS,
    TROPHY,
    ScriptedDice,
    board,
    make_game,
    make_state,
)

# --------------------------------------------------------------------------- round trips


def test_new_game_dict_has_the_spec_shape() -> None:
    d = Game.new(3, rng=5).to_dict()
    assert SPEC_KEYS <= set(d)
    assert d["num_players"] == 3 and d["current_player"] == 0 and d["phase"] == "reroll"
    assert d["boards"] == [[[0] * 5 for _ in range(5)] for _ in range(3)]
    assert d["dice"] == sorted(d["dice"]) and len(d["dice"]) == 6 and all(0 <= v <= 5 for v in d["dice"])
    assert d["spent"] == [False] * 6 and d["rolls_left"] == 2 and d["circles_this_turn"] == 0
    assert d["end_triggered"] is False
    assert json.loads(json.dumps(d)) == d


def test_round_trip_mid_turn_and_same_future_with_same_dice() -> None:
    g = make_game(
        boards=[board("O....", ".X...", "..XXX"), board("....O")],
        dice=[GAME, GAME, CAT, CAT, JOKER, JOKER],
    )
    g.step(circle_action(CAT, 2, 1))
    d = g.to_dict()
    assert d["circles_this_turn"] == 1 and d["spent"] == [False, False, True, True, True, False]
    h = Game.from_dict(json.loads(json.dumps(d)))
    assert h.to_dict() == d
    assert h.legal_actions() == g.legal_actions()
    g.rng, h.rng = ScriptedDice([1, 2, 3, 4, 5, 0]), ScriptedDice([1, 2, 3, 4, 5, 0])
    g.step(END_TURN)
    h.step(END_TURN)
    assert g.to_dict() == h.to_dict()


@pytest.mark.parametrize("phase", ["reroll", "circle", "cross", "over"])
def test_every_phase_round_trips(phase: str) -> None:
    kw: dict[str, Any] = {"phase": phase}
    if phase == "reroll":
        kw["rolls_left"] = 1
    if phase == "cross":
        kw.update(boards=[board("XXXXX"), board()], dice=[PLANT] * 6)
    if phase == "over":
        kw.update(boards=[board("XXXXX", "XXXXX"), board()], end_triggered=True, current=1)
    d = {**make_state(**kw), "round": 3}
    assert {k: v for k, v in Game.from_dict(d).to_dict().items() if k != "scores"} == d


def test_extra_keys_are_allowed_and_scores_key_is_ignored_on_input() -> None:
    d = make_state()
    d["scores"] = [999, 999]
    d["note"] = "anything"
    assert Game.from_dict(d).scores() == [0, 0]


def test_numpy_values_are_accepted() -> None:
    """Regression: numpy 2 bools (``np.bool``) in ``spent`` were refused."""
    d = make_state(
        dice=[GAME, GAME, CAT, CAT, JOKER, JOKER], circles=1, boards=[board("", "", "", "", "..O.."), board()]
    )
    d["spent"] = np.array([False, False, True, True, True, False])
    d["dice"] = np.array(d["dice"], dtype=np.int64)
    d["boards"] = np.array(d["boards"], dtype=np.int8)
    d["num_players"] = np.int64(2)
    d["end_triggered"] = np.False_
    d["points"] = np.array(d["points"])
    g = Game.from_dict(d)
    assert g.spent == [False, False, True, True, True, False] and g.counts[JOKER] == 1


def test_spent_positions_within_a_face_do_not_matter() -> None:
    d = make_state(
        dice=[CAT, CAT, CAT, PLANT, GAME, BOOK], circles=1, boards=[board("", "", "", "", "O...."), board()]
    )
    d["spent"] = [
        False,
        False,
        False,
        False,
        False,
        True,
    ]  # dice sorted: [0,1,2,4,4,4]; the last cat was used
    g = Game.from_dict(d)
    assert g.counts[CAT] == 2
    assert circle_action(CAT, 1) in g.legal_actions() and circle_action(CAT, 2) not in g.legal_actions()


# --------------------------------------------------------------------------- malformed / impossible states


def _refused(state: Any, field: str) -> InvalidStateError:
    with pytest.raises(InvalidStateError) as info:
        Game.from_dict(state)
    assert info.value.field == field, str(info.value)
    assert field in str(info.value)
    assert isinstance(info.value, ValueError)
    return info.value


def _with(**changes: Any) -> dict[str, Any]:
    d = make_state()
    d.update(copy.deepcopy(changes))
    return d


@pytest.mark.parametrize("key", sorted(SPEC_KEYS))
def test_missing_key_is_named(key: str) -> None:
    d = make_state()
    del d[key]
    assert "missing" in str(_refused(d, key))


def test_not_a_dict() -> None:
    _refused([1, 2, 3], "state")
    _refused("state", "state")


@pytest.mark.parametrize(
    "field,value",
    [
        ("num_players", 0),
        ("num_players", 5),
        ("num_players", "2"),
        ("num_players", 2.0),
        ("num_players", True),
        ("points", [[1, 2, 3, 5, 8]] * 4),
        ("points", [[1, 2, 3, 5]] * 5),
        ("points", [[1, 2, 3, 5, -1]] * 5),
        ("points", [[1, 2, 3, 5, "x"]] * 5),
        ("points", [[1, 2, 3, 5, 8.5]] * 5),
        ("points", None),
        ("boards", [[[0] * 5 for _ in range(5)]]),  # one board for two players
        ("boards", "....."),
        ("current_player", 2),
        ("current_player", -1),
        ("current_player", None),
        ("phase", "rolling"),
        ("phase", 1),
        ("dice", [0, 1, 2, 3, 4]),
        ("dice", [0, 1, 2, 3, 4, 6]),
        ("dice", [-1, 1, 2, 3, 4, 5]),
        ("dice", [5, 4, 3, 2, 1, 0]),
        ("dice", [0, 1, 2, 3, 4, 4.0]),
        ("dice", [0, 1, 2, 3, 4, True]),
        ("spent", [False] * 5),
        ("spent", [0, 0, 0, 0, 0, 0]),
        ("spent", "no"),
        ("rolls_left", 3),
        ("rolls_left", -1),
        ("rolls_left", 1.5),
        ("circles_this_turn", 4),
        ("circles_this_turn", -1),
        ("end_triggered", 0),
        ("end_triggered", "false"),
    ],
)
def test_malformed_field_is_named(field: str, value: Any) -> None:
    _refused(_with(**{field: value}), field)


@pytest.mark.parametrize("cell", [3, -1, "O", None, True, 1.5])
def test_bad_board_cell_is_named(cell: Any) -> None:
    d = make_state()
    d["boards"][1][2][3] = cell
    err = _refused(d, "boards")
    assert "boards[1][2][3]" in str(err)


def test_board_with_wrong_row_count_is_named() -> None:
    d = make_state()
    d["boards"][0] = d["boards"][0][:4]
    assert "boards[0]" in str(_refused(d, "boards[0]"))


def test_reroll_phase_impossibilities() -> None:
    _refused(make_state(phase="reroll", rolls_left=0), "rolls_left")
    _refused(
        make_state(phase="reroll", rolls_left=2, circles=1, boards=[board("O"), board()]), "circles_this_turn"
    )
    _refused(make_state(phase="reroll", rolls_left=2, spent=[True] + [False] * 5), "spent")


def test_cross_phase_impossibilities() -> None:
    base = {"boards": [board("XXXXX"), board()], "dice": [PLANT] * 6, "phase": "cross"}
    _refused(make_state(**base, circles=1), "circles_this_turn")
    _refused(make_state(**base, spent=[True] + [False] * 5), "spent")
    _refused(
        make_state(boards=[board(), board()], dice=[PLANT] * 6, phase="cross"), "phase"
    )  # plant #1 is open


def test_circle_phase_impossibilities() -> None:
    _refused(make_state(circles=3, boards=[board("O", "O", "O"), board()]), "circles_this_turn")
    _refused(make_state(spent=[True] + [False] * 5), "spent")  # spent dice without a circle
    # nothing circleable in a circle phase
    _refused(make_state(boards=[board("XXXXX"), board()], dice=[PLANT] * 6), "phase")
    # six jokers after a circle must all be spent
    _refused(
        make_state(dice=[JOKER] * 6, circles=1, spent=[True] + [False] * 5, boards=[board("O"), board()]),
        "spent",
    )


def test_spent_dice_must_form_the_groups_of_the_circles_made() -> None:
    """Regression: spent dice that no sequence of circles can produce were accepted."""
    dice = [GAME, GAME, CAT, CAT, JOKER, JOKER]
    b = [board("", "", "", "", "..O.."), board()]
    ok = make_state(dice=dice, circles=1, spent=[False, False, True, True, True, False], boards=b)
    Game.from_dict(ok)  # cat #3 with a joker
    # a joker alone
    _refused(make_state(dice=dice, circles=1, spent=[False] * 4 + [True, False], boards=b), "spent")
    # two jokers in one group
    _refused(
        make_state(dice=dice, circles=1, spent=[False, False, True, True, True, True], boards=b), "spent"
    )
    # two symbols in one group
    _refused(
        make_state(dice=dice, circles=1, spent=[True, False, True, False, False, False], boards=b), "spent"
    )
    # the group's item (cat #2 for two cats) is not circled on the board
    _refused(
        make_state(dice=dice, circles=1, spent=[False, False, True, True, False, False], boards=b), "spent"
    )
    # two circles: cat #3 +joker and game #1
    b2 = [board("", "O....", "", "", "..O.."), board()]
    Game.from_dict(make_state(dice=dice, circles=2, spent=[True, False, True, True, True, False], boards=b2))
    # ... but more circles than groups of spent dice is impossible
    _refused(
        make_state(dice=dice, circles=2, spent=[False, False, True, True, True, False], boards=b2), "spent"
    )


def test_current_player_without_free_cell_cannot_be_on_turn() -> None:
    full = [[2] * 5 for _ in range(5)]
    _refused(make_state(boards=[full, board()], phase="reroll", rolls_left=2), "current_player")


def test_end_triggered_must_match_the_boards() -> None:
    _refused(make_state(end_triggered=True), "end_triggered")
    _refused(make_state(boards=[board("XXXXX", "XXXXX"), board()], end_triggered=False), "end_triggered")
    _refused(make_state(phase="over", end_triggered=False), "end_triggered")


def test_lockout_must_have_happened() -> None:
    _refused(make_state(boards=[board("", "", "", "", "OOOOO"), board()]), "boards")
    _refused(
        make_state(boards=[[[1 if c == 2 else 0 for c in range(5)] for _ in range(5)], board()]), "boards"
    )
    Game.from_dict(make_state(boards=[board("", "", "", "", "OOOOO"), board("", "", "", "", "XOXXX")]))


# --------------------------------------------------------------------------- illegal actions


def _illegal(g: Game, action: Any, *words: str) -> IllegalActionError:
    before = g.to_dict()
    with pytest.raises(IllegalActionError) as info:
        g.step(action)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.action == action
    assert err.reason and err.reason in str(err)
    for w in words:
        assert w in str(err), str(err)
    assert g.to_dict() == before  # an illegal action changes nothing
    return err


def test_illegal_action_names_the_action_and_reason() -> None:
    g = make_game(dice=[GAME, GAME, CAT, CAT, JOKER, JOKER])
    err = _illegal(g, circle_action(CAT, 3, 1), "circle cat #4 +joker", "needs 3")
    assert err.action == circle_action(CAT, 3, 1)
    _illegal(g, circle_action(PLANT, 0, 1), "circle plant #1 +joker", "alone")
    _illegal(g, circle_action(BOOK, 0), "circle book #1")
    _illegal(g, STOP, "stop rolling", "circle phase")
    _illegal(g, reroll_action([0]), "reroll dice 1", "circle phase")
    _illegal(g, CROSS_BASE + TROPHY, "cross out trophies")
    _illegal(g, END_TURN, "end turn", "at least one")


def test_illegal_circle_on_taken_cells() -> None:
    g = make_game(boards=[board("OX..."), board()], dice=[PLANT, PLANT, PLANT, PLANT, GAME, BOOK])
    _illegal(g, circle_action(PLANT, 0), "already circled")
    _illegal(g, circle_action(PLANT, 1), "crossed")


def test_illegal_reroll_names_canonical_rule() -> None:
    g = make_game(phase="reroll", rolls_left=2, dice=[CAT, CAT, CAT, PLANT, PLANT, GAME], rolls=[BOOK])
    _illegal(g, reroll_action([3]), "reroll dice 4", "canonical")
    _illegal(g, circle_action(CAT, 2), "reroll phase")
    g.step(reroll_action([5]))  # the canonical "one of the cats" (sorted dice [0,0,1,4,4,4])
    assert g.dice == [PLANT, PLANT, GAME, BOOK, CAT, CAT]


def test_illegal_end_turn_after_everything_spent_is_not_reachable_and_cross_needs_free_row() -> None:
    g = make_game(boards=[board("XXXXX"), board()], phase="cross", dice=[PLANT] * 6)
    _illegal(g, CROSS_BASE + PLANT, "cross out plants", "no free cell")
    _illegal(g, circle_action(PLANT, 0), "cross phase")


@pytest.mark.parametrize("bad", [-1, 120, 10**9, "3", None, 3.5, True])
def test_non_action_values_are_refused(bad: Any) -> None:
    g = Game.new(2, rng=0)
    _illegal(g, bad)


def test_numpy_integer_action_is_accepted() -> None:
    g = Game.new(2, rng=0)
    g.step(np.int64(STOP))
    assert g.phase_name in ("circle", "cross")


def test_actions_after_game_over_are_refused() -> None:
    g = make_game(boards=[board("XXXXX", "XXXXX"), board()], phase="over", end_triggered=True, current=1)
    assert g.legal_actions() == () and g.over
    for a in (STOP, circle_action(PLANT, 0), END_TURN, CROSS_BASE):
        _illegal(g, a, "over")
    assert g.why_illegal(STOP) == "the game is over"


def test_action_name_of_error_matches_action_name() -> None:
    g = Game.new(2, rng=0)
    for a in range(64, 120):
        err = _illegal(g, a)
        assert action_name(a) in str(err)
