"""Fitting the terminal game to the terminal's width: shelves side by side, lines wrapped
between words (never inside one, nor inside one entry of a ``legal:`` list), and the final
score breakdown that ends a game and a replay."""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Sequence

from shelfie_env.game.actions import SYMBOL_PLURALS
from shelfie_env.game.engine import Game
from shelfie_env.game.render import player_label, render_shelf, render_status, result_line

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GLUE = "\x00"
_UNBREAKABLE = (" #", " +joker", " ->")
GAP = 4
TURN_MARK = "  <- on turn"
"""Spaces between shelves laid side by side."""


def terminal_width(fallback: int = 80) -> int:
    """The terminal's width in columns (``fallback`` when it cannot be told)."""
    return shutil.get_terminal_size((fallback, 24)).columns


def visible_len(text: str) -> int:
    """Length of ``text`` as shown: colour codes take no room."""
    return len(_ANSI.sub("", text))


def side_by_side(
    blocks: Sequence[Sequence[str]], width: int, gap: int = GAP, min_width: int = 0
) -> list[str]:
    """The blocks (lists of lines) in as many columns as fit in ``width``, row after row,
    a blank line between rows; one column when even two do not fit. Every column is at
    least ``min_width`` wide, so the columns stay put from one table to the next."""
    if not blocks:
        return []
    block_width = max(min_width, *(visible_len(line) for block in blocks for line in block))
    per_row = max(1, min(len(blocks), (width + gap) // (block_width + gap)))
    lines: list[str] = []
    for start in range(0, len(blocks), per_row):
        row = blocks[start : start + per_row]
        if lines:
            lines.append("")
        height = max(len(b) for b in row)
        for i in range(height):
            cells = [b[i] if i < len(b) else "" for b in row]
            padded = [c + " " * (block_width - visible_len(c)) for c in cells[:-1]] + [cells[-1]]
            lines.append((" " * gap).join(padded).rstrip())
    return lines


def table_text(
    game: Game,
    viewer: int | None,
    color: bool,
    names: Sequence[str],
    width: int | None,
    status: bool = True,
) -> str:
    """Every shelf (side by side where ``width`` allows; stacked when it is ``None``), then
    the scores, the turn and the dice."""
    shelves = [render_shelf(game, p, viewer, color, names) for p in range(game.num_players)]
    if width is None:
        parts = ["\n".join(s) for s in shelves]
    else:
        # room for the longest name with the turn marker, wherever the turn is
        heads = max(visible_len(s[0].replace(TURN_MARK, "")) for s in shelves) + len(TURN_MARK)
        parts = ["\n".join(side_by_side(shelves, width, min_width=heads))]
    if status:
        lines = render_status(game, viewer, color, names)
        if width is not None:
            lines = [fit_line(line, width) for line in lines]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def fit_line(line: str, width: int, indent: str = "      ") -> str:
    """A status line (``Dice: 1:plant  2:game ...``, ``Scores: A 3 | B 5``) broken between
    its items when it is wider than ``width``; colour codes do not count."""
    if visible_len(line) <= width:
        return line
    sep = "  " if "  " in line.strip() else " | "
    items = line.split(sep)
    out: list[str] = []
    current = items[0]
    for item in items[1:]:
        if visible_len(current + sep + item) > width:
            out.append((current + sep).rstrip())
            current = indent + item.lstrip()
        else:
            current += sep + item
    out.append(current)
    return "\n".join(out)


def wrap(text: str, width: int | None, indent: str = "", first: str = "") -> str:
    """``text`` wrapped at word boundaries to ``width`` (``None``: one line), the first line
    after ``first`` and the others after ``indent``."""
    if width is None:
        return first + text
    for words in _UNBREAKABLE:  # keep "cat #3", "+joker" and "->" with their neighbours
        text = text.replace(words, words.replace(" ", _GLUE))
    return textwrap.fill(
        text,
        width=max(width, len(indent) + 20),
        initial_indent=first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ).replace(_GLUE, " ")


def wrap_list(head: str, entries: Sequence[str], width: int | None, sep: str = " | ") -> str:
    """``head`` then ``entries`` joined by ``sep``, wrapped only between entries, so an entry
    such as ``circle plant 2 joker`` is never split; later lines align under the first entry."""
    if width is None:
        return head + sep.join(entries)
    lines: list[str] = []
    line = head
    indent = " " * len(head)
    for i, entry in enumerate(entries):
        joined = line + (sep + entry if i else entry)
        if i and len(joined) > width and line != indent:
            lines.append(line + sep.rstrip())
            line = indent + entry
        else:
            line = joined
    lines.append(line)
    return "\n".join(lines)


def final_report(
    game: Game, names: Sequence[str] | None = None, viewer: int | None = None, width: int | None = None
) -> str:
    """Per-row/column points of every player and their totals, then the one-line result.

    When the table is wider than ``width`` it is split in two: the rows, then the columns
    and the totals."""
    head = ["player"] + list(SYMBOL_PLURALS) + [f"col{c + 1}" for c in range(5)] + ["total"]
    rows = []
    for p in range(game.num_players):
        b = game.table.breakdown(game.circled[p])
        rows.append(
            [player_label(game, p, viewer, names)]
            + [str(v) for v in b["rows"] + b["cols"]]
            + [str(game.score(p))]
        )
    lines = ["Final score breakdown (rows and columns with at least 3 circles score):"]
    whole = _columns_text([head] + rows)
    if width is None or max(len(line) for line in whole) <= width:
        lines += whole
    else:
        lines += _columns_text([[r[0]] + r[1:6] for r in [head] + rows])
        lines.append("")
        lines += _columns_text([[r[0]] + r[6:] for r in [head] + rows])
    lines += ["", wrap(result_line(game, viewer, names), width, "  ")]
    return "\n".join(lines)


def _columns_text(table: list[list[str]]) -> list[str]:
    """The rows of ``table`` as aligned text: the first column left, the others right."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in table
    ]
