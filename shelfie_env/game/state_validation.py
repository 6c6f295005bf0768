"""Field-by-field validation of state dicts (docs/rules.md)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import product
from typing import Any

import numpy as np

from shelfie_env.game.errors import InvalidStateError
from shelfie_env.game.scoring import validate_points

_PHASES = ("reroll", "circle", "cross", "over")


def _int(state: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
    v = state[key]
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            import numpy as np

            if isinstance(v, np.integer):
                v = int(v)
            else:
                raise TypeError
        except TypeError:
            raise InvalidStateError(key, f"must be an integer, got {v!r}") from None
    if not lo <= v <= hi:
        raise InvalidStateError(key, f"must be in {lo}..{hi}, got {v}")
    return int(v)


def _bool(state: Mapping[str, Any], key: str) -> bool:
    v = state[key]
    if not isinstance(v, bool):
        try:
            import numpy as np

            if isinstance(v, np.bool_):
                return bool(v)
        except ImportError:  # pragma: no cover
            pass
        raise InvalidStateError(key, f"must be true or false, got {v!r}")
    return v


def _list(v: Any, key: str, length: int) -> list[Any]:
    if isinstance(v, (str, bytes, Mapping)):
        raise InvalidStateError(key, f"must be a list of length {length}, got {type(v).__name__}")
    try:
        out = list(v)
    except TypeError:
        raise InvalidStateError(key, f"must be a list of length {length}, got {v!r}") from None
    if len(out) != length:
        raise InvalidStateError(key, f"must have length {length}, got {len(out)}")
    return out


def spent_fits_circles(dice: list[int], spent: list[bool], circles: int, circled: int) -> bool:
    """Whether the spent dice split into ``circles`` legal groups whose items are circled.

    A group is ``k >= 1`` dice of one symbol ``r`` (item ``(r, k-1)``) or ``k >= 1``
    such dice plus one joker (item ``(r, k)``); the items are distinct cells.
    """
    used = [d for d, s in zip(dice, spent) if s]
    for labels in product(range(circles), repeat=len(used)):
        cells = set()
        for g in range(circles):
            faces = [d for d, lab in zip(used, labels) if lab == g]
            symbols = [d for d in faces if d != 5]
            jokers = len(faces) - len(symbols)
            if not symbols or jokers > 1 or len(set(symbols)) != 1 or len(faces) > 5:
                break
            cell = 5 * symbols[0] + len(faces) - 1
            if not circled >> cell & 1 or cell in cells:
                break
            cells.add(cell)
        else:
            return True
    return False


REQUIRED = (
    "num_players",
    "points",
    "boards",
    "current_player",
    "phase",
    "dice",
    "spent",
    "rolls_left",
    "circles_this_turn",
    "end_triggered",
)


MAX_ROUND = 1_000
"""Upper bound accepted for the optional ``round`` key (a game lasts at most 26 rounds)."""


def validate_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """Check every field of a state dict; return them decoded (boards as masks)."""
    if not isinstance(state, Mapping):
        raise InvalidStateError("state", f"must be a dict, got {type(state).__name__}")
    for key in REQUIRED:
        if key not in state:
            raise InvalidStateError(key, "missing")
    n = _int(state, "num_players", 1, 4)
    try:
        points = validate_points(state["points"])
    except (ValueError, TypeError) as exc:
        raise InvalidStateError("points", str(exc)) from None
    boards = _list(state["boards"], "boards", n)
    circled, crossed = [], []
    for p, board in enumerate(boards):
        rows = _list(board, f"boards[{p}]", 5)
        ci = cr = 0
        for r, row in enumerate(rows):
            cells = _list(row, f"boards[{p}][{r}]", 5)
            for c, v in enumerate(cells):
                if isinstance(v, bool) or v not in (0, 1, 2):
                    raise InvalidStateError(
                        "boards",
                        f"cell boards[{p}][{r}][{c}] must be 0 (free), 1 (circled) or 2 (crossed), got {v!r}",
                    )
                if v == 1:
                    ci |= 1 << (5 * r + c)
                elif v == 2:
                    cr |= 1 << (5 * r + c)
        circled.append(ci)
        crossed.append(cr)
    current = _int(state, "current_player", 0, n - 1)
    phase = state["phase"]
    if phase not in _PHASES:
        raise InvalidStateError("phase", f"must be one of {', '.join(_PHASES)}, got {phase!r}")
    dice_raw = _list(state["dice"], "dice", 6)
    dice = []
    for v in dice_raw:
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            raise InvalidStateError("dice", f"faces must be integers 0..5, got {v!r}")
        v = int(v)
        if not 0 <= v <= 5:
            raise InvalidStateError("dice", f"faces must be integers 0..5, got {v}")
        dice.append(v)
    if dice != sorted(dice):
        raise InvalidStateError("dice", f"must be sorted ascending, got {dice}")
    spent_raw = _list(state["spent"], "spent", 6)
    spent = []
    for v in spent_raw:
        if not isinstance(v, (bool, np.bool_)):
            raise InvalidStateError("spent", f"flags must be true or false, got {v!r}")
        spent.append(bool(v))
    rolls_left = _int(state, "rolls_left", 0, 2)
    circles = _int(state, "circles_this_turn", 0, 3)
    end_triggered = _bool(state, "end_triggered")

    if phase == "reroll":
        if rolls_left == 0:
            raise InvalidStateError("rolls_left", "the reroll phase needs rolls_left > 0")
        if circles:
            raise InvalidStateError("circles_this_turn", "no circle can be made in the reroll phase")
        if any(spent):
            raise InvalidStateError("spent", "no die is spent in the reroll phase")
    elif phase == "cross":
        if circles:
            raise InvalidStateError("circles_this_turn", "the cross phase happens only before any circle")
        if any(spent):
            raise InvalidStateError("spent", "no die is spent in the cross phase")
    elif phase == "circle":
        if circles >= 3:
            raise InvalidStateError("circles_this_turn", "after 3 circles the turn has ended")
        n_spent = sum(spent)
        if circles == 0 and n_spent:
            raise InvalidStateError("spent", "dice are spent but no circle was made this turn")
        if circles and not circles <= n_spent <= 6:
            raise InvalidStateError(
                "spent", f"{circles} circles spend at least {circles} dice, {n_spent} are spent"
            )
        all_jokers = all(d == 5 for d in dice)
        if all_jokers and circles and not all(spent):
            raise InvalidStateError("spent", "a six-joker circle spends all dice")
        if circles and not all_jokers and not spent_fits_circles(dice, spent, circles, circled[current]):
            raise InvalidStateError(
                "spent",
                f"the spent dice cannot form {circles} circle group(s) (c+1 dice of a symbol, or c plus one "
                f"joker) matching circled cells of player {current}",
            )
    if phase == "over" and not end_triggered:
        raise InvalidStateError("end_triggered", "the game can only be over once the end was triggered")
    round_ = _int(state, "round", 0, MAX_ROUND) if "round" in state else 0
    tape_seed = None
    if state.get("tape_seed") is not None:
        tape_seed = _int(state, "tape_seed", 0, 2**63 - 1)
    return {
        "num_players": n,
        "points": points,
        "circled": circled,
        "crossed": crossed,
        "current_player": current,
        "phase": phase,
        "dice": dice,
        "spent": spent,
        "rolls_left": rolls_left,
        "circles_this_turn": circles,
        "end_triggered": end_triggered,
        "round": round_,
        "tape_seed": tape_seed,
    }
