"""What the arena's report and plot say beyond the numbers: why the OpenSkill table may order bots otherwise,
and the 95 % interval of a run evaluated once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shelfie_env.arena import plot_run, run_arena, to_markdown


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_arena(["greedy", "random"], 2, games=4, workers=1, ratings=True)


def _under_the_openskill_table(md: str) -> str:
    after = md.split("| rank | bot | OpenSkill mu ± sigma | ordinal (mu − 3 sigma) |", 1)[1]
    return after.strip().splitlines()[-1]


def test_the_openskill_table_says_what_orders_it(result: dict[str, Any]) -> None:
    note = _under_the_openskill_table(to_markdown(result))
    assert note.startswith("OpenSkill ranks by its ordinal, the conservative mu − 3 sigma")
    assert "after few games sigma is wide" in note


def test_the_openskill_note_names_bots_it_orders_against_their_first_place_rates(result: dict[str, Any]) -> None:
    first = {b["bot"]: b["first_place_rate"] for b in result["bots"]}
    weaker, stronger = sorted(first, key=first.get)
    assert first[weaker] < first[stronger]
    agrees = {**result, "ratings": sorted(result["ratings"], key=lambda r: -first[r["bot"]])}
    assert "Here it ranks" not in _under_the_openskill_table(to_markdown(agrees))
    reversed_ = {**result, "ratings": sorted(result["ratings"], key=lambda r: first[r["bot"]])}
    note = _under_the_openskill_table(to_markdown(reversed_))
    assert (
        f"Here it ranks `{weaker}` above `{stronger}`, whose first-place rate is the higher "
        f"({100 * first[stronger]:.1f} % to {100 * first[weaker]:.1f} %)." in note
    )


def _plotted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, recs: list[dict[str, Any]]) -> Any:
    """The axes ``plot_run`` draws for an ``eval.jsonl`` of ``recs``."""
    from matplotlib.figure import Figure

    saved = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: saved.append(self))
    log = tmp_path / "eval.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    plot_run(log)
    (fig,) = saved
    (ax,) = fig.axes
    return ax


def test_a_plot_of_one_evaluation_draws_its_interval(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from matplotlib.container import ErrorbarContainer

    ax = _plotted(monkeypatch, tmp_path, [{"steps": 5000, "greedy": {"win_rate": 0.4, "win_ci95": [0.3, 0.52]}}])
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    _line, _caps, (segments,) = bars.lines
    assert [[tuple(p) for p in s] for s in segments.get_segments()] == [[(5000, 0.3), (5000, 0.52)]]
    assert ax.get_ylabel() == "win rate (95% CI)"


def test_a_plot_of_several_evaluations_draws_a_band(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    recs = [{"steps": s, "greedy": {"win_rate": w, "win_ci95": [w - 0.1, w + 0.1]}} for s, w in ((1, 0.2), (2, 0.4))]
    ax = _plotted(monkeypatch, tmp_path, recs)
    (band,) = ax.collections
    ys = sorted({round(float(y), 6) for _x, y in band.get_paths()[0].vertices})
    assert ys[0] == pytest.approx(0.1) and ys[-1] == pytest.approx(0.5)
    assert list(ax.lines[0].get_ydata()) == [0.2, 0.4]
