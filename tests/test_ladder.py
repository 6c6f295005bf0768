"""The shipped ladders, `shelfie levels`, `shelfie rate` and rate()."""

from __future__ import annotations

import json

import pytest

from shelfie_env.arena import rate
from shelfie_env.arena.ladder import format_ladder, level_ratings, nearest_level, shipped_ladder
from shelfie_env.bots.levels import LEVELS
from shelfie_env.cli import main


@pytest.mark.parametrize("players", [2, 3, 4])
def test_each_shipped_ladder_has_every_level_in_order_and_the_anchor(players: int) -> None:
    lad = shipped_ladder(players)
    assert lad["players"] == players and lad["anchor"] == {"bot": "greedy", "rating": 1500.0}
    assert [e["spec"] for e in lad["levels"]] == [lv.spec for lv in LEVELS]
    # measured with the levels as they play at this table size
    assert [e["plays"] for e in lad["levels"]] == [lv.describe(players) for lv in LEVELS]
    errors = [e["error_rate"] for e in lad["levels"]]
    ratings = [e["rating"] for e in lad["levels"]]
    assert errors == sorted(errors, reverse=True) and ratings == sorted(ratings)
    for e in lad["levels"]:
        assert e["ci95"][0] <= e["rating"] <= e["ci95"][1] and e["ms_median"] < 50
    assert next(b for b in lad["bots"] if b["spec"] == "greedy")["rating"] == 1500.0
    assert lad["calibration"]["slope"] < 0  # more regret, lower rating
    assert "| 6 | master | td |" in format_ladder(lad)
    ratings_by_spec = level_ratings(players)
    assert nearest_level(ratings_by_spec["level-3"][0] + 1, players) == "level-3"


def test_shelfie_levels_prints_the_ladder_and_refuses_a_table_without_one(capsys, tmp_path) -> None:
    out = tmp_path / "ladder.json"
    assert main(["levels", "--players", "3", "--json", str(out)]) == 0
    assert "Ladder at 3 players" in capsys.readouterr().out
    assert json.loads(out.read_text())["players"] == 3
    with pytest.raises(SystemExit) as exc:
        main(["levels", "--players", "1"])
    assert exc.value.code == 2
    assert "the ladder has tables of 2, 3, 4 players, not 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["rate", "level-3"], "is a level of the ladder"),
        (["rate", "banana"], "unknown bot 'banana'"),
        (["rate", "level-9"], "unknown level 'level-9'; the levels are level-1 (beginner)"),
        (["rate", "greedy", "--players", "1"], "the ladder has tables of 2, 3, 4 players, not 1"),
        (["rate", "greedy", "--games", "10"], "games must be at least one batch, 50"),
    ],
)
def test_shelfie_rate_refuses_bad_input_in_one_line(capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: shelfie rate") and message in err[-1], err
    assert sum("error:" in line for line in err) == 1 and "Traceback" not in "\n".join(err)


def test_rate_places_a_known_bot_within_its_interval_of_its_shipped_rating() -> None:
    """``greedy`` is the anchor (1500): 100 games against the levels near it cover it."""
    r = rate("greedy", players=2, games=100, workers=1)
    lo, hi = r.ci95
    assert r.games == 100 and lo <= 1500.0 <= hi, r
    d = r.to_dict()
    assert {"rating", "ci95", "games", "level", "players"} <= set(d) and d["players"] == 2


def test_a_measurement_resumes_only_matches_and_errors_of_the_levels_as_they_play_now(
    tmp_path, monkeypatch
) -> None:
    """A cached match or error rate of a level that played other noise is measured anew, not reused."""
    from shelfie_env.arena import ladder

    out = tmp_path / "ladder.json"
    cache = out.with_suffix(".matches.jsonl")
    now = [ladder.plays("level-2", 3), ladder.plays("level-1", 3)]
    assert now[0] == LEVELS[1].describe(3) and ladder.plays("greedy", 3) == "greedy"
    line = {"a": "level-2", "b": "level-1", "score": 0.6, "se": 0.01, "games": 30, "players": 3}
    stale = {**line, "score": 0.9, "games": 60, "plays": ["td, aims 0.9 below its best (sd 0.02), within 0.15", now[1]]}
    cache.write_text("\n".join(json.dumps(x) for x in (line, stale, {**line, "plays": now})) + "\n")
    done = ladder._done_matches(cache, 3)
    assert list(done) == [("level-2", "level-1")] and done[("level-2", "level-1")].score == 0.6

    measured = []

    def fake_errors(players: int) -> dict:
        measured.append(players)
        return {"level-1": {"error_rate": 0.08}, "greedy": {"error_rate": 0.05}}

    monkeypatch.setattr(ladder, "_errors", fake_errors)
    first = ladder.cached_errors(3, out)
    assert measured == [3] and first["level-1"]["plays"] == ladder.plays("level-1", 3)
    assert ladder.cached_errors(3, out) == first and measured == [3]  # kept: the levels play as they did
    body = json.loads(out.with_suffix(".errors.json").read_text())
    body["level-1"]["plays"] = "td, aims 0.9 below its best (sd 0.02), within 0.15"
    out.with_suffix(".errors.json").write_text(json.dumps(body))
    ladder.cached_errors(3, out)
    assert measured == [3, 3]
    body = json.loads(out.with_suffix(".errors.json").read_text())
    assert body["level-1"]["labels"] == ladder.labels_digest(3) != ladder.labels_digest(4)
    body["greedy"]["labels"] = "0" * 16  # measured on other labels
    out.with_suffix(".errors.json").write_text(json.dumps(body))
    ladder.cached_errors(3, out)
    assert measured == [3, 3, 3]
