"""``shelfie play --level N`` (every bot seat a level, the finished game rated in the ratings store),
``--no-rating``, ``shelfie rating``, and the one-line refusals of a bad level or store."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from shelfie_env import cli
from shelfie_env.bots.levels import LEVELS
from shelfie_env.cli import main
from shelfie_env.play import terminal
from shelfie_env.play.rated_games import TERMINAL_PERSON
from shelfie_env.play.web.store import GameStore


class AutoPlayer(io.TextIOBase):
    """Types, at each prompt, ``first`` commands, then ``stop`` or the first legal command listed."""

    def __init__(self, out: io.StringIO, first: tuple[str, ...] = ()) -> None:
        self.out, self.first = out, list(first)

    def readline(self, size: int = -1) -> str:
        if self.first:
            return self.first.pop(0) + "\n"
        legal = re.findall(r"^legal: (.*)$", self.out.getvalue(), re.M)[-1].split(" | ")
        return ("stop" if "stop" in legal else legal[0]) + "\n"


def play(*args: str, first: tuple[str, ...] = ()) -> str:
    out = io.StringIO()
    rc = terminal.run_play(cli.build_parser().parse_args(["play", *args]), AutoPlayer(out, first), out)
    assert rc == 0, out.getvalue()[-2000:]
    return out.getvalue()


def test_level_seats_every_bot_and_the_finished_game_is_rated(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    text = play("--level", "intermediate", "--players", "3", "--seed", "2", "--db", str(db))
    assert "level-3 (player 2)" in text and "level-3 (player 3)" in text
    last = text.rstrip().splitlines()[-1]
    assert re.fullmatch(r"Your rating at 3 players: \d+ ± \d+ \([+-]\d+\) after 1 rated game; 'shelfie rating' "
                        rf"lists them \(kept in {re.escape(str(db))}\)\.", last), last
    store = GameStore(db, exclusive=False)
    try:
        assert store.standings(TERMINAL_PERSON)[3].games == 1
        [game] = store.rating_history(TERMINAL_PERSON)
        assert game["bots"] == [None, "level-3", "level-3"] and game["rated"]
        assert store.get_game(game["game_id"]).status == "over"  # the game itself is stored too
    finally:
        store.close()


@pytest.mark.parametrize("level", ["2", "level-2", "casual", "CASUAL"])
def test_level_takes_a_number_or_a_name(level: str, tmp_path: Path) -> None:
    text = play("--level", level, "--db", str(tmp_path / "g.sqlite3"), "--seed", "1")
    assert "level-2 (player 2)" in text and "Your rating at 2 players" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--level", "level-0"], "--level level-0: no level 'level-0'; the levels are level-1 (beginner)"),
        (["--level", "7"], "--level 7: no level '7'; the levels are"),
        (["--level", "banana"], "--level banana: no level 'banana'; the levels are"),
        (["--level", "3", "--players", "1"], "--level 3: the levels play tables of 2, 3, 4 players, not 1"),
    ],
)
def test_a_bad_level_is_one_clear_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "g.sqlite3"
    assert main(["play", *args, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"shelfie play: error: {message}")
    if "no level" in message:
        assert all(lv.spec in err for lv in LEVELS)
    assert not db.exists()


def test_level_and_bot_are_one_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["play", "--level", "3", "--bot", "greedy"])
    assert exc.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_no_rating_keeps_the_game_out_of_the_store(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite3"
    text = play("--level", "1", "--no-rating", "--db", str(db), "--seed", "3")
    assert text.rstrip().splitlines()[-1].startswith("Game over — ") and not db.exists()


def test_a_game_with_a_hint_is_unrated(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite3"
    text = play("--level", "5", "--db", str(db), "--seed", "4", first=("hint",))
    assert "(You asked for a hint: this game is now unrated.)\nHints (best first):" in text
    assert text.rstrip().splitlines()[-1] == f"Unrated: hints were used. The game is kept in {db}."
    store = GameStore(db, exclusive=False)
    try:
        assert store.standings(TERMINAL_PERSON) == {}
    finally:
        store.close()


def test_shelfie_rating_prints_the_rating_and_the_latest_games(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "g.sqlite3"
    assert main(["rating", "--db", str(db)]) == 0
    assert capsys.readouterr().out.startswith(f"No rated game yet in {db}; play one with: shelfie play --level 3")
    assert not db.exists()  # reading makes no store
    for seed in (5, 6):
        play("--level", "2", "--db", str(db), "--seed", str(seed))
    play("--level", "4", "--players", "3", "--db", str(db), "--seed", "7")
    assert main(["rating", "--db", str(db)]) == 0
    out = capsys.readouterr().out.splitlines()
    store = GameStore(db, exclusive=False)
    try:
        two, three = store.standings(TERMINAL_PERSON)[2], store.standings(TERMINAL_PERSON)[3]
        history = store.rating_history(TERMINAL_PERSON)
    finally:
        store.close()
    assert out[0].startswith(f"Rating at 2 players: {two.rating:.0f} ± {two.rd:.0f} (95 %: ")
    assert "2 rated games; next: level-" in out[0]
    assert out[1].startswith(f"Rating at 3 players: {three.rating:.0f} ± {three.rd:.0f}")
    games = [line for line in out if line.startswith("  ")]
    assert len(games) == 3 and " 3p " in games[0] and games[0].endswith(f"{history[0]['change']:+.0f})")
    assert main(["rating", "--db", str(db), "--players", "3", "--games", "1"]) == 0
    only = capsys.readouterr().out.splitlines()
    assert only[0].startswith("Rating at 3 players") and len([g for g in only if g.startswith("  ")]) == 1


@pytest.mark.parametrize("command", [["play", "--level", "3"], ["rating"]])
def test_a_store_that_is_not_a_database_is_refused_in_one_line(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "notes.sqlite3"
    db.write_text("not a database\n")
    assert main([*command, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is damaged (file is not a database)" in err
    assert db.read_text() == "not a database\n"
