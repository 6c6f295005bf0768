"""End-to-end in headless Chromium (as tests/test_web_browser.py): picking equal dice, resigning,
and hints that can be told apart."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shelfie_env.game.actions import reroll_action
from shelfie_env.game.engine import Game
from shelfie_env.play.web.service import GameService
from shelfie_env.play.web.store import GameStore
from tests.conftest import make_state
from tests.test_web_browser import Server, new_page, ready
from tests.test_web_browser import browser as browser  # noqa: PLC0414  (the Chromium fixture)
from tests.test_web_browser import server as server  # noqa: PLC0414  (a server on a free port)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def add_game(db: Path, seats: list[dict[str, Any]], state: dict[str, Any] | None = None, seed: int = 1) -> dict:
    """Store a game beside the running server (which picks it up from the file)."""
    store = GameStore(db, exclusive=False)
    service = GameService(store)
    try:
        return service.create({"seats": seats}, seed=seed, state=state)
    finally:
        service.close()
        store.close()


def post(server: Server, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        server.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as r:
        return json.loads(r.read())


def test_hints_that_differ_read_differently_and_no_number_reads_minus_zero(browser: Any, server: Server) -> None:
    # three players at the start of seed 1: the planner's best moves differ by about 0.0001 rank edge
    state = Game.new(3, rng=1).to_dict()
    seats = [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "greedy"}]
    view = add_game(server.db, seats, state=state)
    gid, token = view["game_id"], view["tokens"]["0"]
    page = new_page(browser)
    page.goto(server.url + view["links"]["0"])
    ready(page)
    page.click("#hint")
    page.wait_for_selector("#hints li", timeout=60_000)
    estimates = page.locator("#hints li .hint-estimate").all_text_contents()
    hints = post(server, f"/api/games/{gid}/hint", {"seat": 0, "token": token, "k": 3})["hints"]
    assert len(estimates) == len(hints) == 3
    for i in range(3):
        for j in range(i + 1, 3):
            if hints[i]["value"] != hints[j]["value"]:
                assert estimates[i] != estimates[j], estimates
    assert all("finish ahead of about" in e for e in estimates), estimates
    assert len({e for e in estimates}) > 1, estimates
    fixed = page.evaluate(
        "[Shelfie.fixed(-0.001, 2, true), Shelfie.fixed(-0.001, 2), Shelfie.fixed(0.004, 2, true),"
        " Shelfie.fixed(-0.25, 2, true), Shelfie.fixed(0.25, 2, true)]"
    )
    assert fixed == ["0.00", "0.00", "0.00", "−0.25", "+0.25"]
    assert page.errors == []  # type: ignore[attr-defined]


def _lifted(page: Any) -> list[int]:
    dice = page.locator("#dice .die")
    return [i for i in range(dice.count()) if "selected" in (dice.nth(i).get_attribute("class") or "").split()]


def _roll(page: Any) -> tuple[str, int, bool]:
    return page.text_content("#roll"), int(page.get_attribute("#roll", "data-action")), page.is_enabled("#roll")


def test_equal_dice_lift_the_die_tapped_and_count_per_face(browser: Any, server: Server) -> None:
    seats = [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}]
    pairs = make_state(num_players=2, phase="reroll", dice=[2, 2, 4, 4, 5, 5], rolls_left=2)  # books, cats, jokers
    view = add_game(server.db, seats, state=pairs)
    page = new_page(browser)
    page.goto(server.url + view["links"]["0"])
    ready(page)
    dice = page.locator("#dice .die")
    dice.nth(0).click()  # the first book lifts (the move rerolls one book)
    assert _lifted(page) == [0] and _roll(page) == ("Roll 1 selected (2 left)", reroll_action([1]), True)
    dice.nth(1).click()  # the second book lifts too: two books
    assert _lifted(page) == [0, 1] and _roll(page) == ("Roll 2 selected (2 left)", reroll_action([0, 1]), True)
    dice.nth(0).click()  # a lifted book lowers: one book is left lifted
    assert _lifted(page) == [1] and _roll(page)[:2] == ("Roll 1 selected (2 left)", reroll_action([1]))
    dice.nth(3).click()
    dice.nth(2).click()  # both cats, the second first
    dice.nth(4).click()  # and a joker
    assert _lifted(page) == [1, 2, 3, 4]
    assert _roll(page) == ("Roll 4 selected (2 left)", reroll_action([1, 2, 3, 5]), True)
    page.click("#roll")
    page.wait_for_selector("#roll:has-text('(1 left)')")
    moves = server.api(f"/api/games/{view['game_id']}?since=0")["moves"]
    assert [m["action"] for m in moves] == [reroll_action([1, 2, 3, 5])]
    assert page.errors == []  # type: ignore[attr-defined]


def test_three_equal_dice_lift_and_lower_one_at_a_time(browser: Any, server: Server) -> None:
    seats = [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}]
    triple = make_state(num_players=2, phase="reroll", dice=[0, 0, 0, 3, 4, 5], rolls_left=1)  # three plants
    view = add_game(server.db, seats, state=triple)
    page = new_page(browser)
    page.goto(server.url + view["links"]["0"])
    ready(page)
    dice = page.locator("#dice .die")
    dice.nth(2).click()
    dice.nth(0).click()
    assert _lifted(page) == [0, 2] and _roll(page) == ("Roll 2 selected (1 left)", reroll_action([1, 2]), True)
    dice.nth(1).click()  # all three
    assert _lifted(page) == [0, 1, 2] and _roll(page)[1] == reroll_action([0, 1, 2])
    dice.nth(1).click()  # the middle one lowers
    assert _lifted(page) == [0, 2] and _roll(page)[1] == reroll_action([1, 2])
    dice.nth(0).click()
    dice.nth(2).click()  # none left
    assert _lifted(page) == [] and _roll(page) == ("Roll selected (1 left)", 0, False)
    assert page.errors == []  # type: ignore[attr-defined]


def test_resign_ends_the_game_which_then_downloads_and_reviews(browser: Any, server: Server) -> None:
    seats = [{"type": "human", "name": "Ann"}, {"type": "bot", "bot": "greedy"}]
    view = add_game(server.db, seats)
    gid = view["game_id"]
    page = new_page(browser)
    page.goto(server.url + view["links"]["0"])
    ready(page)
    assert page.is_visible("#resign")
    page.click("#resign")
    assert page.is_visible("#resign-dialog") and "you finish last" in page.text_content("#resign-question")
    page.click("#resign-no")  # changed her mind
    assert not page.is_visible("#resign-dialog") and not server.api(f"/api/games/{gid}")["over"]
    page.click("#resign")
    page.click("#resign-yes")
    page.wait_for_selector("#result:not(.hidden)")
    assert page.text_content("#winners") == "Ann resigned. greedy bot wins!"
    assert not page.is_visible("#play") and not page.is_visible("#resign")
    stored = server.api(f"/api/games/{gid}")
    assert stored["over"] and stored["resigned"] == 0
    assert page.get_attribute("#replay", "href") == f"/api/games/{gid}/replay"
    assert server.api(f"/api/games/{gid}/replay")["resigned"] == 0
    page.click("#review-open")
    page.wait_for_selector("#review-body:not(.hidden)", timeout=60_000)
    assert page.text_content("#review-error") == ""
    assert "Ann" in page.text_content("#review-body")
    # a watcher (no seat) has no resign button
    watcher = new_page(browser)
    watcher.goto(server.url + f"/g/{gid}")
    ready(watcher)
    assert not watcher.is_visible("#resign")
    assert page.errors == [] and watcher.errors == []  # type: ignore[attr-defined]
