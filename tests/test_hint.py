"""Move hints: top-k legal actions with values and reasons."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

from shelfie_env.bots import make
from shelfie_env.bots.planner import action_values
from shelfie_env.bots.planner.hint import hint
from shelfie_env.game.actions import action_name, circle_action
from shelfie_env.game.engine import Game

from .conftest import board, make_state

POSITIONS = [
    make_state(phase="reroll", rolls_left=2, dice=[0, 1, 3, 4, 4, 5]),
    make_state(phase="reroll", rolls_left=1, dice=[2, 2, 2, 3, 3, 5]),
    make_state(dice=[1, 1, 2, 3, 4, 5]),
    make_state(
        boards=[board("XXX..", "OOO..", "OOO..", "OOO..", "OOO.."), board()],
        phase="cross",
        dice=[0, 0, 1, 1, 2, 3],
    ),
    make_state(num_players=1, boards=[board()], phase="reroll", rolls_left=2, dice=[0, 0, 0, 4, 5, 5]),
]


@pytest.mark.parametrize("state", POSITIONS)
def test_hint_returns_k_sorted_legal_entries(state: dict) -> None:
    game = Game.from_dict(state)
    legal = game.legal_actions()
    hints = hint(state, k=3)
    assert len(hints) == min(3, len(legal))
    values = action_values(game)
    for h in hints:
        assert set(h) == {"action", "name", "value", "reason", "target", "chance"}
        assert type(h["action"]) is int and h["action"] in legal
        assert h["name"] == action_name(h["action"])
        assert isinstance(h["value"], float) and h["value"] == pytest.approx(values[h["action"]], abs=0.01)
        assert isinstance(h["reason"], str) and h["reason"]
    assert [h["value"] for h in hints] == sorted((h["value"] for h in hints), reverse=True)
    assert len({h["action"] for h in hints}) == len(hints)
    # The top hint is the planner's own choice, and nothing unlisted is better.
    assert hints[0]["action"] == make("planner").act(state)
    assert max(values.values()) == pytest.approx(hints[0]["value"], abs=0.01)


def test_hint_accepts_a_live_game_and_caps_k() -> None:
    game = Game.new(2, rng=4)
    all_hints = hint(game, k=200)
    assert len(all_hints) == len(game.legal_actions())
    (one,) = hint(game, k=1)
    # the figure gets the decimals that tell the hints shown together apart; the rest is the same
    assert {**one, "reason": one["reason"].rpartition("(")[0]} == {
        **all_hints[0], "reason": all_hints[0]["reason"].rpartition("(")[0]
    }
    assert one["reason"].endswith("(win chance ~47.2%)") and all_hints[0]["reason"].endswith("~47.159%)")


def test_hint_reasons_name_the_plan() -> None:
    cats = make_state(
        boards=[board(".....", ".....", ".....", ".....", ".OO.."), board()], dice=[4, 4, 4, 4, 4, 5]
    )
    top = hint(cats, k=1)[0]
    assert top["action"] == circle_action(4, 4, joker=True)
    assert "cat #1" in top["reason"]  # ...then circle cat #1 with the cat left over
    column = make_state(
        boards=[board("...O.", "...O.", "...O.", "...O.", "....."), board()], dice=[3, 4, 4, 4, 4, 5]
    )
    reasons = {h["action"]: h["reason"] for h in hint(column, k=10)}
    assert "completes column 4 (locks it for rivals)" in reasons[circle_action(4, 3)]
    cross = hint(POSITIONS[3], k=1)[0]
    assert cross["name"] == "cross out plants" and "loses 2 free cell" in cross["reason"]
    reroll = hint(make_state(phase="reroll", rolls_left=1, dice=[0, 1, 4, 4, 4, 5]), k=5)
    assert any("keeps 3 cats + 1 joker" in h["reason"] for h in reroll)


def test_hint_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="k must be"):
        hint(POSITIONS[0], k=0)
    with pytest.raises(ValueError, match="k must be"):
        hint(POSITIONS[0], k=True)
    with pytest.raises(ValueError):
        hint({"num_players": 2, "phase": "reroll"})
    game = Game.new(1, rng=0)
    bot = make("planner")
    while not game.over:
        game.step(bot.act_game(game))
    with pytest.raises(ValueError, match="game is over"):
        hint(game)


def test_hints_over_random_positions_are_legal() -> None:
    rng = np.random.default_rng(9)
    game = Game.new(2, rng=9)
    other = make("random", seed=9)
    n = 0
    while not game.over and n < 40:
        hints = hint(game, k=3)
        assert all(h["action"] in game.legal_actions() for h in hints)
        game.step(other.act_game(game) if rng.random() < 0.5 else hints[0]["action"])
        n += 1


@pytest.mark.parametrize(("players", "words"), [(1, "(EV "), (2, "(win chance ~"), (3, "(rank edge ")])
def test_reasons_state_the_value_in_the_units_of_the_game(players: int, words: str) -> None:
    game = Game.new(players, rng=11)
    for h in hint(game, k=3):
        assert h["reason"].endswith(")") and words in h["reason"], h


FIGURE = re.compile(r"\((?:EV|win chance ~|rank edge) ?([+-]?[\d.]+)%?\)$")


@pytest.mark.parametrize(("players", "seed"), [(3, 1), (3, 3), (4, 3), (2, 0)])
def test_hints_of_different_values_print_different_figures_and_no_negative_zero(players: int, seed: int) -> None:
    hints = hint(Game.new(players, rng=seed), k=3)
    figures = [FIGURE.search(h["reason"]).group(1) for h in hints]
    for a, b in itertools.combinations(range(len(hints)), 2):
        if hints[a]["value"] != hints[b]["value"]:
            assert figures[a] != figures[b], [h["reason"] for h in hints]
    assert not any(f.startswith("-0") and float(f) == 0 for f in figures)
    assert all(h["value"] != 0 or math.copysign(1, h["value"]) > 0 for h in hints)


def test_a_figure_that_rounds_to_zero_prints_unsigned() -> None:
    from shelfie_env.bots.planner.hint import _fixed

    assert _fixed(-0.001, 2, signed=True) == "0.00" and _fixed(0.001, 2, signed=True) == "0.00"
    assert _fixed(-0.004, 3, signed=True) == "-0.004" and _fixed(0.25, 2, signed=True) == "+0.25"
    assert _fixed(-0.04, 1) == "0.0"
