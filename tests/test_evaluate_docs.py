"""docs/evaluation.md and the arena agree on the default luck value function."""

from __future__ import annotations

import re
from pathlib import Path

from shelfie_env.arena.cli import main
from shelfie_env.arena.values import DEFAULT_LUCK

DOC = Path(__file__).parents[1] / "docs" / "evaluation.md"


def test_every_paragraph_on_the_default_luck_measure_names_the_same_one() -> None:
    paragraphs = [
        p
        for p in re.split(r"\n\s*\n", DOC.read_text())
        if "default" in p and "luck" in p.lower() and re.search(r"`td[`:]", p)
    ]
    assert len(paragraphs) >= 3
    for p in paragraphs:
        assert f"`{DEFAULT_LUCK}`" in p, p


def test_the_arena_names_the_default_luck_measure_in_its_output(tmp_path, capsys) -> None:
    out = tmp_path / "r"
    assert (
        main(
            [
                "greedy",
                "random",
                "--games",
                "2",
                "--luck",
                "--workers",
                "1",
                "--no-ratings",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    md = out.with_suffix(".md").read_text()
    assert f"luck measured with `{DEFAULT_LUCK}`" in md
    assert DEFAULT_LUCK in capsys.readouterr().out
