"""One test (or a few) per clause of SPEC §1-5, on hand-built positions with scripted dice."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.game.actions import (
    CIRCLE_BASE,
    CROSS_BASE,
    END_TURN,
    STOP,
    SYMBOLS,
    circle_action,
    reroll_action,
)
from shelfie_env.game.engine import CIRCLE, CROSS, OVER, REROLL, Game, placed_shelves
from shelfie_env.game.errors import IllegalActionError

from .conftest import (
    BOOK,
    CAT,
    GAME,
    JOKER,
    PLANT,
    TROPHY,
    ScriptedDice,
    board,
    grid,
    make_game,
)

NEXT_ROLL = (0, 0, 1, 2, 3, 4)  # a harmless roll for the next player's turn


def cid(r: int, c: int, j: int = 0) -> int:
    return circle_action(r, c, j)


def legal(g: Game) -> set[int]:
    return set(g.legal_actions())


def circles_only(g: Game) -> set[int]:
    return {a for a in g.legal_actions() if 64 <= a <= 113}


# --------------------------------------------------------------------------- §1 components


def test_symbols_are_rows_in_spec_order() -> None:
    assert SYMBOLS == ("plant", "game", "book", "trophy", "cat")


@pytest.mark.parametrize("k", range(1, 6))
def test_column_c_needs_exactly_c_plus_1_dice_of_the_row_symbol(k: int) -> None:
    dice = [CAT] * k + [PLANT] * (6 - k)
    g = make_game(dice=dice)
    cat_cols = {c for c in range(5) if cid(CAT, c) in legal(g)}
    assert cat_cols == set(range(k))  # k cats reach items 1..k, never k+1
    assert not any(cid(CAT, c, 1) in legal(g) for c in range(5))  # no joker among the dice


def test_face_5_is_the_joker_and_adds_one_to_a_symbol_group() -> None:
    g = make_game(dice=[BOOK, BOOK, PLANT, PLANT, TROPHY, JOKER])
    assert cid(BOOK, 2, 1) in legal(g)  # 2 books + joker = book #3
    assert cid(BOOK, 2, 0) not in legal(g)
    assert cid(TROPHY, 1, 1) in legal(g)
    assert cid(CAT, 1, 1) not in legal(g)  # no cat at all: the joker cannot stand in alone


def test_default_points_table_is_1_2_3_5_8() -> None:
    g = Game.new(2, rng=0)
    assert g.points == tuple((1, 2, 3, 5, 8) for _ in range(5))
    assert g.to_dict()["points"] == [[1, 2, 3, 5, 8]] * 5


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_one_to_four_players(n: int) -> None:
    g = Game.new(n, rng=0)
    assert g.num_players == n and len(g.to_dict()["boards"]) == n
    assert g.current == 0 and g.phase == REROLL


@pytest.mark.parametrize("n", [0, 5, -1, 2.5, True])
def test_player_count_outside_1_to_4_is_refused(n: object) -> None:
    with pytest.raises(ValueError, match="num_players"):
        Game.new(n, rng=0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- §2 a turn


def test_turn_starts_with_six_dice_sorted_and_two_rerolls() -> None:
    rng = ScriptedDice([4, 0, 5, 2, 2, 1])
    g = Game.new(2, rng=rng)
    assert rng.calls == [[4, 0, 5, 2, 2, 1]]
    assert g.dice == [0, 1, 2, 2, 4, 5]
    assert g.rolls_left == 2 and g.phase == REROLL and g.current == 0
    assert g.spent == [False] * 6 and g.circles == 0


def test_reroll_rolls_exactly_the_chosen_dice_and_keeps_the_rest() -> None:
    rng = ScriptedDice([0, 1, 2, 3, 4, 5])
    g = Game.new(2, rng=rng)
    rng.push(4, 4)
    g.step(reroll_action([0, 3]))  # reroll the plant and the trophy
    assert rng.calls[-1] == [4, 4]
    assert g.dice == [1, 2, 4, 4, 4, 5]
    assert g.rolls_left == 1 and g.phase == REROLL


def test_reroll_may_include_dice_kept_before_and_phase_ends_after_second() -> None:
    rng = ScriptedDice([0, 0, 0, 0, 0, 0])
    g = Game.new(2, rng=rng)
    rng.push(4)
    g.step(reroll_action([5]))
    assert g.dice == [0, 0, 0, 0, 0, 4]
    rng.push(3, 3, 3, 3, 3, 3)
    g.step(reroll_action(range(6)))  # every die again, the one rerolled before included
    assert g.dice == [3] * 6
    assert g.rolls_left == 0 and g.phase == CIRCLE  # no third reroll: the phase ended by itself
    assert not any(1 <= a <= 63 for a in g.legal_actions()) and STOP not in legal(g)


def test_stop_keeps_all_dice_and_rolls_left_stays() -> None:
    rng = ScriptedDice([0, 1, 2, 3, 4, 4])
    g = Game.new(2, rng=rng)
    g.step(STOP)
    assert g.phase == CIRCLE and g.dice == [0, 1, 2, 3, 4, 4] and g.rolls_left == 2
    assert rng.remaining == 0 and len(rng.calls) == 1  # nothing rolled


def test_reroll_phase_legal_set_is_stop_plus_canonical_sets() -> None:
    g = make_game(phase="reroll", rolls_left=2, dice=[4, 4, 4, 5, 5, 0])  # -> [0,4,4,4,5,5]
    # 1 plant (2 choices) x 3 cats (4 choices) x 2 jokers (3 choices) - the empty set, plus stop.
    assert len(legal(g)) == 2 * 4 * 3 - 1 + 1
    two_of_three_cats = {
        a for a in legal(g) if 1 <= a <= 63 and [a >> i & 1 for i in range(6)] == [0, 0, 1, 1, 0, 0]
    }
    assert two_of_three_cats == {reroll_action([2, 3])}  # the highest positions of the cat group
    assert reroll_action([1, 2]) not in legal(g)
    assert circles_only(g) == set() and END_TURN not in legal(g)


def test_pink_example_three_cats_circle_cat_3() -> None:
    """Rule text: 3 pink (cat) dice circle the 3rd item of the cat row."""
    g = make_game(dice=[PLANT, GAME, BOOK, CAT, CAT, CAT], rolls=NEXT_ROLL)
    assert {cid(CAT, 0), cid(CAT, 1), cid(CAT, 2)} <= legal(g)
    assert cid(CAT, 3) not in legal(g)
    g.step(cid(CAT, 2))
    assert grid(g, 0)[CAT] == "..O.."
    assert g.spent == [False, False, False, True, True, True]
    assert not any(cid(CAT, c, j) in legal(g) for c in range(5) for j in (0, 1))
    assert g.phase == CIRCLE and cid(PLANT, 0) in legal(g)


def test_pink_example_one_die_first_item_two_dice_second_item() -> None:
    """Rule text: or 1 cat die circles the 1st item and the 2 others the 2nd."""
    g = make_game(dice=[PLANT, GAME, BOOK, CAT, CAT, CAT], rolls=NEXT_ROLL)
    g.step(cid(CAT, 0))
    assert g.phase == CIRCLE and g.counts[CAT] == 2
    assert cid(CAT, 1) in legal(g) and cid(CAT, 2) not in legal(g)
    g.step(cid(CAT, 1))
    assert grid(g, 0)[CAT] == "OO..."
    assert sum(g.spent) == 3 and g.circles == 2


def test_joker_example_two_jokers_two_cats_two_games() -> None:
    """Rule text: one joker with the 2 cats and one with the 2 games; never both jokers together,
    never a joker alone."""
    g = make_game(dice=[GAME, GAME, CAT, CAT, JOKER, JOKER], rolls=NEXT_ROLL)
    assert cid(CAT, 2, 1) in legal(g) and cid(GAME, 2, 1) in legal(g)
    assert cid(CAT, 3, 1) not in legal(g) and cid(GAME, 3, 1) not in legal(g)  # would need both jokers
    for r in range(5):
        assert cid(r, 0, 1) not in legal(g)  # a joker alone
    for r in (PLANT, BOOK, TROPHY):
        assert not any(cid(r, c, j) in legal(g) for c in range(5) for j in (0, 1))
    with pytest.raises(IllegalActionError, match="alone"):
        g.step(cid(PLANT, 0, 1))
    g.step(cid(CAT, 2, 1))
    assert g.phase == CIRCLE and g.counts[JOKER] == 1
    assert cid(GAME, 2, 1) in legal(g)
    g.step(cid(GAME, 2, 1))
    assert grid(g, 0)[GAME] == "..O.." and grid(g, 0)[CAT] == "..O.."
    # all dice spent: the turn ended by itself and the next player rolled
    assert g.current == 1 and g.phase == REROLL and g.dice == sorted(NEXT_ROLL)


def test_all_six_jokers_circle_any_one_free_cell_then_turn_ends() -> None:
    b0 = board("O....", ".X...", ".....", ".....", "....X")
    g = make_game(boards=[b0, board()], dice=[JOKER] * 6, rolls=NEXT_ROLL)
    free_cells = {(r, c) for r in range(5) for c in range(5) if b0[r][c] == 0}
    assert legal(g) == {cid(r, c, 1) for r, c in free_cells}  # j=1 everywhere, including item #1
    g.step(cid(TROPHY, 4, 1))  # the 5-dice item, with "six jokers"
    assert grid(g, 0)[TROPHY] == "....O"
    assert g.current == 1 and g.phase == REROLL  # only one circle: the turn ended


def test_all_six_jokers_after_rerolls() -> None:
    rng = ScriptedDice([0, 1, 2, 3, 4, 5])
    g = Game.new(2, rng=rng)
    rng.push(5, 5, 5, 5, 5)
    g.step(reroll_action([0, 1, 2, 3, 4]))
    g.step(STOP)
    assert g.dice == [5] * 6 and g.phase == CIRCLE
    assert len(legal(g)) == 25


def test_five_jokers_and_one_symbol_follow_the_normal_rule() -> None:
    g = make_game(dice=[BOOK, JOKER, JOKER, JOKER, JOKER, JOKER])
    assert circles_only(g) == {cid(BOOK, 0), cid(BOOK, 1, 1)}


def test_circling_is_mandatory_when_possible() -> None:
    g = make_game(dice=[PLANT, PLANT, PLANT, PLANT, PLANT, PLANT])
    assert legal(g) == {cid(PLANT, c) for c in range(5)}
    for a in [END_TURN] + [CROSS_BASE + r for r in range(5)]:
        with pytest.raises(IllegalActionError):
            g.step(a)


def test_unable_to_circle_must_cross_a_row_with_a_free_cell() -> None:
    b0 = board("OX...", "XXXXX", ".....", ".....", ".....")
    g = make_game(
        boards=[b0, board()], phase="reroll", rolls_left=1, rolls=[PLANT, PLANT, GAME, GAME, GAME, GAME]
    )
    g.step(reroll_action(range(6)))
    # plant #1 circled, plant #2 crossed, game row dead: nothing circleable
    assert g.phase == CROSS
    assert legal(g) == {CROSS_BASE + r for r in (PLANT, BOOK, TROPHY, CAT)}  # not the full game row


def test_cross_out_keeps_circled_cells_and_their_points_then_turn_ends() -> None:
    b0 = board("OOOOX", ".....", "OOO.X", ".....", ".....")
    g = make_game(boards=[b0, board()], phase="cross", dice=[0, 0, 0, 0, 0, 0], rolls=NEXT_ROLL)
    before = g.score(0)
    assert before == (1 + 2 + 3 + 5) + (1 + 2 + 3)  # two rows; no column has 3 circles
    g.step(CROSS_BASE + BOOK)
    assert grid(g, 0)[BOOK] == "OOOXX"
    assert g.circled[0] & g.crossed[0] == 0
    assert g.score(0) == before
    assert g.current == 1 and g.phase == REROLL


def test_at_most_three_circles_then_turn_ends() -> None:
    g = make_game(dice=[PLANT, GAME, BOOK, TROPHY, CAT, CAT], rolls=NEXT_ROLL)
    for a in (cid(PLANT, 0), cid(GAME, 0), cid(BOOK, 0)):
        assert g.current == 0 and g.phase == CIRCLE
        g.step(a)
    # trophy #1 and cat #1/#2 were still possible, but three circles end the turn
    assert g.current == 1 and g.phase == REROLL
    assert grid(g, 0)[:3] == ["O....", "O....", "O...."]


def test_end_turn_only_after_a_circle_and_while_another_is_possible() -> None:
    g = make_game(dice=[PLANT, GAME, BOOK, TROPHY, TROPHY, TROPHY], rolls=NEXT_ROLL)
    assert END_TURN not in legal(g)
    with pytest.raises(IllegalActionError, match="at least one"):
        g.step(END_TURN)
    g.step(cid(TROPHY, 2))
    assert END_TURN in legal(g)
    g.step(END_TURN)
    assert g.current == 1 and g.phase == REROLL
    assert grid(g, 0)[TROPHY] == "..O.."


def test_turn_ends_by_itself_when_no_further_circle_is_possible() -> None:
    b0 = board("O....", "O....", "O....", ".....", ".....")
    g = make_game(boards=[b0, board()], dice=[PLANT, GAME, BOOK, CAT, CAT, JOKER], rolls=NEXT_ROLL)
    assert circles_only(g) == {
        cid(PLANT, 1, 1),
        cid(GAME, 1, 1),
        cid(BOOK, 1, 1),
        cid(CAT, 0),
        cid(CAT, 1),
        cid(CAT, 1, 1),
        cid(CAT, 2, 1),
    }
    g.step(cid(CAT, 2, 1))  # spends both cats and the joker; plant/game/book #1 are taken
    assert g.current == 1 and g.phase == REROLL


def test_next_player_is_next_seat_and_wraps() -> None:
    g = make_game(boards=[board(), board(), board()], current=2, dice=[CAT] * 6, rolls=NEXT_ROLL)
    g.step(cid(CAT, 0))
    g.step(END_TURN)
    assert g.current == 0 and g.phase == REROLL and g.rolls_left == 2 and g.circles == 0
    assert g.dice == sorted(NEXT_ROLL) and g.spent == [False] * 6


# --------------------------------------------------------------------------- §3 lockout


def test_lockout_of_a_row_crosses_only_rivals_non_circled_cells() -> None:
    p0 = board(".....", ".....", ".....", ".....", "OOOO.")
    p1 = board(".....", ".....", ".....", ".....", "O.X..")
    p2 = board(".....", ".....", ".....", ".....", ".OO..")
    g = make_game(boards=[p0, p1, p2], dice=[CAT] * 5 + [PLANT])
    g.step(cid(CAT, 4))
    assert grid(g, 0)[CAT] == "OOOOO"
    assert grid(g, 1)[CAT] == "OXXXX"
    assert grid(g, 2)[CAT] == "XOOXX"
    assert all(g.circled[p] & g.crossed[p] == 0 for p in range(3))
    assert grid(g, 1)[:4] == ["....."] * 4 and grid(g, 2)[:4] == ["....."] * 4
    assert g.score(1) == 0 and g.score(2) == 0  # 1-2 circles in the row: nothing


def test_lockout_of_a_column() -> None:
    p0 = board("O....", "O....", "O....", "O....", ".....")
    p1 = board("O....", ".....", "X....", ".....", ".....")
    g = make_game(boards=[p0, p1], dice=[CAT, PLANT, PLANT, GAME, BOOK, TROPHY], rolls=NEXT_ROLL)
    g.step(cid(CAT, 0))
    assert [row[0] for row in grid(g, 1)] == list("OXXXX")
    assert all(row[1:] == "...." for row in grid(g, 1))
    assert g.current == 0  # lockout happens inside the active turn; more circles are still possible


def test_lockout_of_a_row_and_a_column_by_one_circle() -> None:
    p0 = board("....O", "....O", "....O", "....O", "OOOO.")
    p1 = board(".....", "....O", ".....", ".....", ".O...")
    g = make_game(boards=[p0, p1], dice=[CAT, CAT, CAT, CAT, CAT, PLANT])
    g.step(cid(CAT, 4))
    assert grid(g, 1) == ["....X", "....O", "....X", "....X", "XOXXX"]


def test_lockout_does_not_touch_the_active_player_or_happen_in_solo() -> None:
    p0 = board(".....", ".....", ".....", ".....", "OOOO.")
    g = make_game(boards=[p0], dice=[CAT] * 5 + [PLANT])
    g.step(cid(CAT, 4))
    assert grid(g, 0) == [".....", ".....", ".....", ".....", "OOOOO"]


# --------------------------------------------------------------------------- §4 end of game


def test_two_rows_without_free_cell_mixture_triggers_the_end() -> None:
    p0 = board("OXOXO", ".....", ".....", ".....", "OOO.X")
    g = make_game(boards=[p0, board()], dice=[CAT, CAT, CAT, CAT, PLANT, GAME], rolls=NEXT_ROLL)
    assert not g.end_triggered
    g.step(cid(CAT, 3))
    assert g.end_triggered
    assert g.current == 0 and g.phase == CIRCLE  # the triggering turn goes on


def test_one_full_row_does_not_trigger() -> None:
    p0 = board("XXXXX", ".....", ".....", ".....", "OOO..")
    g = make_game(boards=[p0, board()], dice=[CAT, CAT, CAT, CAT, PLANT, GAME], rolls=NEXT_ROLL)
    g.step(cid(CAT, 3))
    assert not g.end_triggered


def test_end_triggered_by_lockout_of_another_player() -> None:
    p0 = board(".....", ".....", ".....", ".....", "OOOO.")
    p1 = board(".....", ".....", "XXXXX", ".....", "..O..")
    g = make_game(boards=[p0, p1], dice=[CAT] * 5 + [PLANT], rolls=NEXT_ROLL)
    g.step(cid(CAT, 4))
    assert grid(g, 1)[CAT] == "XXOXX"
    assert g.end_triggered  # player 1 now has two rows without a free cell


def test_end_triggered_by_a_cross_out() -> None:
    p0 = board("XXXXX", ".....", ".....", ".....", ".O...")  # six plants: the plant row is dead
    g = make_game(boards=[p0, board()], phase="cross", dice=[PLANT] * 6, rolls=NEXT_ROLL)
    assert not g.end_triggered
    g.step(CROSS_BASE + BOOK)
    assert g.end_triggered and g.phase == REROLL and g.current == 1  # seat 1 still plays


def _trigger_game(seat: int, n: int = 3) -> tuple[Game, ScriptedDice]:
    """Seat ``seat`` is on turn with six cats and cat #5 open, one dead row: circling it triggers."""
    boards = [board() for _ in range(n)]
    boards[seat] = board("XXXXX", ".....", ".....", ".....", "OOOO.")
    g = make_game(boards=boards, current=seat, dice=[CAT] * 5 + [BOOK])
    assert isinstance(g.rng, ScriptedDice)
    return g, g.rng


def test_trigger_in_seat_0_of_3_lets_seats_1_and_2_play() -> None:
    g, rng = _trigger_game(0)
    rng.push(*[PLANT] * 6)
    g.step(cid(CAT, 4))
    assert g.end_triggered and g.current == 0 and g.phase == CIRCLE  # book #1 still possible
    g.step(END_TURN)
    assert g.current == 1 and g.phase == REROLL
    g.step(STOP)
    g.step(cid(PLANT, 4))  # five plants; the sixth keeps plant #1 open
    assert g.current == 1 and g.phase == CIRCLE
    rng.push(*[GAME] * 6)
    g.step(END_TURN)
    assert g.current == 2 and g.phase == REROLL and not g.over
    g.step(STOP)
    g.step(cid(GAME, 4))
    g.step(END_TURN)
    assert g.over and g.phase == OVER and g.legal_actions() == ()
    assert rng.remaining == 0 and len(rng.calls) == 2  # no roll after the last seat


def test_trigger_in_seat_1_of_3_lets_only_seat_2_play() -> None:
    g, rng = _trigger_game(1)
    g.step(cid(CAT, 4))
    rng.push(*[GAME] * 6)
    g.step(END_TURN)
    assert g.current == 2 and not g.over
    g.step(STOP)
    g.step(cid(GAME, 0))
    g.step(END_TURN)
    assert g.over


def test_trigger_in_last_seat_ends_with_that_turn() -> None:
    g, rng = _trigger_game(2)
    g.step(cid(CAT, 4))
    assert not g.over  # the triggering turn is played to its end
    g.step(cid(BOOK, 0))  # last die: the turn ends by itself, and so does the game
    assert g.over and g.phase == OVER
    assert rng.calls == []
    assert g.legal_mask().sum() == 0
    with pytest.raises(IllegalActionError, match="over"):
        g.step(STOP)


def test_solo_game_ends_with_the_triggering_turn() -> None:
    g, rng = _trigger_game(0, n=1)
    g.step(cid(CAT, 4))
    g.step(END_TURN)
    assert g.over and rng.calls == []


def test_player_with_no_free_cell_passes_but_the_round_still_counts() -> None:
    full = board("OOXXX", "XXXXX", "XXXXX", "XXXXX", "XXXXX")
    b0 = board("XXXXX")
    rng = ScriptedDice([GAME] * 6)
    g = Game.from_dict(
        make_game(boards=[b0, full, board()], phase="cross", dice=[PLANT] * 6).to_dict(), rng=rng
    )
    assert g.end_triggered
    g.step(CROSS_BASE + CAT)
    assert g.current == 2 and g.phase == REROLL  # seat 1 passed, one roll only (for seat 2)
    assert rng.calls == [[GAME] * 6]
    g.step(STOP)
    g.step(cid(GAME, 4))
    assert g.phase == CIRCLE
    g.step(END_TURN)
    assert g.over


def test_last_seat_without_free_cell_ends_the_round_immediately() -> None:
    full = board("OOXXX", "XXXXX", "XXXXX", "XXXXX", "XXXXX")
    g = make_game(boards=[board(), board("XXXXX"), full], current=1, phase="cross", dice=[PLANT] * 6)
    g.step(CROSS_BASE + CAT)
    assert g.over and g.current == 2 and g.rng.calls == []  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- §5 scoring


def test_row_scores_with_three_circles_and_not_with_two() -> None:
    g = make_game(boards=[board(".....", "O.O.O"), board("OO...")])
    assert g.score(0) == 1 + 3 + 8 and g.score(1) == 0


def test_column_scores_and_a_cell_scores_in_both_lines() -> None:
    g = make_game(boards=[board("OOO..", "O....", "O....", ".....", "....."), board()])
    assert g.score(0) == (1 + 2 + 3) + (1 + 1 + 1)
    assert g.table.breakdown(g.circled[0]) == {"rows": [6, 0, 0, 0, 0], "cols": [3, 0, 0, 0, 0]}


def test_crossed_cells_never_score() -> None:
    g = make_game(boards=[board("OOOXX", "OOXXX"), board()])
    assert g.score(0) == 1 + 2 + 3  # crossed cells neither add points nor count towards the 3


def test_full_board_score() -> None:
    full = [[1] * 5 for _ in range(5)]
    g = make_game(boards=[full, [[2] * 5 for _ in range(5)]], phase="over", end_triggered=True)
    assert g.score(0) == 2 * 5 * 19  # every row 19 and the columns 5,10,15,25,40


def test_custom_points_table_is_used() -> None:
    pts = [[10 * r + c for c in range(5)] for r in range(5)]
    g = make_game(boards=[board("OOO..", "O....", "O....", ".....", "....O"), board()], points=pts)
    assert g.points == tuple(tuple(row) for row in pts)
    assert g.score(0) == (0 + 1 + 2) + (0 + 10 + 20)
    assert Game.new(2, points=pts, rng=0).to_dict()["points"] == pts


@pytest.mark.parametrize(
    "pts",
    [
        [[1, 2, 3, 5, 8]] * 4,
        [[1, 2, 3, 5, -8]] * 5,
        [[1, 2, 3, 5, 8.5]] * 5,
        [[1, 2, 3, 5, "8"]] * 5,  # regression: a string raised TypeError instead of ValueError
        [[1, 2, 3, 5, None]] * 5,
        [[1, 2, 3, 5, float("inf")]] * 5,
        5,
    ],
)
def test_invalid_points_table_is_refused(pts: object) -> None:
    with pytest.raises(ValueError, match="points"):
        Game.new(2, points=pts, rng=0)  # type: ignore[arg-type]


def test_numpy_points_table_is_accepted() -> None:
    g = Game.new(2, points=np.arange(25).reshape(5, 5), rng=0)
    assert g.points[4] == (20, 21, 22, 23, 24)


def test_ties_share_the_victory_scores_equal() -> None:
    b = board("OOO..", ".....", ".....", ".....", ".....")
    c = board(".....", ".....", "O.O.O", ".....", ".....")  # 1+3+8 = 12 vs 1+2+3 = 6
    g = make_game(boards=[b, b, c], phase="reroll", rolls_left=2)
    s = g.scores()
    assert s[0] == s[1] == 6 and s[2] == 12
    g = make_game(boards=[b, b], phase="reroll", rolls_left=2)
    assert g.scores() == [6, 6]
    from shelfie_env.envs.common import final_rewards  # the SPEC §6 rank reward: a tie is not a loss

    assert final_rewards([6, 6], "rank") == [0.0, 0.0]
    assert final_rewards([6, 6, 12], "rank") == [-0.5, -0.5, 1.0]
    assert final_rewards([12, 12, 6], "rank") == [0.5, 0.5, -1.0]


def test_solo_game_plays_to_the_end() -> None:
    g = Game.new(1, rng=np.random.default_rng(3))
    rnd = np.random.default_rng(4)
    steps = 0
    while not g.over:
        acts = g.legal_actions()
        assert acts and g.current == 0
        g.step(int(rnd.choice(acts)))
        steps += 1
        assert steps < 2000
    assert g.end_triggered and g.legal_actions() == ()
    assert sum(all(v != 0 for v in row) for row in g.board(0)) >= 2


def test_stop_with_nothing_circleable_goes_to_the_cross_phase() -> None:
    b0 = board("XXXXX")
    g = make_game(boards=[b0, board()], phase="reroll", rolls_left=2, dice=[PLANT] * 6)
    g.step(STOP)
    assert g.phase == CROSS and g.rolls_left == 2 and g.rng.calls == []  # type: ignore[attr-defined]
    assert legal(g) == {CROSS_BASE + r for r in (GAME, BOOK, TROPHY, CAT)}


def test_trigger_in_seat_0_with_seat_1_full_lets_seat_2_play() -> None:
    full = board("OOXXX", "XXXXX", "XXXXX", "XXXXX", "XXXXX")
    g = make_game(boards=[board("XXXXX"), full, board()], phase="cross", dice=[PLANT] * 6, rolls=[CAT] * 6)
    g.step(CROSS_BASE + GAME)
    assert g.current == 2 and not g.over
    g.step(STOP)
    g.step(cid(CAT, 4))
    g.step(END_TURN)
    assert g.over


def test_rules_modules_import_no_rl_framework() -> None:
    """SPEC/issue: the rules package is pure Python + numpy (no gymnasium, pettingzoo or torch)."""
    import ast
    import sys
    from pathlib import Path

    import shelfie_env.game

    files = sorted(Path(shelfie_env.game.__file__).parent.glob("*.py"))
    assert {f.stem for f in files} >= {"engine", "actions", "scoring", "tables", "state_validation", "errors"}
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.module and not node.level, (path.name, "relative import")
                mods = [node.module]
            for m in mods:
                top = m.split(".")[0]
                inside = m == "shelfie_env.game" or m.startswith("shelfie_env.game.")
                assert inside or top in sys.stdlib_module_names or top == "numpy", (path.name, m)


def test_importing_the_package_loads_no_training_framework() -> None:
    """``import shelfie_env`` (and the rules, and the learned bot) never pulls torch or SB3 in."""
    import subprocess
    import sys

    code = (
        "import sys, shelfie_env, shelfie_env.game, shelfie_env.engine\n"
        "from shelfie_env import bots\n"
        "bots.make('ppo', num_players=2).act(shelfie_env.Game.new(2, rng=0).to_dict())\n"
        "heavy = sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'fastapi', 'numba') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", out.stdout


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_placed_shelves_equal_the_shelves_the_engine_leaves_at_every_turn_end(players: int) -> None:
    rng = np.random.default_rng(players)
    turns = 0
    for seed in range(25):
        g = Game(players, rng=seed)
        mover, circled, crossed = g.current, list(g.circled), list(g.crossed)
        while not g.over:
            action = int(rng.choice(g.legal_actions()))
            g.step(action)
            if action < CIRCLE_BASE or g.phase not in (REROLL, OVER):
                continue  # a reroll, or a circle with more to come: the turn goes on
            row = action - CROSS_BASE if action >= CROSS_BASE else None
            cells = g.circled[mover] & ~circled[mover]
            assert placed_shelves(circled, crossed, mover, cells, row) == (g.circled, g.crossed)
            turns += 1
            mover, circled, crossed = g.current, list(g.circled), list(g.crossed)
    assert turns > 25 * players * 5
