"""End-to-end: the review panel of a finished game in headless Chromium (as tests/test_web_browser.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shelfie_env.play.web.service import GameService
from shelfie_env.play.web.store import GameStore
from tests.test_web_browser import ROOT, Server, new_page, ready
from tests.test_web_browser import browser as browser  # noqa: PLC0414  (the Chromium fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
DOCS_SHOT = ROOT / "docs" / "img" / "review.png"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "games.sqlite3", tmp_path / "server.log")
    srv.start()
    yield srv
    srv.stop()


def add_game(db: Path, seats: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Store a game beside the running server; a table of bots is played to its end first."""
    store = GameStore(db, exclusive=False)
    service = GameService(store)
    service.bots_only_pace_s = 0.0
    try:
        view = service.create({"seats": seats}, seed=seed)
        assert service.wait_for_bots(120), "the bots did not finish"
    finally:
        service.close()
        store.close()
    return view


def signed(x: float) -> str:
    text = f"{abs(x):.2f}"
    return text if float(text) == 0 else ("+" if x > 0 else "−") + text


def test_the_review_panel_of_a_finished_game(browser: Any, server: Server, tmp_path: Path) -> None:
    seats = [{"type": "bot", "bot": "td", "name": "Tess"}, {"type": "bot", "bot": "greedy", "name": "Gus"}]
    gid = add_game(server.db, seats, seed=3)["game_id"]
    assert server.api(f"/api/games/{gid}")["over"]
    page = new_page(browser, width=1000, height=900)
    page.goto(f"{server.url}/g/{gid}")
    ready(page)
    assert page.is_visible("#result") and page.is_visible("#review")
    assert page.is_hidden("#review-body")
    page.click("#review-open")
    page.wait_for_selector("body[data-review='shown']", timeout=60_000)
    review = server.api(f"/api/games/{gid}/review")

    # results: one row per player with the luck-adjusted result
    rows = page.locator("#review-results tbody tr")
    assert rows.count() == 2
    for i, p in enumerate(review["players"]):
        cells = rows.nth(i).locator("th, td").all_text_contents()
        assert cells == [p["name"], str(p["score"]), signed(p["result"]), signed(p["luck"]), signed(p["adjusted"]),
                         f"{p['regret']:.2f}", str(p["mistakes"]), str(p["blunders"])]

    # luck: one row per round, each player's turn with a bar, its value and its mark
    rounds = sorted({t["round"] for t in review["turns"]})
    luck_rows = page.locator("#review-luck tbody tr")
    assert luck_rows.count() == len(rounds) > 5
    for t in review["turns"]:
        cell = page.locator(f"#review-luck tbody tr[data-round='{t['round']}'] td").nth(t["seat"])
        assert (cell.locator(".luck-value").text_content() or "") == signed(t["luck"])
        marks = {"lucky": "+", "very lucky": "++", "unlucky": "−", "very unlucky": "−−"}
        if t["mark"]:
            assert cell.locator(".luck-mark").text_content() == marks[t["mark"]]
        else:
            assert cell.locator(".luck-mark").count() == 0
    biggest = max(review["turns"], key=lambda t: abs(t["luck"]))
    fill = page.locator(f"#review-luck tbody tr[data-round='{biggest['round']}'] td").nth(biggest["seat"])
    bar_box = fill.locator(".luck-bar").bounding_box()
    fill_box = fill.locator(".luck-fill").bounding_box()
    assert bar_box and fill_box and fill_box["width"] > 0.2 * bar_box["width"]  # the largest luck fills its side
    totals = page.locator("#review-luck tfoot td").all_text_contents()
    assert totals == [signed(p["luck"]) for p in review["players"]]

    # the three biggest mistakes, each with the move played and the better one
    mistakes = page.locator("#review-mistakes li")
    assert mistakes.count() == 3 == len(review["mistakes"])
    for i, m in enumerate(review["mistakes"]):
        li = mistakes.nth(i)
        assert li.get_attribute("data-move") == str(m["move"])
        assert f"Move {m['move']}, round {m['round']} — {review['players'][m['seat']]['name']}" in (
            li.locator(".mistake-head").text_content() or ""
        )
        assert li.locator("strong.played").text_content() == m["played"]
        assert li.locator("strong.better").text_content() == m["better"]
        assert li.locator(".review-die").count() == len(m["dice"])
        assert f"Cost {m['regret']:.3f}" in (li.locator(".mistake-cost").text_content() or "")
    assert "5 percentage points of win chance" in (page.text_content("#review-body .review-unit") or "")
    assert page.errors == []  # type: ignore[attr-defined]

    page.locator("#review").screenshot(path=str(tmp_path / "review.png"))
    assert (tmp_path / "review.png").stat().st_size > 20_000
    if os.environ.get("SHELFIE_DOCS_SCREENSHOT"):
        DOCS_SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.locator("#review").screenshot(path=str(DOCS_SHOT))

    # the planner's search gives its own review of the same game
    page.select_option("#review-value", "planner")
    page.locator("#review-body .review-unit", has_text="the planner's exact search").wait_for(timeout=60_000)
    planner = server.api(f"/api/games/{gid}/review?value=planner")
    assert page.locator("#review-mistakes li").count() == len(planner["mistakes"])
    assert page.errors == []  # type: ignore[attr-defined]


def test_no_review_during_a_game(browser: Any, server: Server) -> None:
    view = add_game(server.db, [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}], seed=1)
    page = new_page(browser)
    page.goto(server.url + view["links"]["0"])
    ready(page)
    assert page.is_visible("#play") and page.is_hidden("#review")
    assert page.errors == []  # type: ignore[attr-defined]
