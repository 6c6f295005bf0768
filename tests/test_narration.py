"""What a move did, in words (shelfie_env/play/narration.py) and the one-line result (render.result_line)."""

from __future__ import annotations

import pytest

from shelfie_env.game.actions import END_TURN, STOP, circle_action, cross_action
from shelfie_env.game.engine import OVER, Game
from shelfie_env.game.render import render_text, result_line
from shelfie_env.play.narration import Voice, notices

from .conftest import spec_state as state

EMPTY = [[0] * 5 for _ in range(5)]


def board(**rows: list[int]) -> list[list[int]]:
    """A shelf with the given rows (plants, games, books, trophies, cats) set, the others empty."""
    names = ("plants", "games", "books", "trophies", "cats")
    return [list(rows.get(n, [0] * 5)) for n in names]


def said(s: dict, action: int, labels: list[str], viewer: int | None = None, first: tuple[int, ...] = ()) -> list[str]:
    """The notices of ``action``, played after the moves ``first``, from state ``s``."""
    before = Game.from_dict(s, rng=0)
    for a in first:
        before.step(a)
    after = before.clone()
    after.step(action)
    return notices(before, after, action, Voice(labels, viewer))


def test_a_completed_row_names_the_line_its_points_and_the_rivals_cells() -> None:
    s = state(boards=[board(cats=[1, 1, 1, 1, 0]), board(cats=[0, 1, 0, 0, 0])])
    text = said(s, circle_action(4, 4), ["Bea", "Ann"], viewer=1)
    assert text[0] == "Bea completed the cats row (+19 points). Your cat #1, cat #3, cat #4 and cat #5 are crossed out."
    assert text[-1] == "turn over: no legal circle left"  # only the joker is left


def test_a_circle_completing_a_row_and_a_column_reports_each_cell_once() -> None:
    # Player 1 circles cat #1: the cats row and column #1 are both complete.
    mine = board(plants=[1, 0, 0, 0, 0], games=[1, 0, 0, 0, 0], books=[1, 0, 0, 0, 0],
                 trophies=[1, 0, 0, 0, 0], cats=[0, 1, 1, 1, 1])
    s = state(boards=[mine, EMPTY], dice=[0, 0, 2, 3, 3, 4])
    text = said(s, circle_action(4, 0), ["Ana", "greedy bot"], viewer=0)
    assert text[0] == ("You completed the cats row (+19 points). greedy bot's cat #1, cat #2, cat #3, "
                       "cat #4 and cat #5 are crossed out.")
    assert text[1] == ("You completed column #1 (+5 points). greedy bot's plant #1, game #1, book #1 "
                       "and trophy #1 are crossed out.")


def test_the_viewer_hears_first_about_their_own_cells() -> None:
    s = state(num_players=3, boards=[board(cats=[1, 1, 1, 1, 0]), EMPTY, board(cats=[1, 1, 1, 0, 0])])
    text = said(s, circle_action(4, 4), ["Ann", "Bea", "Cy"], viewer=2)
    assert text[0] == ("Ann completed the cats row (+19 points). Your cat #4 and cat #5 are crossed out. "
                       "Bea's cat #1, cat #2, cat #3, cat #4 and cat #5 are crossed out.")


def test_the_last_round_is_announced_with_who_and_when() -> None:
    s = state(boards=[board(cats=[1, 1, 1, 1, 0]), board(plants=[2] * 5)])
    text = said(s, circle_action(4, 4), ["Bea", "Ann"], viewer=1)
    assert "You have two full rows: this round is the last; the game ends after Ann's turn." in text
    s3 = state(num_players=3, boards=[board(cats=[1, 1, 1, 1, 0]), board(plants=[2] * 5), EMPTY])
    text = said(s3, circle_action(4, 4), ["Bea", "Ann", "Cy"])
    assert "Ann has two full rows: this round is the last; the game ends after Cy's turn." in text
    s_last = state(current_player=1, boards=[board(plants=[2] * 5), board(cats=[1, 1, 1, 1, 0])])
    text = said(s_last, circle_action(4, 4), ["Ann", "Bea"])
    assert "Ann has two full rows: the game ends with this move." in text


CAT1, CAT2, PLANT1 = circle_action(4, 0), circle_action(4, 1), circle_action(0, 0)


@pytest.mark.parametrize(
    "dice,first,action,reason",
    [
        ([0, 4, 4, 4, 4, 4], (CAT1,), END_TURN, "turn over: you stopped after 1 circle"),
        ([0, 4, 4, 4, 4, 4], (CAT1, CAT2), PLANT1, "turn over: 3 items circled"),
        ([4, 4, 4, 4, 4, 5], (), circle_action(4, 4), "turn over: no legal circle left"),  # a joker alone
    ],
)
def test_turn_end_reasons(dice: list[int], first: tuple[int, ...], action: int, reason: str) -> None:
    assert said(state(dice=dice), action, ["Ann", "Bea"], viewer=0, first=first)[-1] == reason


def test_a_bot_that_stops_and_a_forced_cross_out() -> None:
    s = state(dice=[0, 4, 4, 4, 4, 4])
    text = said(s, END_TURN, ["Ann", "greedy bot"], viewer=1, first=(CAT1, CAT2))
    assert text == ["turn over: Ann stopped after 2 circles"]
    blocked = board(cats=[2, 1, 2, 2, 2])  # nothing but cats and jokers: no cat cell is free
    s = state(phase="cross", boards=[blocked, EMPTY], dice=[4, 4, 4, 4, 4, 5])
    assert said(s, cross_action(2), ["Ann", "Bea"], viewer=0) == [
        "You have two full rows: this round is the last; the game ends after Bea's turn.",
        "turn over: no die fits — books row crossed out",
    ]


def test_no_notice_while_the_turn_goes_on() -> None:
    assert said(state(phase="reroll", rolls_left=2), STOP, ["Ann", "Bea"]) == []
    assert said(state(), circle_action(4, 0), ["Ann", "Bea"]) == []


def test_a_full_shelf_passes_and_is_named() -> None:
    full = [[2] * 5 for _ in range(5)]
    s = state(num_players=3, boards=[EMPTY, full, EMPTY], end_triggered=True)
    text = said(s, END_TURN, ["Ann", "Bea", "Cy"], viewer=0, first=(CAT1,))
    assert text == ["turn over: you stopped after 1 circle", "Bea has a full shelf and passes."]


# ----------------------------------------------------------------------------- result line
def finished(circled: list[int]) -> Game:
    g = Game(len(circled))
    g.circled = list(circled)
    g.phase = OVER
    return g


ROW = 0b11111  # a full plants row: 19 points
THREE = 0b111  # plants #1-#3: 6 points


def test_the_result_line_names_the_winner_and_the_others_best_first() -> None:
    g = finished([THREE, ROW, 0])
    assert result_line(g, None, ["Ana", "Bea", "greedy bot"]) == (
        "Game over — Bea wins with 19 points (Ana 6, greedy bot 0)."
    )
    assert result_line(g, 1, ["Ana", "Bea", "greedy bot"]) == "Game over — you win with 19 points (Ana 6, greedy bot 0)."
    assert result_line(g, 0, ["Ana", "Bea", "greedy bot"]) == (
        "Game over — Bea wins with 19 points (you 6, greedy bot 0)."
    )


def test_ties_share_first_place() -> None:
    assert result_line(finished([ROW, ROW]), None, ["Ana", "Bea"]) == "Game over — Ana and Bea tie with 19 points."
    assert result_line(finished([ROW, THREE, ROW, ROW]), 0, ["Ana", "Bea", "Cy", "Di"]) == (
        "Game over — you, Cy and Di tie with 19 points (Bea 6)."
    )


def test_a_solo_game_is_a_score() -> None:
    assert result_line(finished([ROW]), 0) == "Game over — you scored 19 points."
    assert result_line(finished([THREE]), None, ["Ana"]) == "Game over — Ana scored 6 points."
    assert "Game over — you scored 19 points." in render_text(finished([ROW]), 0)
