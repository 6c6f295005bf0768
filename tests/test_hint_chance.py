"""The chance a reroll hint quotes: exact, over the dice it rolls, that the dice after the
roll can circle the cell it aims for (checked here by enumerating every roll through the rules)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product

import pytest

from shelfie_env.bots.planner.dice import circle_chance
from shelfie_env.bots.planner.hint import hint
from shelfie_env.game.actions import JOKER, NUM_DICE, circle_action
from shelfie_env.game.engine import Game

from .conftest import board, make_state

BOOK, CAT, PLANT, GAME = 2, 4, 0, 1


def _counts(faces: list[int]) -> tuple[int, ...]:
    out = [0] * 6
    for f in faces:
        out[f] += 1
    return tuple(out)


def enumerated_chance(kept: list[int], row: int, col: int) -> Fraction:
    """P(the dice can circle (row, col)) after rolling the other dice, by the engine's own legality."""
    rolled = NUM_DICE - len(kept)
    outcomes = Counter(tuple(sorted(kept + list(t))) for t in product(range(6), repeat=rolled))
    wins = 0
    for dice, ways in outcomes.items():
        game = Game.from_dict(make_state(dice=list(dice)))
        legal = game.legal_actions()
        if circle_action(row, col, False) in legal or circle_action(row, col, True) in legal:
            wins += ways
    return Fraction(wins, 6**rolled)


@pytest.mark.parametrize(
    ("kept", "row", "col"),
    [
        ([BOOK, JOKER], BOOK, 2),  # 1 - (5/6)^4: one more book among four dice
        ([BOOK, BOOK], BOOK, 2),  # one more book or a joker among four
        ([CAT], CAT, 4),  # five cats, or four and a joker, from five dice
        ([JOKER, JOKER], PLANT, 4),  # includes six jokers, which circle any cell
        ([], GAME, 0),  # six fresh dice: a game or six jokers
        ([PLANT, PLANT, PLANT, JOKER, JOKER], PLANT, 4),  # one die: a plant or a joker
        ([GAME] * 6, GAME, 4),  # nothing rolled: certain
        ([GAME] * 6, CAT, 0),  # nothing rolled: impossible
    ],
)
def test_circle_chance_is_exact(kept: list[int], row: int, col: int) -> None:
    assert circle_chance(_counts(kept), row, col) == pytest.approx(float(enumerated_chance(kept, row, col)), abs=1e-12)


def test_the_book_example_is_one_minus_five_sixths_to_the_fourth() -> None:
    assert enumerated_chance([BOOK, JOKER], BOOK, 2) == 1 - Fraction(5, 6) ** 4
    assert circle_chance(_counts([BOOK, JOKER]), BOOK, 2) == pytest.approx(671 / 1296, abs=1e-12)


def test_a_reroll_hint_quotes_the_exact_chance_in_words() -> None:
    # plant game book trophy cat joker, two rolls left: keeping a book and the joker aims at book #3
    state = make_state(phase="reroll", rolls_left=2, dice=[0, 1, 2, 3, 4, 5])
    by_action = {h["action"]: h for h in hint(state, k=200)}
    keep_book_joker = 0b011011  # reroll dice 1,2,4,5: plant game trophy cat
    h = by_action[keep_book_joker]
    assert h["target"] == "book #3" and h["chance"] == pytest.approx(671 / 1296, abs=1e-4)
    assert "keeps 1 book + 1 joker, rerolls 4, aiming for book #3: 52% chance to have the dice for it after this roll" \
        in h["reason"]
    assert "next roll" not in h["reason"]
    for h in by_action.values():  # every quoted chance is the exact one for its keep and cell
        if h["target"] is None:
            assert h["chance"] is None and "aiming" not in h["reason"]
            continue
        kept = [d for i, d in enumerate(state["dice"]) if not h["action"] >> i & 1]
        symbol, number = h["target"].split(" #")
        row = ["plant", "game", "book", "trophy", "cat"].index(symbol)
        exact = enumerated_chance(kept, row, int(number) - 1)
        assert h["chance"] == pytest.approx(float(exact), abs=1e-4)
        assert f"{float(exact):.0%} chance to have the dice for it" in h["reason"]


def test_a_taken_cell_is_never_the_target() -> None:
    shelf = board(".....", ".....", "OOO..", ".....", ".....")  # books 1-3 already circled
    state = make_state(boards=[shelf, board()], phase="reroll", rolls_left=2, dice=[0, 1, 2, 3, 4, 5])
    for h in hint(state, k=200):
        assert h["target"] not in ("book #1", "book #2", "book #3")


def test_other_hints_carry_no_target() -> None:
    for h in hint(make_state(dice=[1, 1, 2, 3, 4, 5]), k=5):
        assert h["target"] is None and h["chance"] is None
