"""End-to-end in headless Chromium (as tests/test_web_browser.py): picking equal dice, resigning,
and hints that can be told apart."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shelfie_env.game.engine import Game
from shelfie_env.play.web.service import GameService
from shelfie_env.play.web.store import GameStore
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
