"""End-to-end in headless Chromium (as tests/test_web_browser.py): a solo game's exact hints and
the exact review its end screen opens by itself."""

from __future__ import annotations

from typing import Any

import pytest

from shelfie_env.game.engine import Game
from shelfie_env.solo.table import shipped_table
from shelfie_env.solo.turn import SoloTurn, best_action
from tests.test_web_browser import Server, new_page, ready
from tests.test_web_browser import browser as browser  # noqa: PLC0414  (the Chromium fixture)
from tests.test_web_browser import server as server  # noqa: PLC0414  (a server on a free port)
from tests.test_web_review_browser import add_game
from tests.test_web_table_actions_browser import post

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_solo_hints_show_exact_values(browser: Any, server: Server) -> None:
    view = add_game(server.db, [{"type": "human", "name": "Ann"}], seed=3)
    gid, token = view["game_id"], view["tokens"]["0"]
    page = new_page(browser)
    page.goto(server.url + view["links"]["0"])
    ready(page)
    page.click("#hint")
    page.wait_for_selector("#hints li", timeout=60_000)
    hints = post(server, f"/api/games/{gid}/hint", {"seat": 0, "token": token, "k": 3})
    assert hints["exact"] is True
    values = SoloTurn(shipped_table(), Game.from_dict(server.api(f"/api/games/{gid}")["state"])).action_values()
    assert hints["hints"][0]["action"] == best_action(values)
    items = page.locator("#hints li")
    assert items.count() == 3
    for i, h in enumerate(hints["hints"]):
        text = items.nth(i).text_content() or ""
        assert f"worth {h['value']:.2f} points expected at the end" in text, text
        assert ("(the best)" in text) == (h["loss"] == 0), text
    assert "the values are exact" in (page.text_content("#hint-explain") or "")
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_solo_games_end_screen_opens_its_exact_review(browser: Any, server: Server) -> None:
    gid = add_game(server.db, [{"type": "bot", "bot": "greedy", "name": "Gus"}], seed=4)["game_id"]
    assert server.api(f"/api/games/{gid}")["over"]
    page = new_page(browser, width=1000, height=900)
    page.goto(f"{server.url}/g/{gid}")
    ready(page)
    page.wait_for_selector("body[data-review='shown']", timeout=60_000)  # no click: it opens by itself
    review = server.api(f"/api/games/{gid}/review")
    p = review["players"][0]
    rows = dict(
        zip(
            page.locator("#review-solo th").all_text_contents(),
            page.locator("#review-solo td").all_text_contents(),
        )
    )
    assert rows["Score"] == str(p["score"])
    assert rows["E*: perfect play's average from the empty shelf"] == f"{review['optimum']:.2f}"
    assert rows["Loss per decision"] == f"{p['loss_per_decision']:.3f}"
    assert rows["Lost by the decisions"] == f"{p['regret']:.2f}"
    mistakes = page.locator("#review-mistakes li")
    assert mistakes.count() == len(review["mistakes"]) == 3
    for i, m in enumerate(review["mistakes"]):
        cost = mistakes.nth(i).locator(".mistake-cost").text_content() or ""
        assert cost.startswith(f"Cost {m['regret']:.2f} expected final points"), cost
    assert page.locator("#review-luck tbody tr").count() == len(review["turns"])
    assert page.is_hidden("#review-value") and page.is_hidden("#review-open")
    assert page.locator("#review-rating").count() == 0  # no rating from the error rate alone
    assert page.errors == []  # type: ignore[attr-defined]
