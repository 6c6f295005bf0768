"""The web table's line summaries (``play/web/lines.py``) and move events (``play/web/events.py``).

Every number is checked against the engine: a line's points against
``ScoreTable.score`` of that line's cells alone and the shelf's breakdown, the
lockouts and the last round against the boards the engine produced.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from shelfie_env.game.actions import CIRCLE_BASE, END_TURN, REROLL_FIRST, REROLL_LAST, circle_action
from shelfie_env.game.engine import Game, full_rows
from shelfie_env.game.scoring import COL_MASKS, ROW_MASKS
from shelfie_env.play.web.events import FRAMES, log_entries, move_events, rolled_dice, with_events
from shelfie_env.play.web.lines import last_round, line_summary, seat_lines, summary, table_lines

EMPTY = [[0] * 5 for _ in range(5)]


def _state(boards: list[list[list[int]]], **extra: Any) -> dict[str, Any]:
    state = {
        "num_players": len(boards), "points": [[1, 2, 3, 5, 8]] * 5, "boards": boards, "current_player": 0,
        "phase": "circle", "dice": [0, 1, 4, 4, 4, 5], "spent": [False] * 6, "rolls_left": 0,
        "circles_this_turn": 0, "end_triggered": False,
    }  # fmt: skip
    state.update(extra)
    return state


def _random_games(n_players: int, seed: int) -> list[Game]:
    """Every position of one random game (a copy after each move)."""
    rnd = random.Random(seed)
    game = Game.new(n_players, rng=seed)
    positions = [game.clone()]
    while not game.over:
        game.step(rnd.choice(game.legal_actions()))
        positions.append(game.clone())
    return positions


def _check_line(game: Game, seat: int, line: dict[str, Any]) -> None:
    kind, i = line["kind"], line["index"]
    mask = ROW_MASKS[i] if kind == "row" else COL_MASKS[i]
    circled = game.circled[seat] & mask
    crossed = game.crossed[seat] & mask
    free = game.free(seat) & mask
    score = game.table.score  # the engine's own total, here of this line's cells alone
    parts = game.table.breakdown(game.circled[seat])["rows" if kind == "row" else "cols"]
    assert line["points"] == score(circled) == parts[i]
    assert line["max"] == score(circled | free)
    assert line["full_points"] == score(mask)
    assert (line["circled"], line["crossed"], line["free"]) == (
        bin(circled).count("1"),
        bin(crossed).count("1"),
        bin(free).count("1"),
    )
    assert line["circled"] + line["crossed"] + line["free"] == line["size"] == 5
    rivals = [q for q in range(game.num_players) if q != seat and game.circled[q] & mask == mask]
    assert line["locked_by"] == (rivals[0] if rivals else None)
    expected = (
        "complete" if circled == mask else "locked" if rivals else "full" if not free else "open"
    )
    assert line["status"] == expected
    if line["status"] == "locked":
        assert free == 0, "a rival's completion crosses every cell not circled"
    if line["next"] is None:
        assert not free or line["circled"] not in (2, 4) or game.over
    else:
        cells = [1 << b for b in range(25) if free >> b & 1]
        assert line["next"]["goal"] == ("score" if line["circled"] == 2 else "complete")
        assert line["next"]["gain"] == max(score(circled | c) for c in cells) - score(circled)
        assert sorted(5 * r + c for r, c in line["next"]["cells"]) == [b.bit_length() - 1 for b in cells]
        assert line["next"]["gain"] > 0


@pytest.mark.parametrize("n_players", [1, 2, 3, 4])
def test_every_line_value_is_the_engines_score(n_players: int) -> None:
    for seed in range(3):
        for game in _random_games(n_players, 100 * n_players + seed):
            lines = table_lines(game)
            assert [s["seat"] for s in lines] == list(range(n_players))
            for p, shelf in enumerate(lines):
                assert [ln["index"] for ln in shelf["rows"]] == [0, 1, 2, 3, 4]
                for line in shelf["rows"] + shelf["cols"]:
                    _check_line(game, p, line)
                # the rows and columns together are the shelf's score
                assert sum(ln["points"] for ln in shelf["rows"] + shelf["cols"]) == game.score(p)


def test_lockout_marks_the_rivals_lines_and_the_move_names_their_cells() -> None:
    ana = [row[:] for row in EMPTY]
    for r in (0, 1, 2, 3):
        ana[r][2] = 1  # column 3 needs cat #3 (row 4) to be complete
    bo = [row[:] for row in EMPTY]
    bo[0][2] = 1
    cy = [row[:] for row in EMPTY]
    before = _state([ana, bo, cy])
    game = Game.from_dict(before, rng=1)
    game.step(circle_action(4, 2))  # three cats
    ana_col = line_summary(game, 0, "column", 2)
    assert ana_col["status"] == "complete" and ana_col["points"] == 15 and ana_col["next"] is None
    for seat in (1, 2):
        col = seat_lines(game, seat)["cols"][2]
        assert col["status"] == "locked" and col["locked_by"] == 0 and col["free"] == 0
        assert col["next"] is None
    assert line_summary(game, 1, "column", 2)["points"] == 0  # Bo's one circle stays, scores nothing
    # the other lines of the rivals are untouched
    assert all(ln["status"] == "open" for ln in seat_lines(game, 1)["rows"])
    events = move_events(before, {"seat": 0, "action": circle_action(4, 2), "state": game.to_dict()})
    assert events["circled"] == [[0, 4, 2]]
    assert events["completed"] == [
        {
            "by": 0,
            "kind": "column",
            "index": 2,
            "crossed": [
                {"seat": 1, "cells": [[1, 2], [2, 2], [3, 2], [4, 2]]},
                {"seat": 2, "cells": [[0, 2], [1, 2], [2, 2], [3, 2], [4, 2]]},
            ],
        }
    ]
    assert sorted(events["crossed"]) == sorted(
        [[1, r, 2] for r in (1, 2, 3, 4)] + [[2, r, 2] for r in range(5)]
    )
    assert not events["end_triggered"] and events["rolled"] is None


def test_one_circle_away_and_the_points_when_complete() -> None:
    board = [row[:] for row in EMPTY]
    board[4][:4] = [1, 1, 1, 1]  # cats #1..#4: one from complete
    board[0][0] = board[0][4] = 1  # plants #1 and #5: one from scoring
    board[1][0], board[1][1] = 1, 2  # games: #2 crossed
    game = Game.from_dict(_state([board, EMPTY]))
    cats = line_summary(game, 0, "row", 4)
    assert cats["next"] == {"goal": "complete", "gain": 8, "cells": [[4, 4]]}
    assert (cats["points"], cats["max"], cats["full_points"]) == (11, 19, 19)
    plants = line_summary(game, 0, "row", 0)
    # the third circle makes the row count: best is plant #4 (1 + 5 + 8)
    assert plants["next"]["goal"] == "score" and plants["next"]["gain"] == 14
    assert plants["points"] == 0 and plants["max"] == 19
    games = line_summary(game, 0, "row", 1)
    assert games["next"] is None and games["max"] == 1 + 3 + 5 + 8 and games["full_points"] == 19
    first = line_summary(game, 0, "column", 0)  # plant, game and cat #1: three circles score
    assert first["points"] == 3 and first["next"] is None and first["status"] == "open"
    with pytest.raises(ValueError):
        line_summary(game, 0, "diagonal", 0)


@pytest.mark.parametrize("n_players", [2, 3, 4])
def test_last_round_names_the_trigger_and_the_seats_still_to_play(n_players: int) -> None:
    for seed in range(4):
        positions = _random_games(n_players, 7 * n_players + seed)
        triggered = [g for g in positions if g.end_triggered]
        assert triggered, "a whole game ends by the trigger"
        for g in positions:
            lr = last_round(g)
            if not g.end_triggered or g.over:
                assert lr is None
                continue
            assert lr["triggered_by"] == [
                q for q in range(n_players) if full_rows(g.circled[q] | g.crossed[q]) >= 2
            ]
            assert lr["triggered_by"]
            assert lr["last_seat"] == n_players - 1
            assert lr["to_play"][0] == g.current
            assert lr["to_play"] == [q for q in range(g.current, n_players) if g.free(q)]
        final = summary(positions[-1])
        assert final == {"lines": table_lines(positions[-1]), "last_round": None}
        assert all(ln["next"] is None for shelf in final["lines"] for ln in shelf["rows"] + shelf["cols"])


def test_a_reroll_reports_the_faces_it_produced() -> None:
    for seed in range(30):
        game = Game.new(2, rng=seed)
        rnd = random.Random(seed)
        rerolls = [a for a in game.legal_actions() if REROLL_FIRST <= a <= REROLL_LAST]
        action = rnd.choice(rerolls)
        before = game.to_dict()
        game.step(action)
        faces, at = rolled_dice(before["dice"], action, game.dice)
        kept = [before["dice"][i] for i in range(6) if not action >> i & 1]
        assert Counter(faces) == Counter(game.dice) - Counter(kept)
        assert len(faces) == bin(action).count("1") == len(at)
        assert [game.dice[i] for i in at] == faces and at == sorted(set(at))
        events = move_events(before, {"seat": 0, "action": action, "state": game.to_dict()})
        assert events["rolled"] == faces and events["opening"] == before["dice"]
        assert not events["new_turn"] and events["circled"] == events["crossed"] == []


def test_turn_end_and_end_trigger_events() -> None:
    for n_players in (2, 3, 4):
        rnd = random.Random(n_players)
        game = Game.new(n_players, rng=50 + n_players)
        trigger_moves = 0
        while not game.over:
            before = game.to_dict()
            seat, action = game.current, rnd.choice(game.legal_actions())
            game.step(action)
            events = move_events(before, {"seat": seat, "action": action, "state": game.to_dict()})
            turn_over = action >= CIRCLE_BASE and (game.over or game.current != seat)
            assert events["new_turn"] == (turn_over and not game.over)
            if events["new_turn"]:
                assert game.phase_name == "reroll" and game.circles == 0 and game.rolls_left == 2
            assert events["end_triggered"] == (game.end_triggered and not before["end_triggered"])
            trigger_moves += events["end_triggered"]
            if action == END_TURN:
                assert events["circled"] == events["crossed"] == []
        assert trigger_moves == 1


def test_log_entries_read_the_state_before_the_first_move() -> None:
    game = Game.new(2, rng=5)
    initial = game.to_dict()
    moves = []
    rnd = random.Random(2)
    for i in range(12):
        seat = game.current
        action = rnd.choice(game.legal_actions())
        game.step(action)
        moves.append({"index": i, "seat": seat, "action": action, "name": "x", "state": game.to_dict()})
    full = log_entries(moves, 0, lambda: initial)
    assert [m["index"] for m in full] == list(range(12))
    assert full[0]["events"] == move_events(initial, moves[0])
    later = log_entries(moves[4:], 5, lambda: pytest.fail("not needed after move 0"))
    assert [m["index"] for m in later] == list(range(5, 12))
    assert [m["events"] for m in later] == [m["events"] for m in full[5:]]
    # entries keep the stored fields; the last ones carry the shelves they changed and the last round
    assert all(m["name"] == "x" and m["state"] == moves[m["index"]]["state"] for m in full)
    for entry in with_events(moves, initial, frames=3)[-3:]:
        changed = {c[0] for c in entry["events"]["circled"] + entry["events"]["crossed"]}
        assert [s["seat"] for s in entry["lines"]] == sorted(changed)
        assert "last_round" in entry
    assert "lines" not in with_events(moves, initial, frames=3)[0]
    # without the state before, only the turn change can be told
    blind = log_entries(moves[5:], 5, lambda: None)[0]["events"]
    assert blind["rolled"] is None and blind["circled"] == []


def test_the_service_view_carries_lines_events_and_the_last_round() -> None:
    from shelfie_env.play.web.service import GameService
    from shelfie_env.play.web.store import GameStore

    ana = [row[:] for row in EMPTY]
    ana[0] = [1, 1, 1, 1, 0]
    ana[1] = [2, 2, 2, 2, 2]
    service = GameService(GameStore(":memory:"))
    try:
        state = _state([ana, EMPTY, EMPTY], dice=[0, 0, 0, 0, 0, 4])
        view = service.create({"seats": [{"type": "human"}] * 3}, seed=4, state=state)
        assert view["last_round"] is None
        assert view["lines"][0]["rows"][0]["next"]["goal"] == "complete"
        after = service.act(view["game_id"], {"seat": 0, "token": view["tokens"]["0"],
                                              "action": circle_action(0, 4), "expect": 0})  # fmt: skip
        move = after["moves"][0]
        assert move["events"]["completed"][0]["kind"] == "row"
        assert [x["seat"] for x in move["events"]["completed"][0]["crossed"]] == [1, 2]
        assert move["events"]["end_triggered"]
        assert after["last_round"] == {"triggered_by": [0], "last_seat": 2, "to_play": [0, 1, 2]}
        assert after["lines"][1]["rows"][0]["status"] == "locked"
        assert after["lines"] == table_lines(Game.from_dict(after["state"]))
        assert move["last_round"] == after["last_round"]
        # a second look from move 1 on has the same events (read off the stored states)
        again = service.view(view["game_id"], 0)
        assert again["moves"][0]["events"] == move["events"]
    finally:
        service.close()


@pytest.mark.parametrize("players", [2, 4])
def test_a_live_games_views_equal_the_views_read_from_the_store(players: int) -> None:
    """The live log (events.LiveLog) and the head kept per move count give, for every ``since``,
    the view a finished game's stored rows give: entries, events, frames' lines and the head."""
    from shelfie_env.play.web.service import GameService
    from shelfie_env.play.web.store import GameStore

    service = GameService(GameStore(":memory:"))
    rng = random.Random(players)
    try:
        view = service.create({"seats": [{"type": "human"}] + [{"type": "bot", "bot": "greedy"}] * (players - 1)},
                              seed=players)  # fmt: skip
        gid, token = view["game_id"], view["tokens"]["0"]
        checked, log_starts = 0, set()
        while not view["over"]:
            assert service.wait_for_bots(30)
            session = service.sessions.get(gid)
            if session is None:
                break
            with session.lock:
                live_start = session.log.start
                log_starts.add(live_start)
                row = service.store.get_game(gid)
                n = session.num_moves
                edges = {0, 1, live_start - 1, live_start, live_start + 1, n - FRAMES - 1, n - FRAMES, n - FRAMES + 1}
                for since in sorted(x for x in edges | {n - 2, n - 1, n, n + 1} if x >= 0):
                    live = service.views.live(session, since)
                    stored = service.views.stored(row, since)
                    assert live == stored, (since, session.num_moves)
                    assert service.views.live(session, since) == live  # again, with the older moves kept
                    checked += since >= live_start and since < session.num_moves
            view = service.view(gid, view["num_moves"])
            if view["over"] or view["state"]["current_player"] != 0:
                continue
            action = rng.choice(view["legal"])["action"]
            view = service.act(gid, {"seat": 0, "token": token, "action": action, "expect": view["num_moves"]})
        assert max(log_starts) > 0  # the log kept only the latest moves (earlier ones come from the store)
        final = service.view(gid, 0)  # the game is over: its whole log, then the same from the kept entries
        assert final["over"] and final["moves"] == service.views.stored_entries(gid, 0) == service.view(gid, 0)["moves"]
        assert len(final["moves"]) == final["num_moves"] and "lines" in final["moves"][-1]
        assert checked > 100  # many answers came from the live log
    finally:
        service.close()
