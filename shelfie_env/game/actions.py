"""The action ids (docs/rules.md) and their readable names.

The action space is ``Discrete(120)`` in every phase:

====================  ==========================================================
ids                   meaning
====================  ==========================================================
0                     stop rolling (keep all dice)
1..63                 reroll the dice whose sorted positions are the set bits
64..113               circle row r, column c, joker flag j: 64 + 2*(5r + c) + j
114                   end turn
115..119              cross out row r = id - 115
====================  ==========================================================
"""

from __future__ import annotations

import operator
from typing import NamedTuple

NUM_ACTIONS = 120
NUM_DICE = 6
NUM_ROWS = 5
NUM_COLS = 5
JOKER = 5

STOP = 0
REROLL_FIRST, REROLL_LAST = 1, 63
CIRCLE_BASE = 64
CIRCLE_LAST = 113
END_TURN = 114
CROSS_BASE = 115

SYMBOLS = ("plant", "game", "book", "trophy", "cat")
SYMBOL_PLURALS = ("plants", "games", "books", "trophies", "cats")
FACE_NAMES = SYMBOLS + ("joker",)


class Circle(NamedTuple):
    """A decoded circle action: row (symbol), column, joker flag."""

    row: int
    col: int
    joker: int


def circle_action(row: int, col: int, joker: bool | int = False) -> int:
    """Action id that circles ``(row, col)``, using a joker when ``joker``."""
    if not (0 <= row < NUM_ROWS and 0 <= col < NUM_COLS):
        raise ValueError(f"no cell at row {row}, column {col}")
    return CIRCLE_BASE + 2 * (5 * row + col) + int(bool(joker))


def cross_action(row: int) -> int:
    """Action id that crosses out ``row``."""
    if not 0 <= row < NUM_ROWS:
        raise ValueError(f"no row {row}")
    return CROSS_BASE + row


def reroll_action(positions: list[int] | tuple[int, ...]) -> int:
    """Action id that rerolls the dice at the given 0-based sorted positions."""
    if not positions:
        raise ValueError("a reroll needs at least one die")
    bits = 0
    for p in positions:
        if not 0 <= p < NUM_DICE:
            raise ValueError(f"no die at position {p}")
        bits |= 1 << p
    return bits


def decode_circle(action: int) -> Circle:
    """Row, column and joker flag of a circle action id."""
    if not CIRCLE_BASE <= action <= CIRCLE_LAST:
        raise ValueError(f"action {action} is not a circle action")
    k = action - CIRCLE_BASE
    cell, joker = divmod(k, 2)
    row, col = divmod(cell, 5)
    return Circle(row, col, joker)


def reroll_positions(action: int) -> tuple[int, ...]:
    """0-based sorted dice positions rerolled by a reroll action id."""
    if not REROLL_FIRST <= action <= REROLL_LAST:
        raise ValueError(f"action {action} is not a reroll action")
    return tuple(i for i in range(NUM_DICE) if action >> i & 1)


def action_kind(action: int) -> str:
    """One of ``stop``, ``reroll``, ``circle``, ``end``, ``cross``."""
    if action == STOP:
        return "stop"
    if REROLL_FIRST <= action <= REROLL_LAST:
        return "reroll"
    if CIRCLE_BASE <= action <= CIRCLE_LAST:
        return "circle"
    if action == END_TURN:
        return "end"
    if CROSS_BASE <= action < NUM_ACTIONS:
        return "cross"
    raise ValueError(f"action id {action!r} is outside 0..{NUM_ACTIONS - 1}")


def _name(action: int) -> str:
    kind = action_kind(action)
    if kind == "stop":
        return "stop rolling"
    if kind == "reroll":
        return "reroll dice " + ",".join(str(p + 1) for p in reroll_positions(action))
    if kind == "circle":
        row, col, joker = decode_circle(action)
        return f"circle {SYMBOLS[row]} #{col + 1}" + (" +joker" if joker else "")
    if kind == "end":
        return "end turn"
    return f"cross out {SYMBOL_PLURALS[action - CROSS_BASE]}"


ACTION_NAMES: tuple[str, ...] = tuple(_name(a) for a in range(NUM_ACTIONS))


def action_name(action: int) -> str:
    """Readable name of an action id, e.g. ``"circle cat #3 +joker"``."""
    if not isinstance(action, int) or isinstance(action, bool):
        try:
            if isinstance(action, bool):
                raise TypeError
            action = operator.index(action)  # numpy integers; not floats or strings
        except TypeError:
            raise ValueError(f"action {action!r} is not an integer id") from None
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action id {action} is outside 0..{NUM_ACTIONS - 1}")
    return ACTION_NAMES[action]


def action_name_or_id(action: object) -> str:
    """:func:`action_name` of ``action``, or ``str(action)`` when it is no action id (for messages)."""
    try:
        return action_name(action)  # type: ignore[arg-type]
    except ValueError:
        return str(action)
