"""The web table shows what a board-game site shows (headless Chromium, a scripted 4-player game).

Line progress and points beside every row and under every column, lockouts,
the last-round banner, the notice naming the cells a rival's completion
crossed out, the dice each roll produced in the log, the last move marked,
hints in words, the spectator label and the bots' moves shown one by one.
Every number read from the page is compared with the server's view.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shelfie_env.game.actions import END_TURN, circle_action
from tests import test_web_browser as web
from tests.conftest import board, make_state
from tests.test_web_browser import ROOT, Server, act_once, new_page, ready

browser = web.browser  # the browser and server fixtures of the other browser tests
server = web.server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOCS_IMG = ROOT / "docs" / "img"
NAMES = ["Ana", "Bo", "Cy", "Dan"]


def _boards() -> list[list[list[int]]]:
    ana = board("O.O..", ".OO..", "..O.O", "XXOXX", "XX.XX")  # column 3 needs cat #3; trophies full
    bo = board("OOO..", "O.O..", "..O..", ".O...", ".....")
    cy = board("O...O", ".O...", "O....", "...O.", ".O...")
    dan = board("..O..", "O....", ".O...", "..O..", "O....")
    return [ana, bo, cy, dan]


def _start(server: Server) -> dict[str, Any]:
    """Ana and Bo are people, Cy and Dan greedy bots; Ana is about to circle cat #3 with three cats."""
    from shelfie_env.play.web.service import GameService
    from shelfie_env.play.web.store import GameStore

    state = make_state(boards=_boards(), dice=(0, 1, 4, 4, 4, 5))
    assert not state["end_triggered"]
    store = GameStore(server.db, exclusive=False)  # the running server picks the game up from the file
    service = GameService(store)
    try:
        seats = [{"type": "human", "name": "Ana"}, {"type": "human", "name": "Bo"}]
        seats += [{"type": "bot", "bot": "greedy", "name": n} for n in NAMES[2:]]
        return service.create({"seats": seats}, seed=7, state=state)
    finally:
        service.close()
        store.close()


def _post(server: Server, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        server.url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def _ana_moves(server: Server, game: dict[str, Any]) -> dict[str, Any]:
    gid, token = game["game_id"], game["tokens"]["0"]
    path = f"/api/games/{gid}/actions"
    _post(server, path, {"seat": 0, "token": token, "action": circle_action(4, 2), "expect": 0})
    return _post(server, path, {"seat": 0, "token": token, "action": END_TURN, "expect": 1})


def _chips(page: Any, seat: int) -> dict[tuple[str, int], dict[str, str]]:
    """The line boxes of one shelf as the page shows them."""
    found = page.eval_on_selector_all(
        f"#boards .board[data-seat='{seat}'] .ln",
        """els => els.map(e => ({kind: e.dataset.kind, index: Number(e.dataset.index),
            status: e.dataset.status, progress: e.querySelector('.ln-progress').textContent,
            points: e.querySelector('.ln-points').textContent,
            note: (e.querySelector('.ln-note') || {}).textContent || '',
            label: e.getAttribute('aria-label')}))""",
    )
    return {(c["kind"], c["index"]): c for c in found}


def _cell(seat: int, r: int, c: int) -> str:
    return f"#boards .board[data-seat='{seat}'] .cell[data-row='{r}'][data-col='{c}']"


def _check_lines(page: Any, view: dict[str, Any]) -> None:
    """Every row and column box of every shelf says what the server's summary says."""
    for summary in view["lines"]:
        chips = _chips(page, summary["seat"])
        assert len(chips) == 10
        for line in summary["rows"] + summary["cols"]:
            chip = chips[(line["kind"], line["index"])]
            assert chip["progress"] == f"{line['circled']}/5", (summary["seat"], line)
            assert chip["points"] == f"+{line['points']}"
            assert chip["status"] == line["status"]
            assert chip["label"].startswith(line["name"] + ": ")


def _shot(page: Any, name: str, tmp_path: Path) -> None:
    page.screenshot(path=str(tmp_path / name), full_page=True)
    assert (tmp_path / name).stat().st_size > 10_000
    if os.environ.get("SHELFIE_DOCS_SCREENSHOT"):
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_IMG / name), full_page=True)


def test_lines_lockout_notice_last_round_and_the_log(browser: Any, server: Server, tmp_path: Path) -> None:
    game = _start(server)
    gid = game["game_id"]
    bo = new_page(browser, 1280, 800)
    bo.goto(server.url + game["links"]["1"])
    ready(bo)
    assert bo.is_hidden("#watching") and bo.is_hidden("#last-round") and bo.is_hidden("#notices")
    _check_lines(bo, server.api(f"/api/games/{gid}?since=0"))
    row1 = _chips(bo, 1)[("row", 1)]  # Bo's games: game #1 and #3, one circle from scoring
    assert (row1["progress"], row1["points"], row1["note"]) == ("2/5", "+0", "1 to score")
    assert "one circle from scoring" in row1["label"]

    view = _ana_moves(server, game)  # Ana completes column 3 and sets off the last round
    bo.locator("#log li.move").nth(1).wait_for(timeout=20_000)  # both of Ana's moves have arrived
    ready(bo)
    notice = bo.text_content("#notices li.mine") or ""
    assert notice.startswith("Ana completed column 3: your cells trophy #3 and cat #3 are crossed out")
    assert "Cy" in notice and "Dan" in notice  # the others' losses are counted too
    assert bo.get_attribute("#notices", "aria-live") == "polite"
    banner = bo.text_content("#last-round") or ""
    assert bo.is_visible("#last-round")
    assert "Last round: Ana has two rows with no free cell" in banner
    assert "The game ends after Dan's turn" in banner and "Still to play: you, Cy and Dan" in banner
    view = server.api(f"/api/games/{gid}?since=0")
    assert view["last_round"] == {"triggered_by": [0], "last_seat": 3, "to_play": [1, 2, 3]}
    _check_lines(bo, view)
    # Bo's column 3 is locked (Ana completed it); Ana's is complete; both say so in words
    bo_col = _chips(bo, 1)[("column", 2)]
    assert (bo_col["status"], bo_col["progress"], bo_col["points"], bo_col["note"]) == (
        "locked", "3/5", "+9", "locked"
    )  # fmt: skip
    assert "locked: Ana completed it first" in bo_col["label"]
    ana_col = _chips(bo, 0)[("column", 2)]
    assert (ana_col["status"], ana_col["progress"], ana_col["points"]) == ("complete", "5/5", "+15")
    log = bo.locator("#log li.move").all_text_contents()
    assert log == ["Ana: circle cat #3 (completes column 3) — last round", "Ana: end turn"]
    # the last turn's cells are marked: Ana's cat #3 and the cells it crossed out on Bo's shelf
    for seat, r, c in ((0, 4, 2), (1, 3, 2), (1, 4, 2)):
        cls = bo.get_attribute(_cell(seat, r, c), "class")
        assert "last" in (cls or ""), (seat, r, c, cls)
    locked_cell = bo.get_attribute(_cell(1, 4, 2), "aria-label")
    assert "locked out" in (locked_cell or "")
    # a new turn: all six dice are freshly rolled, and marked so
    assert bo.locator("#dice .die.rolled").count() == 6

    # a spectator is told so and has nothing to click
    watcher = new_page(browser, 1280, 800)
    watcher.goto(server.url + f"/g/{gid}")
    ready(watcher)
    assert watcher.is_visible("#watching") and "watching" in (watcher.text_content("#watching") or "")
    assert watcher.locator("#boards .cell.legal, #dice .die:enabled").count() == 0
    spect = watcher.text_content("#notices li") or ""
    assert spect.startswith("Ana completed column 3: crossed out Bo's trophy #3 and cat #3; Cy's")

    # the screenshots: the desktop table, and Bo's table on a phone
    _shot(bo, "web_table_4p.png", tmp_path)
    phone = new_page(browser, 390, 844)
    phone.goto(server.url + game["links"]["1"])
    ready(phone)
    assert phone.is_visible("#last-round") and phone.locator("#notices li.mine").count() == 1
    overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone screen"
    _shot(phone, "web_table_phone.png", tmp_path)

    # hints in words: a chance of finishing ahead (four players), explained, no raw planner value
    bo.click("#hint")
    bo.wait_for_selector("#hints li", timeout=60_000)
    hints = bo.locator("#hints li").all_text_contents()
    assert hints and all("finish ahead of about" in h and "%" in h for h in hints), hints
    assert not any("rank edge" in h or "value" in h for h in hints)
    assert "share of the other players" in (bo.text_content("#hint-explain") or "")

    # a reroll's log line names the faces it produced (read off the stored states)
    bo.locator("#dice .die:enabled").nth(0).click()
    bo.click("#roll")
    ready(bo)
    view = server.api(f"/api/games/{gid}?since=0")
    reroll = view["moves"][2]
    assert reroll["seat"] == 1 and reroll["name"].startswith("reroll dice")
    faces = ["plant", "game", "book", "trophy", "cat", "joker"]
    line = bo.locator("#log li.move").nth(2)
    def words(dice: list[int]) -> str:
        return ", ".join(faces[f] for f in dice)

    assert line.locator(".got").text_content() == " → " + words(reroll["events"]["rolled"])
    assert (line.text_content() or "").startswith("Bo: rolled " + words(view["moves"][1]["state"]["dice"]))
    assert bo.locator("#dice .die.rolled").count() == len(reroll["events"]["rolled"]) == 1
    assert bo.errors == [] and watcher.errors == [] and phone.errors == []  # type: ignore[attr-defined]


def test_bots_moves_are_shown_one_by_one_and_the_game_ends_after_the_last_seat(
    browser: Any, server: Server
) -> None:
    game = _start(server)
    gid = game["game_id"]
    _ana_moves(server, game)
    bo = new_page(browser, 1280, 800)
    bo.context.add_init_script("localStorage.setItem('shelfie:delay', '250');")  # after new_page's 20 ms
    bo.goto(server.url + game["links"]["1"])
    ready(bo)
    rnd = random.Random(1)
    while server.api(f"/api/games/{gid}?since=0")["state"]["current_player"] == 1:  # Bo plays his turn
        logged = bo.locator("#log li.move").count()
        assert act_once(bo, rnd)
        bo.locator("#log li.move").nth(logged).wait_for(timeout=20_000)  # the move is in
    # Cy's and Dan's moves arrive and are shown one at a time, each with its line in the status
    counts, statuses = [], set()
    deadline = time.monotonic() + 90
    while not bo.is_visible("#result"):
        assert time.monotonic() < deadline, "the bots should finish the last round"
        counts.append(bo.locator("#log li.move").count())
        statuses.add(bo.text_content("#status") or "")
        time.sleep(0.05)
    view = server.api(f"/api/games/{gid}?since=0")
    assert view["over"] and view["state"]["current_player"] == 3  # the round ended with Dan's turn
    bot_moves = [m for m in view["moves"] if m["seat"] in (2, 3)]
    assert len(bot_moves) >= 4
    steps = sorted(set(counts))
    assert len(steps) >= 4, f"the bots' moves came all at once: {steps}"
    assert any(s.startswith("Cy: ") for s in statuses) and any(s.startswith("Dan: ") for s in statuses)
    assert bo.is_hidden("#last-round")  # the game is over
    assert bo.locator("#log li.move").count() == view["num_moves"]
    assert bo.errors == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("motion", ["reduce", "no-preference"])
def test_roll_animation_is_off_under_reduced_motion(browser: Any, server: Server, motion: str) -> None:
    game = _start(server)
    _ana_moves(server, game)
    context = browser.new_context(viewport={"width": 1000, "height": 800}, reduced_motion=motion)
    context.add_init_script("localStorage.setItem('shelfie:poll', '150');")
    page = context.new_page()
    page.goto(server.url + game["links"]["1"])
    ready(page)
    names = page.eval_on_selector_all(
        "#dice .die.roll-in", "els => els.map(e => getComputedStyle(e).animationName)"
    )
    assert len(names) == 6
    assert set(names) == ({"none"} if motion == "reduce" else {"roll-in"})
    context.close()
