"""``shelfie play``: a game in the terminal against bots (or people at one keyboard).

Commands are words (``reroll 1 4 6``, ``stop``, ``circle cat 3 joker``, ``end``,
``cross books``, ``hint``, ``help``); every legal move has exactly one
spelling, and a typo gets an error that says what would work. After each
move the game says what it caused (a lockout, the last round, why the turn
ended). At a terminal the prompt has line editing, history and Tab completion
(``readline``); a pipe is read line by line. Bots load without torch, so the
first prompt comes in about a second. ``--level N`` seats the ladder's level N at every bot
seat, and the finished game is rated (:mod:`.terminal_rating`, ``shelfie rating``). What a player
types is parsed in :mod:`.commands`; the prompt's history and completion are :mod:`.line_editing`.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from shelfie_env.game.actions import (
    NUM_DICE,
    action_kind,
    action_name,
)
from shelfie_env.game.engine import CROSS, MAX_PLAYERS, REROLL, ROLLS_PER_TURN, Game
from shelfie_env.game.errors import IllegalActionError
from shelfie_env.game.render import dice_words, player_label
from shelfie_env.play import options
from shelfie_env.play.command_line import fail, shelfie_command, use_color
from shelfie_env.play.commands import (
    HELP,
    CommandError,
    canonical_reroll,
    command_for,
    legal_commands,
    parse_command,
    parse_symbol,
)
from shelfie_env.play.labels import bot_label
from shelfie_env.play.ladder_levels import is_level, table_level
from shelfie_env.play.layout import final_report, table_text, terminal_width, wrap, wrap_list
from shelfie_env.play.line_editing import complete_command, history_path, line_editing
from shelfie_env.play.narration import Voice, notices
from shelfie_env.play.replay import run_replay
from shelfie_env.play.replay_format import replay_data, write_replay
from shelfie_env.play.turns import TurnLog, describe, move_lines, summary


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


__all__ = [  # the commands and the prompt's line editing live in .commands and .line_editing
    "HELP",
    "CommandError",
    "Seat",
    "TerminalGame",
    "add_play_arguments",
    "canonical_reroll",
    "command_for",
    "complete_command",
    "history_path",
    "parse_command",
    "parse_symbol",
    "run_play",
]
