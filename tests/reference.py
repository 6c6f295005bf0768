"""An independent, deliberately plain reading of SPEC §2-6 on state dicts.

Nothing here imports the engine: legality, transitions and scoring are
recomputed from the JSON state alone (5x5 lists, brute force), so the tests
can diff the engine against it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from itertools import combinations
from typing import Any

FREE, CIRCLED, CROSSED = 0, 1, 2
JOKER_FACE = 5


def circle_id(r: int, c: int, j: int) -> int:
    return 64 + 2 * (5 * r + c) + j


def unspent_counts(state: dict[str, Any]) -> list[int]:
    counts = [0] * 6
    for face, used in zip(state["dice"], state["spent"]):
        if not used:
            counts[face] += 1
    return counts


def all_jokers(state: dict[str, Any]) -> bool:
    """Six jokers, none used yet."""
    return all(f == JOKER_FACE for f in state["dice"]) and not any(state["spent"])


def circle_options(state: dict[str, Any]) -> set[int]:
    """Circle ids allowed by SPEC §2.3 for the player on turn (ignoring the 3-circle cap)."""
    b = state["boards"][state["current_player"]]
    out: set[int] = set()
    if all_jokers(state):
        return {circle_id(r, c, 1) for r in range(5) for c in range(5) if b[r][c] == FREE}
    k = unspent_counts(state)
    for r in range(5):
        for c in range(5):
            if b[r][c] != FREE:
                continue
            if k[r] >= c + 1:
                out.add(circle_id(r, c, 0))
            if c >= 1 and k[r] >= c and k[JOKER_FACE] >= 1:
                out.add(circle_id(r, c, 1))
    return out


def is_canonical(dice: list[int], positions: set[int]) -> bool:
    """Among equal faces the rerolled dice are the highest positions of the group."""
    for i in positions:
        for j in range(i + 1, 6):
            if dice[j] == dice[i] and j not in positions:
                return False
    return True


def legal(state: dict[str, Any]) -> set[int]:
    """The legal action ids of SPEC §6 for ``state``."""
    phase = state["phase"]
    if phase == "over":
        return set()
    if phase == "reroll":
        out = {0}
        if state["rolls_left"] > 0:
            for size in range(1, 7):
                for pos in combinations(range(6), size):
                    if is_canonical(state["dice"], set(pos)):
                        out.add(sum(1 << p for p in pos))
        return out
    if phase == "circle":
        out = circle_options(state) if state["circles_this_turn"] < 3 else set()
        if state["circles_this_turn"] >= 1 and out:
            out.add(114)
        return out
    b = state["boards"][state["current_player"]]
    return {115 + r for r in range(5) if FREE in b[r]}


def score(b: list[list[int]], points: list[list[int]]) -> int:
    """SPEC §5 scoring of one 5x5 board."""
    total = 0
    for r in range(5):
        cells = [c for c in range(5) if b[r][c] == CIRCLED]
        if len(cells) >= 3:
            total += sum(points[r][c] for c in cells)
    for c in range(5):
        cells = [r for r in range(5) if b[r][c] == CIRCLED]
        if len(cells) >= 3:
            total += sum(points[r][c] for r in cells)
    return total


def rows_without_free(b: list[list[int]]) -> int:
    return sum(1 for row in b if FREE not in row)


def _enter_circle_phase(s: dict[str, Any]) -> None:
    s["phase"] = "circle"
    if not circle_options(s):
        s["phase"] = "cross"


def _check_end(s: dict[str, Any]) -> None:
    if any(rows_without_free(b) >= 2 for b in s["boards"]):
        s["end_triggered"] = True


def _end_turn(s: dict[str, Any], roll: Callable[[int], list[int]]) -> None:
    n = s["num_players"]
    while True:
        if s["end_triggered"] and s["current_player"] == n - 1:
            s["phase"] = "over"
            return
        s["current_player"] = (s["current_player"] + 1) % n
        if s["current_player"] == 0:  # a new round: every seat's turn number goes up by one
            s["round"] = s.get("round", 0) + 1
        if any(FREE in row for row in s["boards"][s["current_player"]]):
            break
    s["dice"] = sorted(roll(6))
    s["spent"] = [False] * 6
    s["rolls_left"] = 2
    s["circles_this_turn"] = 0
    s["phase"] = "reroll"


def step(state: dict[str, Any], action: int, roll: Callable[[int], list[int]]) -> dict[str, Any]:
    """The state after ``action`` (assumed legal); ``roll(k)`` gives the faces of k new dice."""
    s = copy.deepcopy(state)
    p = s["current_player"]
    b = s["boards"][p]
    if s["phase"] == "reroll":
        if action == 0:
            _enter_circle_phase(s)
            return s
        pos = [i for i in range(6) if action >> i & 1]
        kept = [f for i, f in enumerate(s["dice"]) if i not in pos]
        s["dice"] = sorted(kept + list(roll(len(pos))))
        s["rolls_left"] -= 1
        if s["rolls_left"] == 0:
            _enter_circle_phase(s)
        return s
    if s["phase"] == "cross":
        r = action - 115
        b[r] = [CROSSED if v == FREE else v for v in b[r]]
        _check_end(s)
        _end_turn(s, roll)
        return s
    if action == 114:
        _end_turn(s, roll)
        return s
    r, c, j = (action - 64) // 10, (action - 64) // 2 % 5, (action - 64) % 2
    if all_jokers(s):
        s["spent"] = [True] * 6
    else:
        need = {r: c + 1 - j}
        if j:
            need[JOKER_FACE] = 1
        for i, f in enumerate(s["dice"]):  # spend the lowest unspent dice of each needed face
            if need.get(f, 0) and not s["spent"][i]:
                s["spent"][i] = True
                need[f] -= 1
    b[r][c] = CIRCLED
    s["circles_this_turn"] += 1
    row_done = all(v == CIRCLED for v in b[r])
    col_done = all(b[rr][c] == CIRCLED for rr in range(5))
    for q in range(s["num_players"]):
        if q == p:
            continue
        other = s["boards"][q]
        if row_done:
            other[r] = [v if v == CIRCLED else CROSSED for v in other[r]]
        if col_done:
            for rr in range(5):
                if other[rr][c] != CIRCLED:
                    other[rr][c] = CROSSED
    _check_end(s)
    if s["circles_this_turn"] == 3 or not circle_options(s):
        _end_turn(s, roll)
    return s
