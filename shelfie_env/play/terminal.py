"""``shelfie play``: a game in the terminal against bots (or people at one keyboard).

Commands are words (``reroll 1 4 6``, ``stop``, ``circle cat 3 joker``, ``end``,
``cross books``, ``hint``, ``help``); every legal move has exactly one
spelling, and a typo gets an error that says what would work. After each
move the game says what it caused (a lockout, the last round, why the turn
ended). At a terminal the prompt has line editing, history and Tab completion
(``readline``); a pipe is read line by line. Bots load without torch, so the
first prompt comes in about a second. ``--level N`` seats the ladder's level N at every bot
seat, and the finished game is rated (:mod:`.terminal_rating`, ``shelfie rating``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from shelfie_env.game.actions import (
    CROSS_BASE,
    END_TURN,
    JOKER,
    NUM_DICE,
    STOP,
    SYMBOL_PLURALS,
    SYMBOLS,
    action_kind,
    action_name,
    circle_action,
    decode_circle,
)
from shelfie_env.game.engine import CROSS, MAX_PLAYERS, REROLL, ROLLS_PER_TURN, Game
from shelfie_env.game.errors import IllegalActionError
from shelfie_env.game.render import dice_words, player_label
from shelfie_env.play import options
from shelfie_env.play.command_line import fail, shelfie_command, use_color
from shelfie_env.play.labels import bot_label
from shelfie_env.play.ladder_levels import is_level, table_level
from shelfie_env.play.layout import final_report, table_text, terminal_width, wrap, wrap_list
from shelfie_env.play.narration import Voice, notices
from shelfie_env.play.replay import run_replay
from shelfie_env.play.replay_format import replay_data, write_replay
from shelfie_env.play.turns import TurnLog, describe, move_lines, summary

# --------------------------------------------------------------------------- words
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


# --------------------------------------------------------------------------- game loop
@dataclass
class Seat:
    """Who sits at a seat: the person (``bot is None``) or a named bot."""

    label: str
    bot: Any = None
    bot_name: str = ""


@dataclass
class TerminalGame:
    """One game of ``shelfie play`` over text streams (a terminal or a pipe)."""

    game: Game
    seats: list[Seat]
    human: int | None
    inp: TextIO = field(default_factory=lambda: sys.stdin)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    color: bool = False
    echo: bool = False  # echo commands read from a pipe so transcripts are readable
    reader: Callable[[str], str] | None = None
    """Reads a line after showing the prompt (``input`` with readline when interactive);
    raises ``EOFError`` at the end. ``None``: write the prompt to ``out``, read ``inp``."""
    person_name: str | None = None
    """The person's ``--name`` (the replay's seat name), if given."""
    width: int | Callable[[], int] | None = None
    """Columns to fit: shelves side by side where they fit, lines wrapped between words.
    A callable is asked before each table (a terminal can be resized); ``None`` (a pipe):
    shelves stacked and one line per ``legal:`` list, for scripts."""
    log: TurnLog = field(default_factory=TurnLog)
    seen: int = 0
    """How many turns of :attr:`log` the person has been shown a summary of."""
    start: dict[str, Any] = field(init=False)
    """The state the game began in (the replay's ``initial_state``)."""
    moves: list[tuple[int, int]] = field(default_factory=list)
    """Every move played, as ``(seat, action)``."""
    states: list[dict[str, Any]] = field(default_factory=list)
    """The state after each move."""
    hinted: bool = False
    """Whether the person was shown a hint (the game is then unrated)."""
    rated: bool = False
    """Whether the finished game goes to the ratings store (a hint then says that it unrates it)."""
    start_rng: dict[str, Any] | None = field(init=False)
    """The dice generator's state the game began with (None: not a numpy generator)."""

    def __post_init__(self) -> None:
        self.start = self.game.to_dict()
        bits = getattr(self.game.rng, "bit_generator", None)
        self.start_rng = None if bits is None else bits.state

    @property
    def names(self) -> list[str]:
        return [s.label for s in self.seats]

    def columns(self) -> int | None:
        return self.width() if callable(self.width) else self.width

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def show(self, status: bool = True) -> None:
        self.say()
        self.say(table_text(self.game, self.human, self.color, self.names, self.columns(), status))

    def who(self, p: int) -> str:
        return player_label(self.game, p, self.human, self.names)

    # ------------------------------------------------------------------ changes
    def apply(self, action: int) -> list[str]:
        """Play ``action`` for the seat on turn; return what it caused, in words (lockouts,
        the last round, why the turn ended, passes), to print after the move itself."""
        g = self.game
        before = g.clone()
        g.step(action)
        caused = notices(before, g, action, Voice(self.names, self.human))
        self.log.record(before, action, g, caused)
        self.moves.append((before.current, action))
        self.states.append(g.to_dict())
        return caused

    def replay(self) -> dict[str, Any]:
        """The game so far as a replay (:mod:`.replay_format`, the web table's download format)."""
        seats = [
            ("human", None, None) if s.bot is None else ("bot", bot_label(s.bot_name), s.bot_name)
            for s in self.seats
        ]
        if self.human is not None and self.person_name:
            seats[self.human] = ("human", self.person_name, None)
        return replay_data(seats, self.start, self.moves, self.states)

    def report(self, line: str, caused: list[str]) -> None:
        """Print a move and then its consequences, indented under it."""
        self.say(wrap(line, self.columns(), "  "))
        for text in caused:
            self.say(wrap(text, self.columns(), "    ", "  "))

    def bot_turn(self) -> None:
        """Let the bot on turn play until its turn ends, logging each decision."""
        g = self.game
        p = g.current
        seat = self.seats[p]
        if g.phase == REROLL and g.rolls_left == ROLLS_PER_TURN:
            self.say(wrap(f"{self.who(p)} rolled {dice_words(g.dice)}", self.columns(), "  "))
        while not g.over and g.current == p:
            try:
                action = seat.bot.act_game(g) if hasattr(seat.bot, "act_game") else seat.bot.act(g.to_dict())
                action = int(action)
                if action not in g.legal_actions():
                    raise IllegalActionError(action, g.why_illegal(action))
            except Exception as exc:  # a broken bot must not end the person's game
                action = g.legal_actions()[0]
                self.say(f"  ({seat.label} failed: {exc}; it plays {action_name(action)} instead)")
            caused = self.apply(action)
            line = f"{self.who(p)} {describe(action)}"
            if action_kind(action) == "reroll":  # the turn goes on after a reroll
                line += f" -> {dice_words(g.dice)}"
            self.report(line, caused)

    def recap(self) -> None:
        """The others' turns since the person last saw a summary, one sentence each, just
        above the prompt (the table printed before them may have pushed them off screen)."""
        turns = [t for t in self.log.since(self.seen) if t.seat != self.human]
        self.seen = len(self.log.turns)
        if not turns:
            return
        self.say("Since your last turn:" if any(t.seat == self.human for t in self.log.turns) else "So far:")
        for t in turns:
            self.say(wrap(summary(t, self.who), self.columns(), "    ", "  - "))

    def show_last(self, args: list[str]) -> None:
        """The ``last`` command: every move of the last round's turns (or of the last N turns)."""
        n = self.game.num_players
        if args:
            if len(args) != 1 or not args[0].isdigit() or int(args[0]) < 1:
                self.say("? say how many turns, e.g. 'last 4' (default: one round)")
                return
            n = int(args[0])
        turns = self.log.recent(n)
        if not turns:
            self.say("No turn has been played yet.")
            return
        self.say(f"The last {len(turns)} turn{'s' if len(turns) != 1 else ''}, oldest first:")
        for t in turns:
            self.say()
            for line in move_lines(t, self.who):
                indent = "    " if line.startswith("  ") else "  "
                self.say(wrap(line.strip(), self.columns(), indent + "  ", indent))

    def human_turn(self) -> bool:
        """Read and play one command; return False when the person quits (or EOF)."""
        g = self.game
        self.say(wrap_list("legal: ", legal_commands(g), self.columns()))
        line = self.read_line(f"{self.who(g.current)}> ")
        if not line:
            self.say()
            self.say("(end of input: leaving the game)")
            return False
        if self.echo:
            self.say(line.rstrip("\n"))
        if not line.strip():
            return True
        try:
            kind, action = parse_command(g, line)
        except CommandError as exc:
            self.say(wrap(str(exc), self.columns(), "  ", "? "))
            return True
        if kind == "quit":
            self.say("Leaving the game.")
            return False
        if kind == "help":
            self.say(HELP)
            return True
        if kind == "board":
            self.show()
            return True
        if kind == "last":
            self.show_last(line.split()[1:])
            return True
        if kind == "moves":
            self.say(wrap_list("legal: ", [command_for(a) for a in g.legal_actions()], self.columns()))
            return True
        if kind == "hint":
            self.show_hint()
            return True
        assert action is not None
        try:
            caused = self.apply(action)
        except IllegalActionError as exc:
            tip = ""
            if g.phase == REROLL and kind in ("circle", "end", "cross"):
                tip = " (type 'stop' to keep these dice first)"
            elif g.phase == CROSS and kind == "circle":
                tip = " (nothing can be circled: cross out a row, e.g. '" + legal_commands(g)[0] + "')"
            self.say(
                wrap(f"{action_name(action)} is not possible: {exc.reason}{tip}", self.columns(), "  ", "? ")
            )
            return True
        line_out = f"{self.who(self.human if self.human is not None else 0)} {describe(action)}"
        if kind == "reroll":
            typed = [t for t in line.replace(",", " ").split()[1:] if t.isdigit()]
            canon = [str(i + 1) for i in range(NUM_DICE) if action >> i & 1]
            if typed and sorted(typed) != canon:
                line_out += f" (the same move as {','.join(sorted(typed))}: equal dice are interchangeable)"
            line_out += f" -> {dice_words(g.dice)}"
        self.report(line_out, caused)
        if not g.over:
            self.show()
        return True

    def read_line(self, prompt: str) -> str:
        """One typed line with its newline ("" at end of input), through :attr:`reader` if set."""
        if self.reader is None:
            self.out.write(prompt)
            self.out.flush()
            return self.inp.readline()
        try:
            return self.reader(prompt) + "\n"
        except EOFError:
            return ""

    def show_hint(self) -> None:
        """The three best moves: exact values in a solo game (:mod:`.solo_hints`), else the planner's."""
        if self.game.num_players == 1:
            from shelfie_env.play.solo_hints import solo_hints as advise
        else:
            try:
                advise = importlib.import_module("shelfie_env.bots.planner.hint").hint
            except ModuleNotFoundError as exc:
                if exc.name != "shelfie_env.bots.planner.hint":
                    raise
                self.say("Hints are not available yet in this installation.")
                return
        try:
            hints = advise(self.game.to_dict(), k=3)
        except Exception as exc:  # advice must never end the game
            self.say(f"The hint engine failed: {exc}")
            return
        if self.rated and not self.hinted:
            self.say("(You asked for a hint: this game is now unrated.)")
        self.hinted = True
        self.say("Hints (best first):")
        width = self.columns()
        for i, h in enumerate(hints, 1):
            head, reason = _hint_text(h)
            self.say(wrap(head, width, "     ", f"  {i}. "))
            if reason:
                self.say(wrap(reason, width, "     ", "     "))
        for note in _hint_notes(hints):
            self.say(wrap(note, width, "  ", "  "))

    def play(self) -> int:
        """Run the game to its end (or until the person quits); return 0."""
        self.show()
        while not self.game.over:
            if self.seats[self.game.current].bot is not None:
                self.bot_turn()
                if not self.game.over and self.seats[self.game.current].bot is None:
                    self.show()
                    self.recap()
            elif not self.human_turn():
                return 0
        self.show(status=False)
        self.say()
        self.say(final_report(self.game, self.names, self.human, self.columns()))
        if self.game.num_players == 1:
            from shelfie_env.play.solo_review_text import solo_end_text

            self.say(solo_end_text(self.start, [a for _, a in self.moves], self.states, self.columns()))
        return 0


def _hint_text(h: Any) -> tuple[str, str]:
    """A hint as ``(move and what to type, reason)``."""
    if isinstance(h, dict):
        action = h.get("action")
        name = h.get("name") or (action_name(action) if isinstance(action, int) else str(action))
        cmd = f" (type: {command_for(action)})" if isinstance(action, int) and 0 <= action < 120 else ""
        return f"{name}{cmd}", str(h.get("reason") or "")
    if isinstance(h, (tuple, list)) and h and isinstance(h[0], int):
        return " ".join([action_name(h[0])] + [str(x) for x in h[1:]]), ""
    return str(h), ""


HINT_NOTES = {
    "win chance": "win chance: the planner's estimate of your chance to win after that move, "
    "if you play on as it would.",
    "rank edge": "rank edge: the planner's estimate of where you finish, from -1 (last) to +1 (first).",
    "EV ": "EV: the final score the planner expects after that move.",
    "exact": "exact: the final score you can expect after that move if you play perfectly from then on "
    "(the solo game is solved, so this is no estimate).",
}


def _hint_notes(hints: Sequence[Any]) -> list[str]:
    """What the measures at the end of the reasons mean, once for those that appear."""
    reasons = " ".join(str(h.get("reason", "")) for h in hints if isinstance(h, dict))
    return [note for key, note in HINT_NOTES.items() if f"({key}" in reasons]


# --------------------------------------------------------------------------- play setup
def _load_bot(spec: str, seed: int | None, players: int) -> Any:
    """Build a bot from its spec (``ppo:path=runs/x/best.zip``) for a ``players`` table, or raise
    ``ValueError`` saying why it cannot sit there."""
    from shelfie_env import bots
    from shelfie_env.bots.spec import parse_spec

    name, kwargs = parse_spec(spec)
    if name in bots.available() and bots.needs_tape(name):
        raise ValueError("it reads the dice ahead and plays only arena games on common dice (shelfie arena)")
    if name == "random":
        kwargs.setdefault("seed", seed)
    if "path" not in kwargs:
        bots.check_table(name, players)
    if (name in ("ppo", "td") or is_level(name)) and "path" not in kwargs:
        kwargs.setdefault("num_players", players)
    try:
        bot = bots.make(name, **kwargs)
    except FileNotFoundError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    trained_for = getattr(bot, "num_players", players)
    if trained_for != players:
        raise ValueError(
            f"it plays {trained_for}-player games and this table has {players} players; "
            f"use --players {trained_for}, or another bot (greedy, planner)"
        )
    return bot


DEFAULT_BOT = "td"
"""The opponent of every seat unless the command names one: the shipped self-taught bot,
with the model of the table's size (``td_2p``, ``td_3p``, ``td_4p``)."""


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``shelfie play`` (each value is checked as it is parsed, see :mod:`.options`)."""
    parser.add_argument(
        "--players", type=options.players, default=None, help="players in total, 1-4 (default 2; 1 = solo)"
    )
    who = parser.add_mutually_exclusive_group()
    who.add_argument(
        "--opponents",
        type=options.bot_list,
        default=None,
        help="comma-separated bot names, e.g. greedy,random",
    )
    who.add_argument(
        "--opponent",
        action="append",
        type=options.bot_spec,
        metavar="SPEC",
        default=None,
        help="one opponent seat per flag, a bot spec with options, e.g. --opponent ppo:path=runs/x/best.zip",
    )
    who.add_argument(
        "--bot",
        type=options.bot_spec,
        default=None,
        help=f"bot spec for every opponent seat, e.g. planner or ppo:path=my.npz (default: {DEFAULT_BOT}, "
        "the shipped self-taught bot for the table's size)",
    )
    who.add_argument(
        "--level",
        default=None,
        metavar="N",
        help="every opponent seat plays this level of the ladder: 1-6, level-3 or a name (beginner, casual, "
        "intermediate, advanced, expert, master); the game is rated (see 'shelfie rating')",
    )
    parser.add_argument(
        "--seat", type=options.seat, default=1, help="your seat, 1-based (seat 1 starts; default 1)"
    )
    parser.add_argument(
        "--seed", type=options.seed, default=None, help="seed for the dice (and random bots), 0 or more"
    )
    parser.add_argument(
        "--name",
        type=options.player_name,
        default=None,
        help=f"your name on the table (at most {options.MAX_NAME} characters)",
    )
    parser.add_argument(
        "--no-color", action="store_true", help="plain text (also automatic when not a terminal)"
    )
    parser.add_argument(
        "--replay",
        type=options.replay_file,
        metavar="FILE",
        default=None,
        help="show a saved replay instead of playing",
    )
    parser.add_argument(
        "--save",
        type=options.save_file,
        metavar="FILE",
        default=None,
        help="when the game ends (or you leave it), save it to FILE as a replay JSON, the web table's "
        "download format: watch it with 'shelfie replay FILE', review it with '--review'",
    )
    parser.add_argument(
        "--no-rating",
        action="store_true",
        help="keep a finished game against the levels out of the ratings store (it is not rated)",
    )
    parser.add_argument(
        "--db",
        metavar="FILE",
        default=None,
        help="the ratings store, the web table's database (default: the one 'shelfie serve' uses)",
    )


class SetupError(ValueError):
    """A table ``shelfie play`` cannot set up (the message is the error line)."""


def _opponents(args: argparse.Namespace) -> tuple[list[str], int, str]:
    """The opponents' bot specs, the table size and the option that named them."""
    listed = getattr(args, "opponent", None)
    if args.opponents is not None or listed:
        option = "--opponent" if listed else "--opponents"
        names = listed or [n.strip() for n in args.opponents.split(",") if n.strip()]
        if not names:
            raise SetupError("--opponents needs at least one bot name, e.g. --opponents greedy")
        players = len(names) + 1
        if players > MAX_PLAYERS:
            raise SetupError(f"{option}: at most {MAX_PLAYERS - 1} opponents, got {players - 1}")
        if args.players is not None and args.players != players:
            raise SetupError(f"--players {args.players} does not match {len(names)} opponents (+ you = {players})")
        return names, players, option
    players = 2 if args.players is None else args.players
    if not 1 <= players <= MAX_PLAYERS:
        raise SetupError(f"--players must be 1-{MAX_PLAYERS}, got {players}")
    level = getattr(args, "level", None)
    if level is not None:
        try:
            spec = table_level(level, players).spec
        except ValueError as exc:
            raise SetupError(f"--level {level}: {exc}") from None
        return [spec] * (players - 1), players, "--level"
    option = "--bot" if args.bot else "the default opponent"
    return [args.bot or DEFAULT_BOT] * (players - 1), players, option


def _seats(args: argparse.Namespace, names: list[str], players: int, option: str) -> list[Seat]:
    """The table's seats: the person at ``--seat``, the bots ``names`` at the others (one loaded
    bot for every seat of the default opponent or of a level)."""
    human = args.seat - 1
    seats: list[Seat] = []
    shared: dict[str, Any] = {}
    it = iter(names)
    for p in range(players):
        if p == human:
            seats.append(Seat(f"{args.name} (player {p + 1})" if args.name else f"player {p + 1}"))
            continue
        bot_name = next(it)
        try:
            bot = shared.get(bot_name)
            if bot is None:
                bot = _load_bot(bot_name, None if args.seed is None else args.seed + 1000 * p, players)
                if option in ("the default opponent", "--level"):
                    shared[bot_name] = bot
        except (ValueError, ImportError) as exc:
            raise SetupError(f"{option}: bot {bot_name!r} cannot play this table: {exc}") from None
        seats.append(Seat(f"{bot_label(bot_name)} (player {p + 1})", bot, bot_name))
    return seats


def run_play(args: argparse.Namespace, inp: TextIO | None = None, out: TextIO | None = None) -> int:
    """``shelfie play``: set the table up and play; a finished game against the levels goes to
    the ratings store (:mod:`.terminal_rating`) unless ``--no-rating``."""
    inp = sys.stdin if inp is None else inp
    out = sys.stdout if out is None else out
    save = getattr(args, "save", None)
    if args.replay:
        if save:
            return fail(
                "--save saves a game played here and --replay shows a saved one: give one of them", "play"
            )
        return run_replay(argparse.Namespace(file=args.replay, no_color=args.no_color), out, command="play")
    try:
        names, players, option = _opponents(args)
        if not 1 <= args.seat <= players:
            raise SetupError(f"--seat must be 1-{players}, got {args.seat}")
        if args.seed is not None and args.seed < 0:
            raise SetupError(f"--seed must be 0 or more, got {args.seed}")
        seats = _seats(args, names, players, option)
        keeper = _keeper(args, seats)
    except SetupError as exc:
        return fail(str(exc), "play")
    game = Game.new(players, rng=args.seed)
    interactive = bool(getattr(inp, "isatty", lambda: False)())
    to_terminal = bool(getattr(out, "isatty", lambda: False)())
    tg = TerminalGame(
        game,
        seats,
        args.seat - 1,
        inp,
        out,
        color=use_color(args, out),
        echo=not interactive,
        person_name=args.name,
        width=terminal_width if to_terminal else None,
        rated=keeper is not None,
    )
    save_history: Callable[[], None] | None = None
    if interactive and inp is sys.stdin and out is sys.stdout:
        editing = line_editing()
        if editing is not None:
            tg.reader, save_history = editing
    if interactive:
        tg.say("Type 'help' for the commands" + (" (arrow keys recall earlier ones)." if tg.reader else "."))
    try:
        status = tg.play()
        if keeper is not None and tg.game.over:
            tg.say(wrap(keeper.keep(tg), tg.columns(), "  "))
    finally:
        if keeper is not None:
            keeper.close()
        if save_history is not None:
            save_history()
        if save:
            status = _save(tg, save)
    return status


def _keeper(args: argparse.Namespace, seats: list[Seat]) -> Any:
    """The ratings store the game goes to (:class:`.terminal_rating.Keeper`), opened now so that a
    store that cannot be used is said before the game; None: the game is not rated (no level at
    the table, or ``--no-rating``)."""
    if getattr(args, "no_rating", False) or not any(is_level(s.bot_name) for s in seats if s.bot is not None):
        return None
    from shelfie_env.play.terminal_rating import Keeper

    try:
        return Keeper.open(getattr(args, "db", None))
    except ValueError as exc:
        raise SetupError(str(exc)) from None


def _save(tg: TerminalGame, path: str) -> int:
    """Write ``tg``'s game to ``path`` and say how to watch and review it; 0, or 2 if it cannot."""
    try:
        write_replay(path, tg.replay())
    except OSError as exc:
        return fail(f"cannot save the game to {path}: {exc.strerror or exc}", "play")
    command = f"{shelfie_command()} replay {shlex.quote(path)}"
    if tg.game.over:
        tg.say(f"Saved the game to {path}; review it with: {command} --review")
    else:
        tg.say(f"Saved the game to {path}; watch it with: {command}")
    return 0


# --------------------------------------------------------------------------- line editing
COMPLETIONS_FIRST = (
    "reroll",
    "stop",
    "keep",
    "circle",
    "end",
    "cross",
    "hint",
    "board",
    "last",
    "moves",
    "help",
    "quit",
)
COMPLETIONS_LATER = SYMBOLS + SYMBOL_PLURALS + ("joker", "all")


def history_path() -> Path | None:
    """Where typed commands are kept between games: ``$SHELFIE_HISTORY`` (empty: nowhere),
    else ``$XDG_STATE_HOME/shelfie/history`` (``~/.local/state/shelfie/history``)."""
    env = os.environ.get("SHELFIE_HISTORY")
    if env is not None:
        return Path(env).expanduser() if env else None
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "shelfie" / "history"


def complete_command(text: str, state: int, line: str) -> str | None:
    """The ``state``-th completion of the word ``text`` in the typed ``line`` (readline's protocol)."""
    first = not line[: len(line) - len(text)].strip()
    words = COMPLETIONS_FIRST if first else COMPLETIONS_LATER
    matches = [w + " " for w in words if w.startswith(text.lower())]
    return matches[state] if state < len(matches) else None


def line_editing() -> tuple[Callable[[str], str], Callable[[], None]] | None:
    """``(read, save)`` for interactive play: ``input`` with line editing, history (kept in
    :func:`history_path`) and Tab completion, or ``None`` where ``readline`` is missing.

    Imported only here, so piped play never loads readline.
    """
    try:
        import readline
    except ImportError:  # e.g. Windows without pyreadline
        return None
    path = history_path()
    if path is not None:
        try:
            readline.read_history_file(path)
        except (OSError, ValueError):  # no history yet, or an unreadable file
            pass
    readline.set_history_length(1000)
    readline.set_completer(lambda text, state: complete_command(text, state, readline.get_line_buffer()))
    readline.set_completer_delims(" \t,")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")

    def save() -> None:
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)
        except OSError:  # a read-only home must not spoil the end of a game
            pass

    return input, save
