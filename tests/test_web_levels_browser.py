"""End-to-end: a level picked on the start page, a game against it played by clicking, the rating
on the end screen and the person page (/me) with its plot, in headless Chromium (as
tests/test_web_browser.py)."""

from __future__ import annotations

import math
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_web_browser import ROOT, Server, act_once, game_id_of, new_page, ready
from tests.test_web_browser import browser as browser  # noqa: PLC0414  (the Chromium fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
DOCS_SHOT = ROOT / "docs" / "img" / "web_levels.png"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "games.sqlite3", tmp_path / "server.log")
    srv.start()
    yield srv
    srv.stop()


def js_round(x: float) -> int:
    """JavaScript's ``Math.round`` (halves go up), as the pages round."""
    return math.floor(x + 0.5)


def label(level: dict[str, Any]) -> str:
    return f"{level['spec']} · {level['name']} · {js_round(level['rating'])}"


def rating_text(r: dict[str, Any]) -> str:
    change = js_round(r["change"])
    sign = "+" if change > 0 else "−" if change < 0 else "±"
    return f"{js_round(r['rating'])} ± {js_round(r['rd'])} ({sign}{abs(change)})"


def test_pick_a_level_finish_the_game_and_see_the_rating(browser: Any, server: Server, tmp_path: Path) -> None:
    meta = server.api("/api/meta")
    levels = meta["levels"]["2"]
    page = new_page(browser)
    page.goto(server.url + "/")
    ready(page)
    # the level menu: every level by name and rating, the middle one suggested for a first game
    assert page.is_visible("#level-row")
    shown = page.eval_on_selector_all("#level-pick option", "els => els.map(e => e.textContent)")
    assert shown == [label(lv) for lv in levels]
    assert page.input_value("#level-pick") == meta["first_level"] == "level-3"
    assert "first game" in (page.text_content("#level-note") or "")
    assert page.input_value("#seat-type-1") == "bot:td"  # the seats keep the default opponent until asked
    page.select_option("#level-pick", "level-1")
    page.click("#use-level")
    assert page.input_value("#seat-type-1") == "bot:level-1"
    assert page.locator("#seat-type-1 option:checked").text_content() == "Bot: " + label(levels[0])
    page.fill("#seats .seat-row[data-seat='0'] .seat-name", "Ann")
    page.click("#start")
    page.wait_for_url("**/g/**")
    ready(page)
    gid = game_id_of(page)
    assert [s["bot"] for s in server.api(f"/api/games/{gid}")["seats"]] == [None, "level-1"]

    rnd = random.Random(7)
    moves = 0
    while not page.is_visible("#result"):
        assert act_once(page, rnd), "a person facing a bot always has a move"
        moves += 1
        assert moves < 400, "the game should end"
        ready(page)
    view = server.api(f"/api/games/{gid}")
    mine = view["ratings"][0]
    assert mine["rated"] and mine["games"] == 1
    page.wait_for_selector("#ratings .rating-line.mine")
    line = page.text_content("#ratings .rating-line.mine") or ""
    assert line == f"Your rating {rating_text(mine)} at 2 players, after 1 rated game."
    page.locator("#result").screenshot(path=str(tmp_path / "levels_end.png"))
    if os.environ.get("SHELFIE_DOCS_SCREENSHOT"):
        DOCS_SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.locator("#result").screenshot(path=str(DOCS_SHOT))
    assert page.errors == []  # type: ignore[attr-defined]

    # the review adds each player's error rate as a rating and the level suggested next
    page.click("#review-open")
    page.wait_for_selector("body[data-review='shown']", timeout=60_000)
    page.wait_for_selector("#review-rating tbody tr")
    rated = server.api(f"/api/games/{gid}/error-rating")
    rows = page.locator("#review-rating tbody tr")
    assert rows.count() == 2
    for i, p in enumerate(rated["players"]):
        cells = rows.nth(i).locator("th, td").all_text_contents()
        lo, hi = p["ci95"]
        assert cells == [p["name"], f"{p['regret']:.4f}", str(p["decisions"]),
                         f"{js_round(p['rating'])} [{js_round(lo)}, {js_round(hi)}]", p["suggested_label"]]

    # the person page: the rating, the game, the plot of the rating over the games
    page.click("#ratings a[href='/me']")
    page.wait_for_url("**/me")
    ready(page)
    summary = page.text_content("#ratings li[data-players='2']") or ""
    assert summary.startswith(f"2 players: {js_round(mine['rating'])} ± {js_round(mine['rd'])} after 1 rated game")
    row = page.locator(f"#games tr[data-game='{gid}']")
    assert row.count() == 1 and rating_text(mine) in (row.text_content() or "")
    points = page.get_attribute("figure.rating-plot[data-players='2'] polyline.plot-line", "points") or ""
    assert len(points.split()) == 2  # the start and the rating after the game
    assert page.locator("figure.rating-plot line.plot-level").count() == len(levels)
    assert page.errors == []  # type: ignore[attr-defined]

    # a new table suggests the level nearest the new rating
    page.goto(server.url + "/")
    ready(page)
    nearest = min(levels, key=lambda lv: abs(lv["rating"] - mine["rating"]))
    assert page.input_value("#level-pick") == nearest["spec"]
    assert re.search(r"nearest your rating at 2 players, \d+ ± \d+", page.text_content("#level-note") or "")
    assert page.errors == []  # type: ignore[attr-defined]
