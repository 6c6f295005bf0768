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


def new_page(browser: Any, width: int = 1100, height: int = 900) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(
        "localStorage.setItem('shelfie:delay', '20'); localStorage.setItem('shelfie:poll', '150');"
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
    assert page.input_value("#seat-type-1") in ("bot:planner", "bot:greedy", "bot:random")
