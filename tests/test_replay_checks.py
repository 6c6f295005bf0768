"""``shelfie replay`` checks every move: an illegal or inconsistent move stops the replay with
its number and why (exit status 2), after showing the moves before it."""

from __future__ import annotations

import copy
import io
import json
from argparse import Namespace
from pathlib import Path
from typing import Any

import pytest

from shelfie_env.bots import make
from shelfie_env.cli import main
from shelfie_env.game.actions import STOP, action_kind, action_name
from shelfie_env.game.engine import Game
from shelfie_env.game.replay_check import ReplayError, follow
from shelfie_env.play import replay


def _game_record(seed: int = 11) -> dict[str, Any]:
    game = Game.new(2, rng=seed)
    bot = make("greedy")
    start, actions, states = game.to_dict(), [], []
    while not game.over:
        seat, a = game.current, bot.act_game(game)
        game.step(a)
        actions.append({"seat": seat, "action": a, "name": action_name(a)})
        states.append(game.to_dict())
    return {"version": 1, "seats": [{"name": "Ann"}, {"name": "Bob", "bot": "greedy"}],
            "initial_state": start, "actions": actions, "states": states, "final_state": states[-1]}


def _run(tmp_path: Path, data: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    out = io.StringIO()
    rc = replay.run_replay(Namespace(file=str(path), no_color=True), out)
    return rc, out.getvalue(), capsys.readouterr().err


def _first(data: dict[str, Any], kind: str) -> int:
    return next(i for i, a in enumerate(data["actions"]) if action_kind(a["action"]) == kind)


def test_an_untouched_game_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text, err = _run(tmp_path, _game_record(), capsys)
    assert rc == 0 and err == "" and "Game over" in text


def test_a_move_changed_to_an_illegal_one_stops_the_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _game_record()
    i = _first(data, "circle")
    data["actions"][i]["action"] = 119  # cross out cats, in the circle phase
    rc, text, err = _run(tmp_path, data, capsys)
    assert rc == 2 and "Traceback" not in err
    assert (f"move {i + 1} (Ann: cross out cats): it is not legal here: it is the circle phase, "
            "not a time to cross; the replay stops here") in err
    assert "crossed out cats" not in text and "Game over" not in text
    assert text.rstrip().splitlines()[-1].startswith("Ann ")  # the moves before it were shown


def test_main_exits_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _game_record()
    data["actions"][0]["action"] = 114  # end turn, in the reroll phase
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    assert "move 1 (Ann: end turn): it is not legal here" in capsys.readouterr().err


def test_a_legal_move_that_does_not_lead_to_the_stored_position(tmp_path, capsys) -> None:
    data = _game_record()
    i = _first(data, "circle")
    before = Game.from_dict(data["states"][i - 1])
    other = next(a for a in before.legal_actions() if a != data["actions"][i]["action"])
    data["actions"][i]["action"] = other
    rc, _, err = _run(tmp_path, data, capsys)
    assert rc == 2
    assert f"move {i + 1} (Ann: {action_name(other)}): the position stored after it does not follow" in err
    assert "differs in boards" in err


def test_a_reroll_whose_stored_dice_drop_a_kept_die(tmp_path, capsys) -> None:
    data = _game_record()
    i = _first(data, "reroll")
    a = data["actions"][i]["action"]
    state = data["states"][i]
    kept = [d for k, d in enumerate(data["states"][i - 1]["dice"] if i else data["initial_state"]["dice"])
            if not a >> k & 1]
    state["dice"] = sorted(d for d in range(6) if d not in kept)[:1] * 6  # none of the kept faces
    rc, _, err = _run(tmp_path, data, capsys)
    assert rc == 2 and f"move {i + 1} (" in err and "do not hold the dice it kept" in err


def test_a_move_by_the_wrong_seat(tmp_path, capsys) -> None:
    data = _game_record()
    data["actions"][0]["seat"] = 1
    rc, _, err = _run(tmp_path, data, capsys)
    assert rc == 2 and "move 1 (Bob: " in err and "is by seat 2, but seat 1 is on turn" in err


def test_an_unreadable_move_among_stored_positions(tmp_path, capsys) -> None:
    data = _game_record()
    data["actions"][2] = {"seat": 0, "name": "circle something"}
    rc, _, err = _run(tmp_path, data, capsys)
    assert rc == 2 and "move 3 (Ann: circle something) is not an action id 0..119" in err


def test_final_state_and_the_number_of_states_are_checked(tmp_path, capsys) -> None:
    data = _game_record()
    wrong = copy.deepcopy(data)
    wrong["final_state"] = wrong["states"][-4]  # a real position, but not the last one
    rc, _, err = _run(tmp_path, wrong, capsys)
    assert rc == 2 and "final_state is not the position after move" in err
    short = copy.deepcopy(data)
    short["states"] = short["states"][:-3]
    rc, _, err = _run(tmp_path, short, capsys)
    n = len(data["actions"])
    assert rc == 2 and f"'states' holds {n - 3} positions for {n} moves" in err


def test_without_states_moves_are_checked_from_the_start_while_the_dice_are_known(tmp_path, capsys) -> None:
    data = _game_record()
    del data["states"], data["final_state"]
    data["actions"][0] = {"seat": 0, "action": STOP}
    data["actions"][1] = {"seat": 0, "action": 119}
    rc, _, err = _run(tmp_path, data, capsys)
    assert rc == 2 and "move 2 (Ann: cross out cats): it is not legal here" in err
    # a reroll without its dice: the position is unknown from there on, so nothing later is refused
    rerolled = _game_record()
    del rerolled["states"], rerolled["final_state"]
    i = _first(rerolled, "reroll")
    rerolled["actions"][i + 1]["action"] = 119
    rc, text, err = _run(tmp_path, rerolled, capsys)
    assert rc == 0 and "crossed out cats" in text


def test_follow_uses_the_given_dice_exactly() -> None:
    state = Game.new(2, rng=3).to_dict()
    state["dice"] = [0, 1, 2, 3, 4, 5]  # all faces differ: every reroll set is canonical
    game = Game.from_dict(state)
    after = follow(game, 0b111000, [0, 1, 2, 5, 5, 5])  # keeps plant game book, rolls three jokers
    assert after is not None and after.dice == [0, 1, 2, 5, 5, 5] and after.rolls_left == game.rolls_left - 1
    assert follow(game, STOP, None) is not None  # stopping rolls nothing
    assert follow(game, 63, None) is None  # a reroll whose dice are not known
    with pytest.raises(ReplayError, match="do not hold the dice it kept"):
        follow(game, 0b111000, [3, 3, 3, 3, 3, 3])
    with pytest.raises(ReplayError, match="not legal here"):
        follow(game, 114, None)
