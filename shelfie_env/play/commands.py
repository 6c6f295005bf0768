"""What a player types in ``shelfie play``: words to action ids and back, the commands and their help.

Every legal move has exactly one spelling; a typo gets a :class:`CommandError` that says what would work.
"""

from __future__ import annotations

from collections.abc import Sequence

from shelfie_env.game.actions import (
    CROSS_BASE,
    END_TURN,
    JOKER,
    NUM_DICE,
    STOP,
    SYMBOL_PLURALS,
    SYMBOLS,
    action_kind,
    circle_action,
    decode_circle,
)
from shelfie_env.game.engine import REROLL, Game

_SYMBOL_WORDS: dict[str, int] = {}
for _r, (_s, _pl) in enumerate(zip(SYMBOLS, SYMBOL_PLURALS)):
    _SYMBOL_WORDS[_s] = _SYMBOL_WORDS[_pl] = _r
_SYMBOL_WORDS.update({"meeple": 1, "meeples": 1, "trophys": 3, "boardgame": 1, "boardgames": 1})
_JOKER_WORDS = {"joker", "jokers", "j", "+joker", "+j", "wild", "with-joker"}
_SINGLE_LETTERS = {"p": 0, "g": 1, "m": 1, "b": 2, "t": 3, "c": 4}


def parse_symbol(word: str) -> int | None:
    """Row index of a symbol word: singular, plural, ``meeple`` or a unique prefix; else None."""
    w = word.lower().strip(",.")
    if w in _SYMBOL_WORDS:
        return _SYMBOL_WORDS[w]
    if w in _SINGLE_LETTERS:
        return _SINGLE_LETTERS[w]
    rows = {r for name, r in _SYMBOL_WORDS.items() if len(w) >= 2 and name.startswith(w)}
    return rows.pop() if len(rows) == 1 else None


class CommandError(ValueError):
    """A typed command that cannot be turned into a legal action (message says why)."""


COMMANDS = {
    "reroll": "reroll",
    "r": "reroll",
    "roll": "reroll",
    "keep": "stop",
    "stop": "stop",
    "s": "stop",
    "k": "stop",
    "circle": "circle",
    "c": "circle",
    "take": "circle",
    "end": "end",
    "e": "end",
    "done": "end",
    "pass": "end",
    "cross": "cross",
    "x": "cross",
    "hint": "hint",
    "hints": "hint",
    "help": "help",
    "?": "help",
    "h": "help",
    "board": "board",
    "b": "board",
    "show": "board",
    "moves": "moves",
    "legal": "moves",
    "m": "moves",
    "last": "last",
    "l": "last",
    "recent": "last",
    "quit": "quit",
    "q": "quit",
    "exit": "quit",
}

HELP = """\
Commands (first word may be abbreviated as shown in brackets):
  reroll 1 4 6     [r]  reroll the dice at those positions (1-6, as numbered under
                        the board; commas are fine). Equal dice are interchangeable,
                        so "reroll 2 3" with cats at 2,3,4 is the same move as
                        rerolling cats 3,4: the game always records the highest
                        positions of each face. Words work too: "reroll cats",
                        "reroll jokers", "reroll all".
  stop / keep      [s]  keep these dice and go to the circle phase
  circle cat 3     [c]  circle the 3rd cat (needs 3 cats, or 2 cats + a joker)
  circle cat 3 joker    ... using a joker for one of the dice. Without "joker"
                        the joker is used only when it is the only way.
  end              [e]  end the turn after at least one circle
  cross books      [x]  cross out a row (only when nothing can be circled)
  hint                  suggest good moves (the planner's; alone: exact values)
  board            [b]  show the table again
  last             [l]  the recent turns again, move by move ("last 6": six turns)
  moves            [m]  list the legal commands
  help             [?]  this text
  quit             [q]  leave the game
Symbols: plant, game (meeple), book, trophy, cat, singular or plural, or a
prefix (pl, ga, bo, tr, ca) or one letter (p, g/m, b, t, c). "cat 3" alone also
circles. Cells: (3) circled, X crossed, 3 free; numbers are the points.
At a terminal: arrow keys edit the line and recall earlier commands (also from
earlier games), Tab completes command and symbol words."""


def canonical_reroll(dice: Sequence[int], positions: Sequence[int]) -> int:
    """The canonical reroll id for rerolling the dice at 0-based ``positions``.

    Only how many dice of each face are rerolled matters; within a run of equal
    faces the highest positions are the ones marked (docs/rules.md).
    """
    wanted = [0] * 6
    for p in positions:
        wanted[dice[p]] += 1
    bits = 0
    for i in range(NUM_DICE - 1, -1, -1):
        face = dice[i]
        if wanted[face]:
            bits |= 1 << i
            wanted[face] -= 1
    return bits


def _parse_reroll(game: Game, args: list[str]) -> int:
    if not args:
        raise CommandError("say which dice to reroll, e.g. 'reroll 1 4 6' (positions 1-6) or 'reroll cats'")
    positions: set[int] = set()
    for token in " ".join(args).replace(",", " ").split():
        t = token.lower()
        if t.isdigit():
            p = int(t)
            if not 1 <= p <= NUM_DICE:
                raise CommandError(f"there is no die {p}: dice are numbered 1 to {NUM_DICE}")
            if p - 1 in positions:
                raise CommandError(f"die {p} is named twice")
            positions.add(p - 1)
        elif t in ("all", "everything"):
            positions.update(range(NUM_DICE))
        elif t in ("joker", "jokers"):
            found = [i for i, d in enumerate(game.dice) if d == JOKER]
            if not found:
                raise CommandError("there is no joker among the dice")
            positions.update(found)
        else:
            row = parse_symbol(t)
            if row is None:
                raise CommandError(f"'{token}' is neither a die position (1-6) nor a symbol")
            found = [i for i, d in enumerate(game.dice) if d == row]
            if not found:
                raise CommandError(f"there is no {SYMBOLS[row]} among the dice")
            positions.update(found)
    return canonical_reroll(game.dice, sorted(positions))


def _parse_circle(game: Game, args: list[str]) -> int:
    row = col = None
    joker = False
    for token in args:
        t = token.lower().strip(",.#")
        if t in _JOKER_WORDS or t in ("with",):
            joker = joker or t != "with"
        elif t.lstrip("#").isdigit():
            if col is not None:
                raise CommandError("give one item number (1-5)")
            col = int(t.lstrip("#")) - 1
            if not 0 <= col < 5:
                raise CommandError(f"item numbers are 1 to 5, not {col + 1}")
        else:
            r = parse_symbol(t)
            if r is None:
                raise CommandError(f"'{token}' is not a symbol (plant, game, book, trophy, cat)")
            if row is not None and r != row:
                raise CommandError("give one symbol")
            row = r
    if row is None or col is None:
        raise CommandError("say which item, e.g. 'circle cat 3' (symbol and item number 1-5)")
    if joker:
        return circle_action(row, col, True)
    plain = circle_action(row, col, False)
    with_joker = circle_action(row, col, True)
    legal = game.legal_actions()
    if plain not in legal and with_joker in legal:
        return with_joker
    return plain


def _parse_cross(args: list[str]) -> int:
    if len(args) != 1:
        raise CommandError("say which row to cross out, e.g. 'cross books'")
    t = args[0]
    row = int(t) - 1 if t.isdigit() else parse_symbol(t)
    if row is None or not 0 <= row < 5:
        raise CommandError(f"'{t}' is not a row (plants, games, books, trophies, cats)")
    return CROSS_BASE + row


def parse_command(game: Game, line: str) -> tuple[str, int | None]:
    """Turn a typed line into ``(kind, action)``; kind is an action kind or a meta command.

    Raises :class:`CommandError` for a line that names no move. The action is not
    yet checked for legality (the engine explains that).
    """
    words = line.strip().split()
    if not words:
        raise CommandError("empty command")
    head, args = words[0].lower(), words[1:]
    cmd = COMMANDS.get(head)
    if cmd is None and parse_symbol(head) is not None:  # "cat 3" = "circle cat 3"
        cmd, args = "circle", words
    if cmd is None:
        raise CommandError(f"unknown command '{words[0]}' (type 'help' for the list)")
    if cmd == "reroll":
        return "reroll", _parse_reroll(game, args)
    if cmd == "stop":
        return "stop", STOP
    if cmd == "circle":
        return "circle", _parse_circle(game, args)
    if cmd == "end":
        return "end", END_TURN
    if cmd == "cross":
        return "cross", _parse_cross(args)
    return cmd, None


def command_for(action: int) -> str:
    """The typed command that plays ``action`` (the inverse of :func:`parse_command`)."""
    kind = action_kind(action)
    if kind == "stop":
        return "stop"
    if kind == "reroll":
        return "reroll " + " ".join(str(i + 1) for i in range(NUM_DICE) if action >> i & 1)
    if kind == "circle":
        row, col, joker = decode_circle(action)
        return f"circle {SYMBOLS[row]} {col + 1}" + (" joker" if joker else "")
    if kind == "end":
        return "end"
    return f"cross {SYMBOL_PLURALS[action - CROSS_BASE]}"


def legal_commands(game: Game) -> list[str]:
    """Compact list of what may be typed now (rerolls summarised as one entry)."""
    if game.phase == REROLL:
        return ["stop", "reroll POSITIONS (any of 1-6)"]
    return [command_for(a) for a in game.legal_actions()]


