"""End-to-end: the web table in headless Chromium (Debian ``chromium`` driven by Playwright).

A real server (``python -m shelfie_env.play.web.cli``) runs in a subprocess on a free
loopback port; the tests click through whole games like a person would. CI
installs chromium (``.ci/run``); without it these tests fail with a clear message.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("SHELFIE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[1]
DOCS_SHOT = ROOT / "docs" / "img" / "web_table.png"
DOCS_REMATCH_SHOT = ROOT / "docs" / "img" / "web_rematch.png"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``shelfie serve`` in a subprocess; ``kill()`` is a hard SIGKILL, ``start()`` reopens the same DB."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db = db
        self.log = log
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_once = False

    def start(self) -> None:
        """Start the server; a first start retries on another port if the chosen one was taken meanwhile."""
        for _attempt in range(3):
            if self._spawn():
                self.started_once = True
                return
            if self.started_once:  # a restart must keep its port (the pages know it)
                break
            self.port = _free_port()
            self.url = f"http://127.0.0.1:{self.port}"
        raise RuntimeError(f"server did not start; its log ends with:\n{self.log.read_text()[-3000:]}")

    def _spawn(self) -> bool:
        cmd = [sys.executable, "-m", "shelfie_env.play.web.cli", "--port", str(self.port), "--db", str(self.db),
               "--no-browser", "--log-level", "warning"]  # fmt: skip
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/api/meta", timeout=2) as r:
                    if r.status == 200:
                        return True
            except OSError:
                time.sleep(0.1)
        self.proc.kill()
        return False

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.fail(
            f"headless Chromium is required for the browser tests but {CHROMIUM} is missing: "
            "install it with `apt-get install -y chromium` (.ci/run does this)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ModuleNotFoundError:
        pytest.fail("the browser tests need the playwright package: pip install -e '.[dev]'")
    executable = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "games.sqlite3", tmp_path / "server.log")
    srv.start()
    yield srv
    srv.stop()


def new_page(browser: Any, width: int = 1100, height: int = 900, poll_ms: int = 150) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(
        f"localStorage.setItem('shelfie:delay', '20'); localStorage.setItem('shelfie:poll', '{poll_ms}');"
    )
    page = context.new_page()
    page.errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda e: page.errors.append(str(e)))  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.errors.append("unexpected dialog: " + d.message), d.dismiss()))  # type: ignore[attr-defined]
    return page


def ready(page: Any) -> None:
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)


def act_once(page: Any, rnd: random.Random) -> bool:
    """Make one move by clicking, as a person would; False if this page has nothing to click."""
    ready(page)
    cells = page.locator("#boards .cell.legal")
    if cells.count():
        if page.is_enabled("#end-turn") and rnd.random() < 0.25:
            page.click("#end-turn")
        else:
            cells.nth(rnd.randrange(cells.count())).click()
            if page.is_visible("#joker-dialog"):
                page.click(rnd.choice(["#joker-yes", "#joker-no"]))
                page.wait_for_selector("#joker-dialog", state="hidden")
        return True
    rows = page.locator("#boards .rowhead.crossable")
    if rows.count():
        rows.nth(rnd.randrange(rows.count())).click()
        return True
    if page.locator("#dice .die:enabled").count():
        if rnd.random() < 0.7:
            for _ in range(rnd.randint(1, 3)):
                dice = page.locator("#dice .die:enabled")
                dice.nth(rnd.randrange(dice.count())).click()
            if page.is_enabled("#roll"):
                page.click("#roll")
                return True
        page.click("#stop")
        return True
    if page.is_enabled("#stop"):  # no rerolls left cannot happen in the reroll phase, but be exact
        page.click("#stop")
        return True
    return False


def game_id_of(page: Any) -> str:
    return page.url.split("/g/")[1].split("#")[0]


def open_table(page: Any, url: str, seats: list[tuple[str, str]]) -> None:
    """Fill the new-table form: ``seats`` is a list of (type value, name)."""
    page.goto(url + "/")
    ready(page)
    page.select_option("#num-seats", str(len(seats)))
    for i, (kind, name) in enumerate(seats):
        page.select_option(f"#seat-type-{i}", kind)
        page.fill(f"#seats .seat-row[data-seat='{i}'] .seat-name", name)
    page.click("#start")
    page.wait_for_url("**/g/**")
    ready(page)


def test_play_a_whole_game_against_a_bot_by_clicking(browser: Any, server: Server, tmp_path: Path) -> None:
    page = new_page(browser)
    open_table(page, server.url, [("human", "Ann"), ("bot:greedy", "")])
    gid = game_id_of(page)
    assert page.locator("#boards .board").count() == 2
    assert page.locator("#dice .die").count() == 6
    assert page.is_enabled("#stop") and not page.is_enabled("#end-turn")
    # the hint button asks the planner; its first advice can be played with one click
    assert page.is_visible("#hint")
    page.click("#hint")
    page.wait_for_selector("#hints li")
    hints = page.locator("#hints li")
    assert 1 <= hints.count() <= 3
    first_hint = hints.nth(0).text_content() or ""
    hints.nth(0).locator("button.play-hint").click()
    ready(page)
    assert first_hint.startswith(page.locator("#log li").nth(0).get_attribute("data-name"))
    rnd = random.Random(11)
    actions = 1
    shot_taken = False
    while not page.is_visible("#result"):
        assert act_once(page, rnd), "a human seat facing a bot must always have a move"
        actions += 1
        assert actions < 400, "the game should end"
        ready(page)
        if not shot_taken and actions >= 12 and page.locator("#boards .cell.legal").count():
            page.screenshot(path=str(tmp_path / "web_table_midgame.png"), full_page=True)
            if os.environ.get("SHELFIE_DOCS_SCREENSHOT"):
                DOCS_SHOT.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(DOCS_SHOT), full_page=True)
            shot_taken = True
    page.screenshot(path=str(tmp_path / "web_table_final.png"), full_page=True)
    assert (tmp_path / "web_table_final.png").stat().st_size > 10_000

    view = server.api(f"/api/games/{gid}?since=0")
    assert view["over"]
    assert {m["seat"] for m in view["moves"]} == {0, 1}
    # the log shows every move, one line each, named by the engine
    log_lines = page.locator("#log li").all_text_contents()
    assert len(log_lines) == view["num_moves"]
    assert page.locator("#log li .what").all_text_contents()[-1] == view["moves"][-1]["name"]
    # the final table: one column per player, lines for the 5 rows, 5 columns and the total
    lines = page.locator("#result-table tr")
    assert lines.count() == 12
    assert lines.nth(0).locator("th").all_text_contents()[1:] == [s["name"] for s in view["seats"]]
    for p in range(2):
        column = [int(lines.nth(i).locator("td").nth(p).text_content() or "") for i in range(1, 12)]
        parts = view["result"]["breakdown"][p]
        assert column == parts["rows"] + parts["cols"] + [view["result"]["scores"][p]]
    winners = page.text_content("#winners") or ""
    names = [view["seats"][w]["name"] for w in view["result"]["winners"]]
    assert all(n in winners for n in names)
    assert page.errors == []  # type: ignore[attr-defined]
    # the replay link downloads the JSON replay
    href = page.get_attribute("#replay", "href")
    replay = page.request.get(server.url + href).json()
    assert replay["version"] == 1 and replay["final_state"] == view["state"]
    assert len(replay["actions"]) == view["num_moves"]


def test_invite_link_second_person_and_server_restart(browser: Any, server: Server, tmp_path: Path) -> None:
    ann = new_page(browser)
    nasty = "<svg onload=alert(1)>Bo"  # markup in a name (fits the 24-character limit)
    open_table(ann, server.url, [("human", "Ann"), ("human", nasty)])
    gid = game_id_of(ann)
    invite = ann.locator("#invite-links input[data-seat='1']")
    assert ann.is_visible("#invite")
    link = invite.input_value()
    assert link.startswith(server.url + f"/g/{gid}#seat=1&token=")
    bob = new_page(browser, 390, 844)  # a phone-sized screen
    bob.goto(link)
    ready(bob)
    assert bob.locator("#boards .board").count() == 2
    overflow = bob.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone screen"
    # Bob cannot move while it is Ann's turn
    assert bob.locator("#dice .die:enabled").count() == 0 and not bob.is_enabled("#stop")
    # a spectator without a token sees the table and nothing clickable
    watcher = new_page(browser)
    watcher.goto(server.url + f"/g/{gid}")
    ready(watcher)
    assert watcher.locator("#boards .board").count() == 2
    assert watcher.locator("#boards .cell.legal, #dice .die:enabled").count() == 0

    rnd = random.Random(5)
    restarted = False
    idle = 0
    moves = 0
    while not (ann.is_visible("#result") and bob.is_visible("#result")):
        acted = False
        for page in (ann, bob):
            if not page.is_visible("#result") and act_once(page, rnd):
                acted = True
                moves += 1
        if not acted:
            idle += 1
            assert idle < 300, "neither seat could move"
            time.sleep(0.05)
            continue
        idle = 0
        if moves >= 15 and not restarted:
            # kill the server hard mid-game, start it again on the same database, reload both pages
            ready(ann)
            ready(bob)
            before = server.api(f"/api/games/{gid}?since=0")
            server.kill()
            server.start()
            after = server.api(f"/api/games/{gid}?since=0")
            assert after == before
            ann.reload()  # Ann reloads; Bob's page just keeps polling and catches up by itself
            ready(ann)
            assert ann.locator("#log li").count() == before["num_moves"]
            restarted = True
        assert moves < 600
    assert restarted
    view = server.api(f"/api/games/{gid}?since=0")
    assert view["over"] and {m["seat"] for m in view["moves"]} == {0, 1}
    for page in (ann, bob):
        assert page.locator("#log li").count() == view["num_moves"]
        assert page.errors == []  # type: ignore[attr-defined]
        assert page.text_content("#error") == ""
        # the name with markup is shown as text, never interpreted
        assert nasty in (page.text_content("#boards") or "")
        assert nasty in (page.text_content("#log") or "")
        assert page.locator("[onload]").count() == 0
    bob.screenshot(path=str(tmp_path / "web_table_phone.png"), full_page=True)


def test_reroll_picks_map_to_the_canonical_ids(browser: Any, server: Server) -> None:
    """Any choice of dice (count per face) becomes the one legal reroll id the engine expects."""
    from shelfie_env.game.tables import REROLL_IDS

    rnd = random.Random(3)
    cases = []
    for dice in REROLL_IDS:
        counts = [rnd.randint(0, dice.count(f)) for f in range(6)]
        if sum(counts) == 0:
            counts[dice[0]] = 1
        cases.append((list(dice), counts))
    page = new_page(browser)
    page.goto(server.url + "/")
    ready(page)
    ids = page.evaluate("cases => cases.map(([dice, counts]) => Shelfie.rerollId(dice, counts))", cases)
    for (dice, counts), rid in zip(cases, ids):
        assert rid in REROLL_IDS[tuple(dice)], (dice, counts, rid)
        picked = [dice[i] for i in range(6) if rid >> i & 1]
        assert [picked.count(f) for f in range(6)] == counts


def test_joker_choice_is_asked_when_both_ways_are_legal(browser: Any, server: Server) -> None:
    from shelfie_env.play.web.service import GameService
    from shelfie_env.play.web.store import GameStore

    empty = [[0] * 5 for _ in range(5)]
    state = {
        "num_players": 2, "points": [[1, 2, 3, 5, 8]] * 5, "boards": [empty, empty], "current_player": 0,
        "phase": "circle", "dice": [0, 1, 4, 4, 4, 5], "spent": [False] * 6, "rolls_left": 0,
        "circles_this_turn": 0, "end_triggered": False,
    }  # fmt: skip
    store = GameStore(server.db, exclusive=False)  # the running server picks the new game up from the file
    view = GameService(store).create(
        {"seats": [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "random"}]}, seed=1, state=state
    )
    store.close()
    page = new_page(browser)
    page.goto(server.url + view["links"]["0"])
    ready(page)
    cat3 = page.locator("#boards .board[data-seat='0'] .cell[data-row='4'][data-col='2']")
    assert "legal" in (cat3.get_attribute("class") or "")
    cat3.click()
    assert page.is_visible("#joker-dialog")
    assert "3 cats" in (page.text_content("#joker-no") or "")
    assert "2 cats + the joker" in (page.text_content("#joker-yes") or "")
    page.click("#joker-yes")
    ready(page)
    page.wait_for_selector("#log li")
    assert page.locator("#log li").nth(0).text_content() == "Ann: circle cat #3 +joker"
    assert "circled" in (cat3.get_attribute("class") or "")
    # two cats and the joker are used up; a cat and End turn remain
    spent = page.locator("#dice .die.spent")
    assert sorted(spent.nth(i).get_attribute("data-face") for i in range(spent.count())) == [
        "cat",
        "cat",
        "joker",
    ]
    assert page.is_enabled("#end-turn")
    legal_cells = page.locator("#boards .board[data-seat='0'] .cell.legal")
    cells = {(legal_cells.nth(i).get_attribute("data-row"), legal_cells.nth(i).get_attribute("data-col"))
             for i in range(legal_cells.count())}  # fmt: skip
    assert cells == {("0", "0"), ("1", "0"), ("4", "0")}
    page.click("#end-turn")
    ready(page)
    assert page.locator("#log li").nth(1).text_content() == "Ann: end turn"
    assert page.locator("#log li").count() > 2  # the bot's turn followed


def test_the_setup_offers_only_bots_that_can_play_the_table(browser: Any, server: Server) -> None:
    page = new_page(browser)
    page.goto(server.url + "/")
    page.wait_for_selector("#seat-type-1")

    def offered(seat: int) -> list[str]:
        return page.eval_on_selector_all(f"#seat-type-{seat} option", "els => els.map(e => e.value)")

    page.select_option("#num-seats", "2")
    assert "bot:ppo" in offered(1) and "bot:greedy" in offered(1)
    page.select_option("#seat-type-1", "bot:ppo")
    page.select_option("#num-seats", "3")  # no ppo model plays three: the seat falls back to a bot that can
    assert "bot:ppo" not in offered(1) and "bot:ppo" not in offered(2) and "bot:greedy" in offered(2)
    assert page.input_value("#seat-type-1") == "bot:td"  # the default opponent, which plays three


def test_the_start_page_seats_the_self_taught_bot_by_default(browser: Any, server: Server) -> None:
    page = new_page(browser)
    page.goto(server.url + "/")
    page.wait_for_selector("#seat-type-1")
    ready(page)
    assert page.input_value("#num-seats") == "2"
    assert page.input_value("#seat-type-0") == "human" and page.input_value("#seat-type-1") == "bot:td"
    label = page.locator("#seat-type-1 option:checked").text_content()
    assert label == "Bot: td (the shipped self-taught bot)"
    assert "the bot seats start as td (the shipped self-taught bot)" in " ".join((page.text_content("main") or "").split())
    for n in ("3", "4"):
        page.select_option("#num-seats", n)
        assert {page.input_value(f"#seat-type-{i}") for i in range(1, int(n))} == {"bot:td"}
    page.click("#start")
    page.wait_for_url("**/g/**")
    ready(page)
    view = server.api(f"/api/games/{game_id_of(page)}")
    assert [s["bot"] for s in view["seats"]] == [None, "td", "td", "td"]
    assert page.errors == []  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- rematch, row labels


def last_move_position(seed: int) -> tuple[dict[str, Any], int]:
    """A two-player position one move before the end, with seat 1 on turn, and that last move
    (greedy plays both seats; the first seed whose last move is seat 1's is taken)."""
    from shelfie_env import bots
    from shelfie_env.game.engine import Game

    bot = bots.make("greedy")
    while True:
        game = Game.new(2, rng=seed)
        before, action = game.to_dict(), -1
        while not game.over:
            before, action = game.to_dict(), bot.act(game.to_dict())
            game.step(action)
        if before["current_player"] == 1:
            return before, action
        seed += 1


def open_from_state(server: Server, seats: list[dict[str, Any]], state: dict[str, Any]) -> dict[str, Any]:
    """A table opened at ``state`` in the running server's database (it reads the game from the file)."""
    from shelfie_env.play.web.service import GameService
    from shelfie_env.play.web.store import GameStore

    store = GameStore(server.db, exclusive=False)
    service = GameService(store)
    try:
        return service.create({"seats": seats}, seed=1, state=state)
    finally:
        service.close()
        store.close()


def click_action(page: Any, action: int) -> None:
    """Play ``action`` (stop, a circle, end turn or a cross-out) by clicking, as a person would."""
    from shelfie_env.game.actions import CIRCLE_BASE, CROSS_BASE, END_TURN, STOP

    ready(page)
    if action == STOP:
        page.click("#stop")
    elif action == END_TURN:
        page.click("#end-turn")
    elif action >= CROSS_BASE:
        page.click(f"#boards .board.mine .rowhead[data-row='{action - CROSS_BASE}']")
    else:
        cell, joker = divmod(action - CIRCLE_BASE, 2)
        page.click(f"#boards .board.mine .cell[data-row='{cell // 5}'][data-col='{cell % 5}']")
        if page.is_visible("#joker-dialog"):
            page.click("#joker-yes" if joker else "#joker-no")
    ready(page)


def test_rematch_from_the_end_screen_and_the_other_player_follows(
    browser: Any, server: Server, tmp_path: Path
) -> None:
    state, last = last_move_position(0)
    old = open_from_state(server, [{"type": "human", "name": "Ann"}, {"type": "human", "name": "Bob"}], state)
    gid = old["game_id"]
    ann, bob = new_page(browser), new_page(browser)
    # Ann opened the table: her browser keeps every seat's link, as the start page leaves it
    ann.add_init_script(
        f"localStorage.setItem('shelfie:game:{gid}', JSON.stringify({{links: {json.dumps(old['links'])}, creator: true}}))"
    )
    for page, seat in ((ann, "0"), (bob, "1")):
        page.goto(server.url + old["links"][seat])
        ready(page)
    assert ann.input_value("#invite-links input[data-seat='1']") == server.url + old["links"]["1"]
    assert not ann.is_visible("#rematch-top") and not ann.is_visible("#play-again")  # not before the end
    click_action(bob, last)  # Bob's move ends the game
    for page in (ann, bob):
        page.wait_for_selector("#result", state="visible")
        ready(page)
        # the end screen and the header offer to play again; Bob moves to the first seat
        assert page.is_visible("#play-again") and page.text_content("#play-again") == "Play again"
        assert page.is_visible("#rematch-top") and page.text_content("#rematch-top") == "Rematch"
        assert not page.is_visible("#join-rematch")
    assert ann.text_content("#again-note") == "The same players, new dice; Bob starts."
    assert bob.text_content("#again-note") == "The same players, new dice; you start."
    late_bob = new_page(browser, poll_ms=600_000)  # a second tab of Bob's on the end screen, not looking for news
    late_bob.goto(server.url + old["links"]["1"])
    ready(late_bob)
    assert late_bob.is_visible("#play-again")
    ann.screenshot(path=str(tmp_path / "web_end_screen.png"), full_page=True)
    if os.environ.get("SHELFIE_DOCS_SCREENSHOT"):
        ann.screenshot(path=str(DOCS_REMATCH_SHOT), full_page=True)

    ann.click("#play-again")
    ann.wait_for_url(lambda url: "/g/" in url and gid not in url)
    ready(ann)
    rid = game_id_of(ann)
    rematch = server.api(f"/api/games/{rid}?since=0")
    assert [s["name"] for s in rematch["seats"]] == ["Bob", "Ann"] and rematch["num_moves"] == 0
    assert server.api(f"/api/games/{gid}")["rematch"] == {"game_id": rid, "seat_map": [1, 0]}
    assert ann.get_attribute("#boards .board.mine", "data-seat") == "1"
    assert ann.locator("#dice .die:enabled").count() == 0 and not ann.is_visible("#result")
    # her Invite panel gives Bob's link to the rematch: his own token, at his new seat
    bob_token = old["tokens"]["1"]
    assert ann.input_value("#invite-links input[data-seat='0']") == server.url + f"/g/{rid}#seat=0&token={bob_token}"

    # Bob's finished page finds the rematch by itself and offers to join it with his seat's link
    bob.wait_for_selector("#join-rematch", state="visible")
    assert not bob.is_visible("#play-again") and bob.text_content("#rematch-top") == "Join the rematch"
    assert bob.text_content("#again-note") == "A rematch is open: the same players, new dice; you start."
    bob.screenshot(path=str(tmp_path / "web_rematch_offer.png"), full_page=True)
    bob.click("#join-rematch")
    bob.wait_for_url(f"**/g/{rid}#seat=0&token=*")
    ready(bob)
    assert bob.get_attribute("#boards .board.mine", "data-seat") == "0"
    assert bob.is_enabled("#stop") and bob.locator("#dice .die:enabled").count() == 6  # his turn
    # Bob's other tab asks for a rematch too: it gets the same one, not a second game
    late_bob.click("#play-again")
    late_bob.wait_for_url(f"**/g/{rid}#seat=0&token=*")
    ready(late_bob)
    assert server.api(f"/api/games/{gid}")["rematch"]["game_id"] == rid
    # a move in the rematch reaches Ann's page
    bob.click("#stop")
    ready(bob)
    ann.wait_for_selector("#log li")
    assert ann.locator("#log li").nth(0).get_attribute("data-name") == "stop rolling"
    assert (ann.locator("#log li .who").nth(0).text_content() or "").startswith("Bob")
    # Bob opening his old invite link later finds the offer at once (from the finished game's view)
    returning = new_page(browser, poll_ms=600_000)
    returning.goto(server.url + old["links"]["1"])
    ready(returning)
    assert returning.is_visible("#join-rematch") and not returning.is_visible("#play-again")
    assert returning.get_attribute("#join-rematch", "href") == f"/g/{rid}#seat=0&token={bob_token}"
    # someone without a seat may watch the rematch, not open one
    watcher = new_page(browser)
    watcher.goto(server.url + f"/g/{gid}")
    ready(watcher)
    assert not watcher.is_visible("#play-again")
    assert watcher.text_content("#join-rematch") == "Watch the rematch"
    assert watcher.get_attribute("#join-rematch", "href") == f"/g/{rid}"
    for page in (ann, bob, late_bob, returning, watcher):
        assert page.errors == []  # type: ignore[attr-defined]
        assert (page.text_content("#rematch-error") or "") == ""


def test_a_table_of_bots_is_played_again_by_whoever_watches_it(browser: Any, server: Server) -> None:
    from shelfie_env.game.engine import Game

    state, last = last_move_position(0)
    game = Game.from_dict(state, rng=0)
    game.step(last)
    old = open_from_state(server, [{"type": "bot", "bot": "random"}, {"type": "bot", "bot": "greedy"}], game.to_dict())
    page = new_page(browser)
    page.goto(server.url + f"/g/{old['game_id']}")
    ready(page)
    assert page.is_visible("#result") and page.is_visible("#play-again")
    assert page.text_content("#again-note") == "The same bots, new dice; greedy bot starts."
    page.click("#rematch-top")
    page.wait_for_url(lambda url: "/g/" in url and old["game_id"] not in url)
    rid = game_id_of(page)
    assert "#" not in page.url  # no seat to take: the page watches the bots play
    page.wait_for_selector("#log li")
    assert [s["bot"] for s in server.api(f"/api/games/{rid}")["seats"]] == ["greedy", "random"]
    assert page.errors == []  # type: ignore[attr-defined]


def cross_position(seed: int) -> dict[str, Any]:
    """A two-player position where seat 0 must cross out a row (nothing fits its dice)."""
    from shelfie_env.game.engine import Game

    rnd = random.Random(seed)
    while True:
        game = Game.new(2, rng=rnd.randrange(10**6))
        while not game.over:
            if game.phase_name == "cross" and game.current == 0:
                return game.to_dict()
            game.step(rnd.choice(list(game.legal_actions())))


def test_shelf_rows_are_labelled_with_their_items(browser: Any, server: Server, tmp_path: Path) -> None:
    from shelfie_env.game.actions import CROSS_BASE, SYMBOL_PLURALS, SYMBOLS, action_name

    view = open_from_state(server, [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}],
                           cross_position(2))  # fmt: skip
    crossable = sorted(m["action"] - CROSS_BASE for m in view["legal"])
    assert crossable and all(0 <= r < 5 for r in crossable)
    for width in (1100, 390):
        page = new_page(browser, width, 900)
        page.goto(server.url + view["links"]["0"])
        ready(page)
        for seat in ("0", "1"):
            heads = page.locator(f"#boards .board[data-seat='{seat}'] .rowhead")
            assert heads.all_text_contents() == list(SYMBOLS)  # readable words beside the icons
            for r in range(len(SYMBOLS)):
                assert heads.nth(r).is_visible()
                box = heads.nth(r).locator(".rowname").bounding_box()
                assert box is not None and box["height"] >= 7 and box["width"] >= 10
        # accessible names, as a screen reader gets them: the item, and on your shelf what a tap does
        mine, theirs = page.locator("#boards .board.mine"), page.locator("#boards .board[data-seat='1']")
        for r, symbol in enumerate(SYMBOLS):
            assert theirs.get_by_role("button", name=f"{symbol} row", exact=True).count() == 1
            name = f"{symbol} row: cross out {SYMBOL_PLURALS[r]}" if r in crossable else f"{symbol} row"
            head = mine.get_by_role("button", name=name, exact=True)
            assert head.count() == 1 and head.is_enabled() == (r in crossable)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow}px wider than the screen"
        mine.screenshot(path=str(tmp_path / f"web_row_labels_{width}.png"))
        assert page.errors == []  # type: ignore[attr-defined]
    page.click(f"#boards .board.mine .rowhead[data-row='{crossable[0]}']")  # a labelled row is still a button
    ready(page)
    assert page.locator("#log li").nth(0).text_content() == "Ann: " + action_name(CROSS_BASE + crossable[0])

