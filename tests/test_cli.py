"""The ``shelfie`` command: terminal play driven through a pipe, parsing, replays, dispatch."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

import pytest

from shelfie_env import cli
from shelfie_env.bots import make
from shelfie_env.cli import main
from shelfie_env.game.actions import END_TURN, STOP, circle_action, cross_action
from shelfie_env.game.engine import Game
from shelfie_env.play import replay, terminal
from shelfie_env.play.terminal import CommandError, canonical_reroll, command_for, parse_command, parse_symbol

from .conftest import spec_state as state

ROOT = Path(__file__).resolve().parents[1]

EMPTY = [[0] * 5 for _ in range(5)]


# ----------------------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    "word,row",
    [("cat", 4), ("cats", 4), ("CA", 4), ("c", 4), ("plant", 0), ("plants", 0), ("pl", 0), ("game", 1),
     ("meeple", 1), ("meeples", 1), ("book", 2), ("books", 2), ("trophy", 3), ("trophies", 3), ("tr", 3)],
)
def test_symbols_accept_singular_plural_and_abbreviations(word: str, row: int) -> None:
    assert parse_symbol(word) == row


def test_unknown_symbol_is_none() -> None:
    assert parse_symbol("dog") is None


def test_reroll_positions_map_to_the_canonical_id() -> None:
    g = Game.from_dict(state(phase="reroll", rolls_left=2, dice=[0, 4, 4, 4, 5, 5]))
    # "reroll 2" (the first cat) is the same move as rerolling the last cat (position 4).
    assert parse_command(g, "reroll 2") == ("reroll", 1 << 3)
    assert parse_command(g, "r 2,3") == ("reroll", 1 << 2 | 1 << 3)
    assert parse_command(g, "reroll 5") == ("reroll", 1 << 5)
    assert parse_command(g, "reroll cats") == ("reroll", 0b001110)
    assert parse_command(g, "reroll all") == ("reroll", 63)
    for bits in range(1, 64):
        positions = [i for i in range(6) if bits >> i & 1]
        assert canonical_reroll(g.dice, positions) in g.legal_actions()


def test_circle_commands() -> None:
    g = Game.from_dict(state(dice=[2, 2, 4, 4, 4, 5]))
    assert parse_command(g, "circle cat 3") == ("circle", circle_action(4, 2, False))
    assert parse_command(g, "circle cats 3 joker") == ("circle", circle_action(4, 2, True))
    assert parse_command(g, "c cat #4 +j") == ("circle", circle_action(4, 3, True))
    assert parse_command(g, "cat 2") == ("circle", circle_action(4, 1, False))
    # Only the joker makes book #3 possible: the joker is used without being asked.
    assert parse_command(g, "circle book 3") == ("circle", circle_action(2, 2, True))
    assert parse_command(g, "stop") == ("stop", STOP)
    assert parse_command(g, "end") == ("end", END_TURN)
    assert parse_command(g, "x books") == ("cross", cross_action(2))


@pytest.mark.parametrize("line", ["dance", "circle dog 3", "circle cat", "circle cat 9", "reroll 7",
                                  "reroll 1 1", "reroll", "cross", "cross dogs"])
def test_bad_commands_raise_a_command_error(line: str) -> None:
    g = Game.from_dict(state(phase="reroll", rolls_left=2))
    with pytest.raises(CommandError):
        parse_command(g, line)


def test_command_for_round_trips_every_legal_action() -> None:
    rng_game = Game.new(2, rng=5)
    bot = make("random", seed=5)
    for _ in range(300):
        if rng_game.over:
            break
        for a in rng_game.legal_actions():
            assert parse_command(rng_game, command_for(a))[1] == a
        rng_game.step(bot.act_game(rng_game))


# ----------------------------------------------------------------------------- in-process play
def run_lines(lines: list[str], *args: str) -> str:
    out = io.StringIO()
    parsed = cli.build_parser().parse_args(["play", *args])
    rc = terminal.run_play(parsed, io.StringIO("".join(line + "\n" for line in lines)), out)
    assert rc == 0
    return out.getvalue()


def test_mistakes_are_explained_and_the_game_goes_on() -> None:
    text = run_lines(["dance", "circle cat 3", "reroll 9", "help", "stop", "moves", "quit"],
                     "--seed", "1", "--opponents", "greedy")
    assert "unknown command 'dance'" in text
    assert "is not possible: it is the reroll phase" in text and "type 'stop'" in text
    assert "there is no die 9" in text
    assert "Commands (first word" in text
    assert "kept the dice" in text
    assert text.rstrip().endswith("Leaving the game.")


def test_eof_quits_cleanly() -> None:
    text = run_lines([], "--seed", "2", "--opponents", "random")
    assert "end of input" in text


def test_hint_command_says_whether_hints_exist() -> None:
    text = run_lines(["hint", "quit"], "--seed", "3", "--opponents", "greedy")
    try:
        import shelfie_env.bots.planner.hint  # noqa: F401
    except ModuleNotFoundError:
        assert "Hints are not available yet" in text
    else:
        assert "Hints (best first):" in text and "1. " in text


def test_solo_game_has_no_bots_and_bad_setups_fail(capsys: pytest.CaptureFixture[str]) -> None:
    text = run_lines(["quit"], "--players", "1", "--seed", "4")
    assert "player 1 (you)" in text and "player 2" not in text
    for args in (["--opponents", "greedy,greedy,greedy,greedy"], ["--players", "3",
                 "--opponents", "greedy"], ["--seat", "3", "--bot", "greedy"], ["--opponents", "nosuchbot"]):
        assert (
            terminal.run_play(cli.build_parser().parse_args(["play", *args]), io.StringIO(""), io.StringIO()) == 2
        )
    assert "nosuchbot" in capsys.readouterr().err


# ----------------------------------------------------------------------------- piped subprocess game
def _read_until_prompt(proc: subprocess.Popen[bytes]) -> str | None:
    """Read the CLI's output up to the next prompt ("...> "); None at end of output."""
    buf = bytearray()
    assert proc.stdout is not None
    while True:
        ch = proc.stdout.read(1)
        if not ch:
            return None if not buf else buf.decode()
        buf += ch
        if buf.endswith(b"> ") and b"\nlegal: " in buf[-600:]:
            return buf.decode()


def _piped_game(*args: str) -> str:
    """Plays a full game through a pipe: stop rolling, then the first legal move listed."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "shelfie_env.cli", "play", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env,
    )
    transcript = []
    assert proc.stdin is not None
    for _ in range(500):
        chunk = _read_until_prompt(proc)
        if chunk is None:
            break
        transcript.append(chunk)
        if not chunk.endswith("> "):
            break
        legal = re.findall(r"^legal: (.*)$", chunk, re.M)[-1].split(" | ")
        command = "stop" if "stop" in legal else legal[0]
        proc.stdin.write((command + "\n").encode())
        proc.stdin.flush()
    proc.stdin.close()
    rc = proc.wait(timeout=60)
    assert rc == 0, proc.stderr.read().decode() if proc.stderr else ""
    return "".join(transcript)


RESULT = re.compile(r"^Game over — (.+) (wins?|tie) with \d+ points( \(.*\))?\.$", re.M)


def test_a_whole_piped_game_against_greedy() -> None:
    text = _piped_game("--seed", "1", "--opponents", "greedy", "--name", "Ann")
    assert "\x1b[" not in text  # no colour when not a terminal
    assert "Final score breakdown" in text
    assert len(RESULT.findall(text)) == 1  # one result line, after the breakdown
    assert text.rstrip().splitlines()[-1].startswith("Game over — ")
    assert "greedy (player 2) circled" in text and "Ann (player 1) (you) circled" in text
    assert "greedy (player 2) rolled " in text
    assert "turn over: " in text


def test_a_piped_four_seat_game_with_one_person() -> None:
    text = _piped_game("--players", "4", "--bot", "greedy", "--seat", "2", "--seed", "5")
    assert "player 2 (you) circled" in text
    for seat in (1, 3, 4):
        assert f"greedy (player {seat}) circled" in text
    assert len(RESULT.findall(text)) == 1
    assert "Final score breakdown" in text


# ----------------------------------------------------------------------------- replays
def _replay(tmp_path: Path) -> tuple[Path, list[dict]]:
    game = Game.new(2, rng=11)
    bot = make("greedy")
    states = [game.to_dict()]
    actions = []
    while not game.over:
        seat = game.current
        a = bot.act_game(game)
        game.step(a)
        actions.append({"seat": seat, "action": a, "name": terminal.action_name(a)})
        states.append(game.to_dict())
    data = {"version": 1, "initial_state": states[0], "actions": actions, "states": states,
            "final_state": states[-1]}
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(data))
    return path, actions


def test_replay_shows_the_start_each_turn_and_the_result(tmp_path: Path) -> None:
    path, actions = _replay(tmp_path)
    out = io.StringIO()
    assert replay.run_replay(Namespace(file=str(path), no_color=True), out) == 0
    text = out.getvalue()
    assert text.startswith("Replay of a 2-player game: player 1 and player 2, in seat order.\n\nStarting position:")
    turns = text.count("  turn over: ")
    assert turns > 10 and text.count("Scores:") == turns  # the start, then the table after each turn but the last
    last = actions[-1]
    assert f"player {last['seat'] + 1} {terminal.describe(last['action'])}" in text
    assert "Final score breakdown" in text and text.rstrip().splitlines()[-1].startswith("Game over — player ")
    every = io.StringIO()
    assert replay.run_replay(Namespace(file=str(path), no_color=True, every_move=True), every) == 0
    assert every.getvalue().count("Scores:") == len(actions)  # the start and every position but the final one


def _web_export(tmp_path: Path, start: dict) -> tuple[Path, list[dict]]:
    """A replay shaped like the web table's download (GameService.replay): seat names, the initial
    state, one state after each move; move entries also carry the dice (and a field nobody knows)."""
    game = Game.from_dict(start, rng=3)
    bot = make("greedy")
    actions, states = [], []
    while not game.over:
        seat, a = game.current, bot.act_game(game)
        game.step(a)
        actions.append({"seat": seat, "action": a, "name": terminal.action_name(a), "dice": list(game.dice),
                        "t": 1.5})
        states.append(game.to_dict())
    data = {
        "version": 1, "game_id": "abc123",
        "seats": [{"seat": 0, "type": "human", "name": "Ana", "bot": None},
                  {"seat": 1, "type": "bot", "name": "greedy bot", "bot": "greedy"}],
        "initial_state": start, "actions": actions, "states": states, "final_state": game.to_dict(),
    }
    path = tmp_path / "web.json"
    path.write_text(json.dumps(data))
    return path, actions


def test_replay_of_a_web_game_names_the_players_and_shows_the_given_start(tmp_path: Path) -> None:
    start = state(phase="reroll", rolls_left=2, boards=[_shelf([1, 1, 1, 0, 0]), EMPTY])
    path, actions = _web_export(tmp_path, start)
    out = io.StringIO()
    assert replay.run_replay(Namespace(file=str(path), no_color=True), out) == 0
    text = out.getvalue()
    assert text.startswith("Replay (web game abc123) of a 2-player game: Ana and greedy bot, in seat order.")
    head = text[: text.index("Ana kept the dice" if actions[0]["action"] == STOP else "Ana rerolled")]
    assert "Starting position:" in head and "cats      (1)  (2)  (3)   5    8    +6" in head
    assert "greedy bot circled" in text and "player 1" not in text
    assert re.search(r"^Game over — (Ana|greedy bot) wins? with \d+ points \((Ana|greedy bot) \d+\)\.$", text, re.M)


def test_replay_reads_a_web_move_log_with_states_and_events(tmp_path: Path) -> None:
    """Entries shaped like the web table's move log: each with its ``state`` and ``events``."""
    path, actions = _web_export(tmp_path, Game.new(2, rng=6).to_dict())
    data = json.loads(path.read_text())
    states = data.pop("states")
    data["actions"] = [dict(a, index=i, state=st, events={"rolled": None, "opening": None})
                       for i, (a, st) in enumerate(zip(actions, states))]
    path.write_text(json.dumps(data))
    out = io.StringIO()
    assert replay.run_replay(Namespace(file=str(path), no_color=True), out) == 0
    assert out.getvalue().count("  turn over: ") > 5  # positions came from the entries' states
    # Without states (nor a starting position), the events still tell the opening roll and a reroll's new faces.
    del data["initial_state"]
    reroll = next(a for a in actions if 1 <= a["action"] <= 63)
    data["actions"] = [{"seat": 0, "action": 0, "name": "stop rolling", "events": {"opening": [0, 1, 1, 2, 4, 5]}},
                       {"seat": 1, "action": reroll["action"], "name": reroll["name"], "events": {"rolled": [4, 5]}}]
    path.write_text(json.dumps(data))
    out = io.StringIO()
    assert replay.run_replay(Namespace(file=str(path), no_color=True), out) == 0
    text = out.getvalue()
    assert "Ana rolled plant game game book cat joker\nAna kept the dice" in text
    assert "greedy bot rerolled" in text and "-> new dice: cat joker" in text


def test_replay_seat_names() -> None:
    seats = [{"type": "human", "name": " Ana  B "}, {"type": "bot", "bot": "greedy"},
             {"type": "bot", "bot": "greedy", "name": "greedy bot"}, {"type": "human"}]
    assert replay.seat_names({"seats": seats}, 4) == [
        "Ana B", "greedy bot (player 2)", "greedy bot (player 3)", "player 4"
    ]
    assert replay.seat_names({"names": ["Ana", 3]}, 3) == ["Ana", "player 2", "player 3"]
    assert replay.seat_names({}, 1) == ["player 1"]


def test_replay_reads_move_entries_tolerantly(tmp_path: Path) -> None:
    path, actions = _web_export(tmp_path, Game.new(2, rng=4).to_dict())
    data = json.loads(path.read_text())
    del data["states"]
    data["actions"] = [actions[0]["action"], "a move in words", {"seat": 1, "name": "circle cat #1"}, None]
    path.write_text(json.dumps(data))
    out = io.StringIO()
    assert replay.run_replay(Namespace(file=str(path), no_color=True), out) == 0
    text = out.getvalue()
    assert "?: a move in words" in text and "greedy bot: circle cat #1" in text and "Final position:" in text
    faces = replay.read_move({"seat": 0, "action": 7, "roll": ["cat", "joker"]})
    assert (faces.seat, faces.action, faces.roll) == (0, 7, [4, 5])
    assert replay.read_move({"action": True}).action is None


def test_replay_without_states_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, actions = _replay(tmp_path)
    data = json.loads(path.read_text())
    del data["states"]
    path.write_text(json.dumps(data))
    out = io.StringIO()
    assert replay.run_replay(Namespace(file=str(path), no_color=True), out) == 0
    assert "Starting position" in out.getvalue() and "Final position" in out.getvalue()
    bad = tmp_path / "bad.json"
    for content in (
        "not json", "[]", json.dumps({"version": 2}), json.dumps({"version": 1, "states": [{"x": 1}]})
    ):
        bad.write_text(content)
        assert replay.run_replay(Namespace(file=str(bad), no_color=True), io.StringIO()) == 2
    assert replay.run_replay(Namespace(file=str(tmp_path / "missing.json"), no_color=True), io.StringIO()) == 2
    assert "invalid state field" in capsys.readouterr().err


# ----------------------------------------------------------------------------- dispatcher
def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for name in ("play", "replay", "serve", "eval", "arena", "train"):
        assert name in text


def test_missing_subcommand_module_is_reported(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(cli.LAZY_COMMANDS, "train", ("shelfie_env.train.no_such_module", "train", "train"))
    assert main(["train", "--steps", "10"]) == 2
    assert "not available in this installation" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_play_imports_no_torch_or_fastapi_and_piped_play_no_readline() -> None:
    code = (
        "import sys, io\n"
        "sys.stdin = io.StringIO('quit\\n')\n"
        "from shelfie_env.cli import main\n"
        "assert main(['play', '--seed', '1', '--opponents', 'greedy']) == 0\n"
        "bad = [m for m in ('torch', 'fastapi', 'uvicorn', 'stable_baselines3', 'readline') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, timeout=120)


def test_reroll_of_equal_dice_is_mapped_and_explained() -> None:
    game = Game.from_dict(state(phase="reroll", rolls_left=2, dice=[3, 4, 5, 5, 5, 5]), rng=1)
    out = io.StringIO()
    seats = [terminal.Seat("me"), terminal.Seat("greedy (player 2)", make("greedy"), "greedy")]
    tg = terminal.TerminalGame(game, seats, 0, io.StringIO("reroll 1 2 3\nquit\n"), out)
    assert tg.play() == 0
    text = out.getvalue()
    assert "rerolled dice 1,2,6 (the same move as 1,2,3: equal dice are interchangeable) -> " in text
    assert game.rolls_left == 1


def test_play_takes_bot_specs_and_refuses_a_bot_that_cannot_sit_at_the_table(capsys):
    assert main(["play", "--players", "4", "--bot", "ppo"]) == 2
    err = capsys.readouterr().err
    assert "'ppo' plays 1- and 2-player games, not 4-player ones; bots for 4 players: " in err
    assert "planner" in err.splitlines()[-1]
    assert main(["play", "--players", "3", "--opponent", "greedy", "--opponent", "ppo:num_players=2"]) == 2
    assert "'ppo' plays 1- and 2-player games, not 3-player ones" in capsys.readouterr().err
    assert main(["play", "--bot", "planner:thret=1"]) == 2
    assert "planner has no option 'thret'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- notices and turn ends
class Scripted:
    """A bot that plays the given actions in order."""

    def __init__(self, *actions: int) -> None:
        self.actions = list(actions)

    def act_game(self, game: Game) -> int:
        return self.actions.pop(0)


def _shelf(cats: list[int]) -> list[list[int]]:
    return [[0] * 5 for _ in range(4)] + [cats]


def test_a_lockout_is_told_after_the_move_that_caused_it() -> None:
    game = Game.from_dict(state(boards=[_shelf([1, 1, 1, 1, 0]), _shelf([0, 1, 0, 0, 0])]), rng=1)
    seats = [terminal.Seat("Bea (player 1)", Scripted(circle_action(4, 4)), "scripted"), terminal.Seat("Ann (player 2)")]
    out = io.StringIO()
    assert terminal.TerminalGame(game, seats, 1, io.StringIO("quit\n"), out).play() == 0
    lines = out.getvalue().splitlines()
    i = lines.index("Bea (player 1) circled cat #5")
    assert lines[i + 1:i + 3] == [
        "  Bea (player 1) completed the cats row (+19 points). Your cat #1, cat #3, cat #4 and cat #5 are crossed out.",
        "  turn over: no legal circle left",
    ]
    assert not any("completed" in line for line in lines[:i])


def test_the_person_is_told_why_the_turn_ended() -> None:
    game = Game.from_dict(state(dice=[0, 4, 4, 4, 4, 4]), rng=1)
    seats = [terminal.Seat("Ann (player 1)"), terminal.Seat("greedy (player 2)", make("greedy"), "greedy")]
    out = io.StringIO()
    tg = terminal.TerminalGame(game, seats, 0, io.StringIO("circle cat 1\nend\nquit\n"), out, echo=True)
    assert tg.play() == 0
    lines = out.getvalue().splitlines()
    i = lines.index("Ann (player 1) (you) ended the turn")
    assert lines[i + 1] == "  turn over: you stopped after 1 circle"
    assert "greedy (player 2) rolled " in "\n".join(lines[i:])


def test_a_finished_game_ends_with_the_breakdown_and_one_result_line() -> None:
    # Seat 2 is the last in the round and the end is triggered: its last circle ends the game.
    s = state(current_player=1, end_triggered=True,
              boards=[[[2] * 5, [2] * 5] + [[0] * 5] * 3, _shelf([1, 1, 1, 1, 0])])
    game = Game.from_dict(s, rng=1)
    seats = [terminal.Seat("Ann (player 1)"), terminal.Seat("Bea (player 2)", Scripted(circle_action(4, 4)), "x")]
    out = io.StringIO()
    assert terminal.TerminalGame(game, seats, 0, io.StringIO(""), out).play() == 0
    text = out.getvalue()
    assert text.rstrip().endswith("Game over — Bea (player 2) wins with 19 points (you 0).")
    assert text.count("Game over") == 1 and "Final score breakdown" in text


# ----------------------------------------------------------------------------- line editing
def test_completion_offers_commands_first_then_symbols() -> None:
    assert terminal.complete_command("ci", 0, "ci") == "circle "
    assert terminal.complete_command("ca", 0, "circle ca") == "cat "
    assert terminal.complete_command("ca", 1, "circle ca") == "cats "
    assert terminal.complete_command("ca", 2, "circle ca") is None


def test_history_file_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHELFIE_HISTORY", str(tmp_path / "h"))
    assert terminal.history_path() == tmp_path / "h"
    monkeypatch.setenv("SHELFIE_HISTORY", "")
    assert terminal.history_path() is None
    monkeypatch.delenv("SHELFIE_HISTORY")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert terminal.history_path() == tmp_path / "shelfie" / "history"


def _pty_read(fd: int, until: bytes, timeout: float = 30.0) -> bytes:
    import select

    buf = b""
    deadline = time.monotonic() + timeout
    while until not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {until!r} in {buf[-2000:]!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            buf += chunk
    return buf


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_interactive_play_edits_lines_and_recalls_history(tmp_path: Path) -> None:
    """At a terminal the prompt is readline's: Ctrl-A moves the cursor, Up recalls earlier commands
    (also those of an earlier game, from the history file), and the new ones are saved."""
    pytest.importorskip("readline")
    import pty

    history = tmp_path / "history"
    history.write_text("moves\n")
    main_fd, child_fd = pty.openpty()
    env = dict(os.environ, SHELFIE_HISTORY=str(history), TERM="xterm", PYTHONIOENCODING="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "shelfie_env.cli", "play", "--seed", "1", "--opponents", "greedy", "--no-color"],
        stdin=child_fd, stdout=child_fd, stderr=child_fd, cwd=ROOT, env=env, start_new_session=True,
    )
    os.close(child_fd)
    try:
        assert b"arrow keys recall" in _pty_read(main_fd, b"> ")
        os.write(main_fd, b"\x1b[A\r")  # Up: the last command of the earlier game
        assert b"reroll 1 2 3 4 5 6" in _pty_read(main_fd, b"(you)> ")  # 'moves' lists every reroll
        os.write(main_fd, b"top\x01s\r")  # Ctrl-A: back to the start of the line to add the "s"
        assert b"kept the dice" in _pty_read(main_fd, b"(you)> ")
        os.write(main_fd, b"quit\r")
        _pty_read(main_fd, b"Leaving the game.")
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main_fd)
    assert history.read_text().split() == ["moves", "stop", "quit"]  # a repeat of the last one is not kept twice


def test_a_reader_that_stops_early_ends_the_command_quietly() -> None:
    """``shelfie levels | head -1``: the closed pipe ends the command with status 0 and no traceback."""
    code = (
        "import sys\nimport shelfie_env.arena.ladder as ladder\nfrom shelfie_env.cli import main\n"
        "ladder.format_ladder = lambda lad: 'a line of the ladder\\n' * 200_000\nsys.exit(main(['levels']))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"a line of the ladder\n"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "Error" not in err
