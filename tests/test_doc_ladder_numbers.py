"""The guides quote the levels' ratings of the shipped two-player ladder, not numbers of an older one."""

from __future__ import annotations

import re
from pathlib import Path

from shelfie_env.arena.ladder import shipped_ladder

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _ratings() -> dict[int, int]:
    return {int(level["level"]): round(level["rating"]) for level in shipped_ladder(2)["levels"]}


def test_the_guides_quote_the_shipped_ladder() -> None:
    ratings = _ratings()
    quoted = 0
    for doc in ("play.md", "web.md"):
        text = (DOCS / doc).read_text(encoding="utf-8")
        for rating, level in re.findall(r"(\d{3,4}) is level-(\d)'s rating at two players", text):
            assert int(rating) == ratings[int(level)], (doc, level, rating)
            quoted += 1
        for level, rating in re.findall(r"level-(\d) · \w+ · (\d{3,4})` at two players", text):
            assert int(rating) == ratings[int(level)], (doc, level, rating)
            quoted += 1
    assert quoted >= 2
