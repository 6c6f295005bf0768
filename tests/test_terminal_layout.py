"""The terminal game at a given width: the others' turns stay above the prompt, ``last``
shows them again, shelves sit side by side when they fit, and lines wrap between words."""

from __future__ import annotations

import io
import re

import pytest

from shelfie_env import cli
from shelfie_env.bots import make
from shelfie_env.game.actions import STOP, circle_action
from shelfie_env.game.engine import Game
from shelfie_env.play import terminal
from shelfie_env.play.layout import fit_line, side_by_side, table_text, visible_len, wrap, wrap_list

from .conftest import spec_state as state

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Scripted:
    """A bot that plays the given actions in order."""

    def __init__(self, *actions: int) -> None:
        self.actions = list(actions)

    def act_game(self, game: Game) -> int:
        return self.actions.pop(0)


def _game(width: int | None, commands: str, bot_first: bool = True) -> str:
    """Bea (a scripted bot) keeps her dice and circles plant #1, game #1 and book #1;
    then Ann types ``commands``."""
    s = state(dice=[0, 1, 2, 3, 4, 5], phase="reroll", rolls_left=2, current_player=0 if bot_first else 1)
    game = Game.from_dict(s, rng=1)
    bea = Scripted(STOP, circle_action(0, 0), circle_action(1, 0), circle_action(2, 0))
    seats = [terminal.Seat("Bea (player 1)", bea, "scripted"), terminal.Seat("Ann (player 2)")]
    out = io.StringIO()
    tg = terminal.TerminalGame(game, seats, 1, io.StringIO(commands), out, echo=True, width=width)
    assert tg.play() == 0
    return out.getvalue()


def _before_first_prompt(text: str) -> list[str]:
    return text[: text.index("Ann (player 2) (you)> ")].splitlines()


def test_the_bots_turn_is_summed_up_just_above_the_prompt_in_24_rows() -> None:
    lines = _before_first_prompt(_game(80, "quit\n"))
    screen = lines[-23:]  # what an 80x24 terminal still shows when the prompt appears
    text = "\n".join(screen)
    assert "So far:" in text
    assert ("  - Bea (player 1) rolled plant game book trophy cat joker, circled plant #1,\n"
            "    game #1 and book #1.") in text
    assert screen[-1].startswith("legal: ") and all(len(line) <= 80 for line in screen)


def test_the_summary_names_lockouts_and_says_since_your_last_turn() -> None:
    text = _game(80, "stop\ncircle cat 1\nend\nquit\n", bot_first=False)
    assert "Since your last turn:" not in text.split("circle cat 1")[0]
    assert "Since your last turn:\n  - Bea (player 1) rolled " in text


def test_last_shows_every_move_of_the_recent_turns_again() -> None:
    text = _game(80, "last\nlast 1\nlast x\nquit\n")
    after = text[text.index("> last\n") + len("> last\n"):]
    assert after.startswith("The last 1 turn, oldest first:\n\n  Bea (player 1) rolled plant game book trophy cat joker\n"
                            "  Bea (player 1) kept the dice\n  Bea (player 1) circled plant #1\n")
    assert "    turn over: 3 items circled" in after
    assert "? say how many turns, e.g. 'last 4'" in text
    fresh = _game(80, "quit\n", bot_first=False)
    assert "So far:" not in fresh
    assert "No turn has been played yet." in _game(80, "last\nquit\n", bot_first=False)


def test_shelves_sit_side_by_side_when_they_fit() -> None:
    game = Game.new(4, rng=2)
    names = [f"player {i}" for i in range(1, 5)]
    wide = table_text(game, 0, False, names, 120).splitlines()
    assert sum("plants" in line for line in wide) == 2 and any(line.count("plants") == 2 for line in wide)
    assert all(len(line) <= 120 for line in wide)
    narrow = table_text(game, 0, False, names, 80).splitlines()
    assert all(line.count("plants") <= 1 for line in narrow) and all(len(line) <= 80 for line in narrow)
    assert table_text(game, 0, False, names, None).count("plants") == 4


def test_columns_stay_put_whoever_is_on_turn() -> None:
    a = Game.new(2, rng=1)
    b = Game.from_dict(dict(a.to_dict(), current_player=1))
    names = ["Ann", "Bea"]
    col = [table_text(g, 0, False, names, 120).splitlines()[2].index("plants", 1) for g in (a, b)]
    assert col[0] == col[1]


def test_side_by_side_measures_colour_codes_as_nothing() -> None:
    red = "\x1b[31mab\x1b[0m"
    assert side_by_side([[red, "abcd"], ["x"]], 20, gap=2) == [red + "    x", "abcd"]
    assert visible_len(red) == 2


def test_legal_lines_wrap_between_entries_only() -> None:
    entries = [f"circle {s} {n}{' joker' if n > 1 else ''}" for s in ("plant", "trophy", "cat") for n in (1, 2, 3)]
    text = wrap_list("legal: ", entries + ["end"], 60)
    lines = text.splitlines()
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
    assert [e.strip() for e in " ".join(lines).replace("legal: ", "").split(" | ")] == entries + ["end"]
    assert all(line.startswith("       circle") or line.startswith("legal: ") for line in lines)
    assert wrap_list("legal: ", entries, None) == "legal: " + " | ".join(entries)  # a pipe gets one line


def test_sentences_wrap_between_words_and_keep_cells_whole() -> None:
    text = wrap("td (player 2) circled plant #2, book #2 +joker and trophy #2 after a long think about it all", 30,
                "    ", "  - ")
    for line in text.splitlines():  # never "book" at a line's end and "#2" or "+joker" at the next one's start
        assert len(line) <= 30 and not line.strip().startswith(("#", "+joker"))
    assert " ".join(text.split()) == "- td (player 2) circled plant #2, book #2 +joker and trophy #2 after a long think about it all"


def test_the_dice_line_breaks_between_dice() -> None:
    line = "Dice: 1:plant(used)  2:game(used)  3:game(used)  4:game(used)  5:cat(used)  6:cat(used)"
    fitted = fit_line(line, 80).splitlines()
    assert fitted == ["Dice: 1:plant(used)  2:game(used)  3:game(used)  4:game(used)  5:cat(used)",
                      "      6:cat(used)"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_play_at_a_terminal_fits_its_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")
    args = cli.build_parser().parse_args(["play", "--opponents", "greedy", "--seed", "1"])
    out = _Tty()
    assert terminal.run_play(args, io.StringIO("quit\n"), out) == 0
    assert any(line.count("plants") == 2 for line in out.getvalue().splitlines())
    piped = io.StringIO()
    assert terminal.run_play(args, io.StringIO("quit\n"), piped) == 0
    assert not any(line.count("plants") == 2 for line in piped.getvalue().splitlines())


def test_a_whole_game_at_80_columns_never_writes_a_longer_line() -> None:
    game = Game.new(2, rng=9)
    seats = [terminal.Seat("greedy (player 1)", make("greedy"), "greedy"),
             terminal.Seat("Ann Longer-Name (player 2)", make("greedy"), "greedy")]
    out = io.StringIO()
    assert terminal.TerminalGame(game, seats, None, io.StringIO(""), out, width=80).play() == 0
    assert "Game over" in out.getvalue()
    assert [line for line in out.getvalue().splitlines() if len(ANSI.sub("", line)) > 80] == []
    tail = out.getvalue()[out.getvalue().index("Final score breakdown"):]
    assert "plants  games  books  trophies  cats\n" in tail and "col5  total\n" in tail  # split in two
    assert tail.count("Ann Longer-Name (player 2)") == 3  # in both halves and the result