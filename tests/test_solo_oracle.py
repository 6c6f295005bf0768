"""The solo table and ``solo-optimal`` against an expectimax built on the plain rules reading.

The oracle here walks a turn with :mod:`tests.reference` alone (its legal actions and its
transitions, every dice outcome enumerated with its multinomial probability) and values the board
each line of play ends the turn on by ``board_value`` (or the final score). So it checks the
table's Bellman equation and the bot's decisions without the solver's code or the engine.
"""

from __future__ import annotations

import copy
from functools import cache
from itertools import combinations_with_replacement
from math import factorial
from typing import Any

import numpy as np
import pytest

from shelfie_env.solo import board_value, optimum
from shelfie_env.solo.bot import SoloOptimalBot
from shelfie_env.solo.table import shipped_table

from . import reference as ref

POINTS = [[1, 2, 3, 5, 8] for _ in range(5)]


@cache
def outcomes(k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every multiset of ``k`` dice faces with its probability."""
    out = []
    for combo in combinations_with_replacement(range(6), k):
        ways = factorial(k)
        for f in set(combo):
            ways //= factorial(combo.count(f))
        out.append((combo, ways / 6**k))
    return tuple(out)


def state_of(board: list[list[int]], dice: list[int], rolls_left: int) -> dict[str, Any]:
    """A solo state on ``board`` with ``dice`` in hand (a circle or cross phase when no roll is left)."""
    s = {
        "num_players": 1,
        "points": POINTS,
        "boards": [copy.deepcopy(board)],
        "current_player": 0,
        "phase": "reroll",
        "dice": sorted(dice),
        "spent": [False] * 6,
        "rolls_left": rolls_left,
        "circles_this_turn": 0,
        "end_triggered": False,
        "round": 0,
    }
    if rolls_left == 0:
        s["phase"] = "circle" if ref.circle_options(s) else "cross"
    return s


class Oracle:
    """Exact action values of one solo turn, from the plain rules and ``board_value`` at the turn's end."""

    def __init__(self) -> None:
        self.memo: dict[tuple[Any, ...], float] = {}
        self.keeps: dict[tuple[Any, ...], float] = {}

    def state_value(self, s: dict[str, Any]) -> float:
        if s["phase"] == "over":
            return float(ref.score(s["boards"][0], POINTS))
        key = (
            tuple(map(tuple, s["boards"][0])),
            tuple(s["dice"]),
            tuple(s["spent"]),
            s["rolls_left"],
            s["phase"],
            s["circles_this_turn"],
        )
        if key not in self.memo:
            self.memo[key] = max(self.action_values(s).values())
        return self.memo[key]

    def after(self, s: dict[str, Any], action: int) -> float:
        """Value after a circle, end-turn or cross-out: the turn goes on, or it ended on a board."""
        nxt = ref.step(s, action, lambda k: [0] * k)
        if nxt["phase"] == "over":
            return float(ref.score(nxt["boards"][0], POINTS))
        if nxt["circles_this_turn"] == 0 and nxt["phase"] == "reroll":  # a new turn began
            return board_value(nxt["boards"][0])
        return self.state_value(nxt)

    def keep_value(self, board: list[list[int]], kept: list[int], rolls_left: int) -> float:
        """Expected value of rolling the dice not kept, ``rolls_left`` rolls remaining after it."""
        key = (tuple(map(tuple, board)), tuple(sorted(kept)), rolls_left)
        if key not in self.keeps:
            self.keeps[key] = sum(
                p * self.state_value(state_of(board, kept + list(o), rolls_left))
                for o, p in outcomes(6 - len(kept))
            )
        return self.keeps[key]

    def action_values(self, s: dict[str, Any]) -> dict[int, float]:
        board = s["boards"][0]
        out = {}
        for a in sorted(ref.legal(s)):
            if s["phase"] != "reroll":
                out[a] = self.after(s, a)
            elif a == 0:
                out[a] = self.state_value(state_of(board, s["dice"], 0))
            else:
                kept = [f for i, f in enumerate(s["dice"]) if not a >> i & 1]
                out[a] = self.keep_value(board, kept, s["rolls_left"] - 1)
        return out

    def turn_value(self, board: list[list[int]]) -> float:
        return sum(p * self.state_value(state_of(board, list(o), 2)) for o, p in outcomes(6))


def grid(*rows: str) -> list[list[int]]:
    return [[".OX".index(ch) for ch in row] for row in rows]


def test_the_optimum_is_the_rules_expectimax_of_the_empty_board() -> None:
    empty = grid(".....", ".....", ".....", ".....", ".....")
    assert optimum() == pytest.approx(Oracle().turn_value(empty), abs=1e-9)


LATE_BOARDS = [
    grid("OOOO.", "OOO.O", "OOOOO", ".OOOO", "OO.OO"),  # a full row, four cells free
    grid("OOO.O", "OOOOX", "OO.OO", "O.OOO", "OOOO."),  # a crossed row
    grid("OO.O.", "O.OO.", ".OOO.", "OOOOO", "OOO.."),
    grid("O....", "..O..", ".....", "OO...", "O.O.O"),  # early: rolls that circle nothing cross out
]


@pytest.mark.parametrize("board", LATE_BOARDS)
def test_board_value_satisfies_the_bellman_equation_of_the_rules(board: list[list[int]]) -> None:
    oracle = Oracle()
    assert board_value(board) == pytest.approx(oracle.turn_value(board), abs=1e-9)


def test_solo_optimal_plays_the_oracles_best_action_in_every_phase() -> None:
    bot = SoloOptimalBot(shipped_table())
    oracle = Oracle()
    board = LATE_BOARDS[2]
    rng = np.random.default_rng(5)
    checked = {"reroll": 0, "circle": 0, "cross": 0}
    for _ in range(12):
        dice = sorted(int(x) for x in rng.integers(0, 6, size=6))
        for rolls_left in (2, 1, 0):
            s = state_of(board, dice, rolls_left)
            values = oracle.action_values(s)
            chosen = bot.act(s)
            assert chosen in values
            assert values[chosen] == pytest.approx(max(values.values()), abs=1e-9), (s, chosen, values)
            checked[s["phase"]] += 1
    # a circle made this turn: the rest of the turn
    s = state_of(board, [0, 0, 1, 1, 3, 3], 0)
    mid = ref.step(s, max(a for a in ref.legal(s) if 64 <= a < 114), lambda k: [0] * k)
    values = oracle.action_values(mid)
    assert values[bot.act(mid)] == pytest.approx(max(values.values()), abs=1e-9)
    # nothing circleable: a cross-out
    crossing = grid("OOO..", "OO...", "O....", ".....", ".....")
    s = state_of(crossing, [0, 0, 0, 1, 1, 2], 0)
    assert s["phase"] == "cross"
    values = oracle.action_values(s)
    assert values[bot.act(s)] == pytest.approx(max(values.values()), abs=1e-9)
    assert checked["reroll"] >= 20 and checked["circle"] + checked["cross"] >= 10
