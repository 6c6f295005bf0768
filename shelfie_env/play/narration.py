"""What a move did, in words: lockouts, the end trigger, why a turn ended, passes.

Every sentence comes from comparing the game before and after one move (the
engine's own result), never from re-applying the rules. Used by ``shelfie
play`` after each move and by ``shelfie replay`` between stored positions.
"""

from __future__ import annotations

from collections.abc import Sequence

from shelfie_env.game.actions import CROSS_BASE, END_TURN, SYMBOL_PLURALS, SYMBOLS
from shelfie_env.game.engine import CIRCLE, CROSS, Game, full_rows
from shelfie_env.game.scoring import COL_MASKS, ROW_MASKS, shelf_cells


class Voice:
    """Names seats in sentences: ``"You"``/``"Your"`` for the viewer, the seat label otherwise."""

    def __init__(self, labels: Sequence[str], viewer: int | None = None) -> None:
        self.labels = list(labels)
        self.viewer = viewer

    def label(self, p: int) -> str:
        return self.labels[p] if p < len(self.labels) else f"player {p + 1}"

    def subject(self, p: int) -> str:
        return "You" if p == self.viewer else self.label(p)

    def possessive(self, p: int) -> str:
        return "Your" if p == self.viewer else f"{self.label(p)}'s"

    def verb(self, p: int, third: str, plain: str) -> str:
        """``third`` ("has") for another seat, ``plain`` ("have") for the viewer."""
        return plain if p == self.viewer else third


def cell_name(row: int, col: int) -> str:
    """A cell as the commands name it: ``"cat #3"``."""
    return f"{SYMBOLS[row]} #{col + 1}"


def _cell_names(mask: int) -> list[str]:
    """The cells set in a shelf mask, as the commands name them."""
    return [cell_name(r, c) for r, c in shelf_cells(mask)]


def and_list(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def plural(n: int, word: str) -> str:
    """``"1 circle"``, ``"2 circles"``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def turn_ended(before: Game, after: Game, action: int | None) -> bool:
    """Whether ``action`` (played in ``before``, giving ``after``) ended the mover's turn."""
    if before.phase == CROSS or action == END_TURN:
        return True
    if before.phase == CIRCLE:
        return after.phase not in (CIRCLE, CROSS)
    return False


def lockout_notices(before: Game, after: Game, voice: Voice) -> list[str]:
    """One sentence per row or column the mover completed, naming the rivals' cells it crossed."""
    p = before.current
    lines: list[str] = []
    taken = [0] * after.num_players  # cells already reported (a row and a column share one)
    completed = [(f"the {SYMBOL_PLURALS[r]} row", m, "rows", r) for r, m in enumerate(ROW_MASKS)]
    completed += [(f"column #{c + 1}", m, "cols", c) for c, m in enumerate(COL_MASKS)]
    points = after.table.breakdown(after.circled[p])
    for what, m, kind, i in completed:
        if after.circled[p] & m != m or before.circled[p] & m == m:
            continue
        sentence = f"{voice.subject(p)} completed {what} (+{plural(points[kind][i], 'point')})."
        for q in sorted(range(after.num_players), key=lambda q: q != voice.viewer):  # "Your" first
            lost = (after.crossed[q] & ~before.crossed[q]) & m & ~taken[q]
            if q == p or not lost:
                continue
            taken[q] |= lost
            names = _cell_names(lost)
            verb = "is" if len(names) == 1 else "are"
            sentence += f" {voice.possessive(q)} {and_list(names)} {verb} crossed out."
        lines.append(sentence)
    return lines


def trigger_notice(before: Game, after: Game, voice: Voice) -> str | None:
    """The sentence announcing the last round, when this move set the end off."""
    if before.end_triggered or not after.end_triggered:
        return None
    who = [
        q
        for q in range(after.num_players)
        if full_rows(after.circled[q] | after.crossed[q]) >= 2
        and full_rows(before.circled[q] | before.crossed[q]) < 2
    ] or [before.current]
    subject = and_list(
        [voice.subject(q) if i == 0 else voice.subject(q).replace("You", "you") for i, q in enumerate(who)]
    )
    has = "have" if len(who) > 1 or who[0] == voice.viewer else "has"
    text = f"{subject} {has} two full rows: "
    last = after.num_players - 1
    if after.over:
        return text + "the game ends with this move."
    if before.current == last:
        return text + "this turn is the last of the game."
    return text + f"this round is the last; the game ends after {voice.label(last)}'s turn."


def turn_end_reason(before: Game, after: Game, action: int | None, voice: Voice) -> str | None:
    """``"turn over: 3 items circled"`` and the like, when ``action`` ended the turn."""
    if action is None or not turn_ended(before, after, action):
        return None
    p = before.current
    if before.phase == CROSS:
        row = action - CROSS_BASE
        return f"turn over: no die fits — {SYMBOL_PLURALS[row]} row crossed out"
    if action == END_TURN:
        who = "you" if p == voice.viewer else voice.label(p)
        return f"turn over: {who} stopped after {plural(before.circles, 'circle')}"
    if before.circles + 1 >= 3:
        return "turn over: 3 items circled"
    return "turn over: no legal circle left"


def pass_notices(before: Game, after: Game, action: int | None, voice: Voice) -> list[str]:
    """The seats skipped after this turn because their shelves are full."""
    if not turn_ended(before, after, action):
        return []
    n, p = after.num_players, before.current
    if after.over:  # the round was finished: every later seat was skipped
        skipped = list(range(p + 1, n))
    else:
        skipped, q = [], (p + 1) % n
        while q != after.current:
            skipped.append(q)
            q = (q + 1) % n
    return [
        f"{voice.subject(q)} {voice.verb(q, 'has', 'have')} a full shelf and "
        f"{voice.verb(q, 'passes', 'pass')}."
        for q in skipped
    ]


def notices(before: Game, after: Game, action: int | None, voice: Voice) -> list[str]:
    """Everything worth saying after a move, in order: lockouts, the trigger, the turn end, passes."""
    out = lockout_notices(before, after, voice)
    trig = trigger_notice(before, after, voice)
    if trig:
        out.append(trig)
    reason = turn_end_reason(before, after, action, voice)
    if reason:
        out.append(reason)
    out += pass_notices(before, after, action, voice)
    return out


__all__ = [
    "Voice",
    "and_list",
    "cell_name",
    "lockout_notices",
    "notices",
    "pass_notices",
    "plural",
    "trigger_notice",
    "turn_end_reason",
    "turn_ended",
]
