"""Files of any size and shape give one clear line: replays, model cards and results files are
size-limited and depth-checked in linear time and memory, and names read from them reach the
terminal with their control characters escaped."""

from __future__ import annotations

import json
import random
import shutil
import tracemalloc
from pathlib import Path

import pytest

from shelfie_env.arena.results_file import MAX_RESULTS_BYTES, ResultsFileError, load_results
from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card
from shelfie_env.cli import main
from shelfie_env.clip import printable
from shelfie_env.game.engine import Game
from shelfie_env.jsonfile import nesting_exceeds
from shelfie_env.play.labels import bot_label
from shelfie_env.play.replay_format import MAX_REPLAY_BYTES, replay_data, write_replay

MODELS = Path(__file__).resolve().parents[1] / "shelfie_env" / "models"
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mEve\u202e"
"""A name that would set the window title, clear the screen, colour and reorder the line."""


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _random_value(rng: random.Random, depth: int) -> object:
    pick = rng.random()
    if depth > 7 or pick < 0.3:
        return "".join(rng.choice('ab[]{}"\\/\n\u00e9') for _ in range(rng.randrange(6)))
    if pick < 0.4:
        return rng.randrange(100)
    if pick < 0.7:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {
        "".join(rng.choice('k[]"\\') for _ in range(3)): _random_value(rng, depth + 1) for _ in range(3)
    }


def test_the_nesting_check_agrees_with_the_parsed_depth() -> None:
    rng = random.Random(0)
    for _ in range(400):
        value = _random_value(rng, 0)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        depth = _depth(value)
        assert not nesting_exceeds(text, depth), text
        assert nesting_exceeds(text, depth - 1) == (depth > 0), text


def test_the_nesting_check_takes_memory_linear_in_the_text() -> None:
    data = b'{"name": "' + b"a\\\"" * 1_000_000 + b'", "x": ' + b"[1," * 100_000 + b"]" * 100_000 + b"}"
    tracemalloc.start()
    try:
        assert nesting_exceeds(data, 64)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(data)


def _replay(path: Path, name: str = "Ann") -> Path:
    game = Game.new(2, rng=0)
    initial, moves, states = game.to_dict(), [], []
    for _ in range(3):
        action = int(game.legal_actions()[0])
        moves.append((game.current, action))
        game.step(action)
        states.append(game.to_dict())
    write_replay(path, replay_data([("human", name, None), ("bot", None, "greedy")], initial, moves, states))
    return path


def test_a_replay_over_the_size_limit_is_refused_in_one_line(tmp_path, capsys) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as f:
        f.truncate(MAX_REPLAY_BYTES + 1)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"shelfie replay: error: cannot read replay {path}: it is over the 8 MB a replay may have\n"


def test_seat_names_with_escape_sequences_reach_the_terminal_escaped(tmp_path, capsys) -> None:
    path = _replay(tmp_path / "r.json", HOSTILE)
    data = json.loads(path.read_text())
    data["game_id"] = "g\x1b[2J"
    data["actions"][0]["name"] = "reroll\x1b[2J"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert printable(HOSTILE) in out and "\\x1b]0;owned\\x07" in out


def test_a_deeply_nested_card_is_refused_in_one_line(tmp_path) -> None:
    path = tmp_path / "deep.npz"
    shutil.copyfile(MODELS / "ppo_2p.npz", path)
    path.with_suffix(".json").write_text('{"name": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(CheckpointMismatchError) as info:
        load_card(path)
    assert str(info.value) == f"cannot read model card {path.with_suffix('.json')}: its JSON is nested too deeply"
    assert bot_label(f"ppo:path={path}") == "deep (ppo)"


def test_a_huge_card_is_refused_in_one_line(tmp_path) -> None:
    path = tmp_path / "big.npz"
    with path.with_suffix(".json").open("wb") as f:
        f.truncate(64 * 2**20)
    with pytest.raises(CheckpointMismatchError, match="is over the 4 MB a model card may have"):
        load_card(path)


def test_a_card_name_with_control_characters_is_shown_escaped(tmp_path) -> None:
    path = tmp_path / "mine.npz"
    card = json.loads((MODELS / "ppo_2p.json").read_text())
    path.with_suffix(".json").write_text(json.dumps({**card, "name": HOSTILE}))
    label = bot_label(f"ppo:path={path}")
    assert label == f"{printable(HOSTILE)} (ppo)" and "\x1b" not in label
    assert "\x1b" not in bot_label("ppo:x=\x1b[2J")


def test_results_files_too_big_or_too_deep_are_refused_in_one_line(tmp_path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"rows": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(ResultsFileError, match="its JSON is nested too deeply"):
        load_results(deep)
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(MAX_RESULTS_BYTES + 1)
    with pytest.raises(ResultsFileError, match="is over the 64 MB"):
        load_results(big)


def test_printable_leaves_ordinary_text_alone() -> None:
    assert printable("Zoë 中文 🐱 a\\b") == "Zoë 中文 🐱 a\\b"
    assert printable("a\tb\nc\x00\x7f\x9b\u2028") == "a\\x09b\\x0ac\\x00\\x7f\\x9b\\u2028"


def test_rating_history_shows_rival_names_escaped() -> None:
    from shelfie_env.play.rating_cli import _game_line

    entry = {
        "seat": 0,
        "scores": [40, 35],
        "names": ["me", HOSTILE],
        "players": 2,
        "rated": False,
        "reason": "a test",
        "time": 0.0,
    }
    line = _game_line(entry)
    assert "\x1b" not in line and printable(HOSTILE) in line
