"""The evaluation arena: consistent counts, seat rotation, reproducibility, outputs."""

from __future__ import annotations

import argparse
import json

import pytest

from shelfie_env import arena
from shelfie_env.arena import cli as arena_cli
from shelfie_env.bots import spec


def test_wilson_interval_known_values():
    lo, hi = arena.wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert arena.wilson(0, 20)[0] == 0.0 and arena.wilson(20, 20)[1] == 1.0
    assert arena.wilson(0, 0) == (0.0, 1.0)


def test_parse_spec():
    assert spec.parse_spec("random") == ("random", {})
    assert spec.parse_spec("ppo:path=a.zip,deterministic=false,seed=3") == (
        "ppo",
        {"path": "a.zip", "deterministic": False, "seed": 3},
    )
    with pytest.raises(ValueError, match="key=value"):
        spec.parse_spec("ppo:path")
    assert spec.parse_spec("greedy#2") == ("greedy", {})  # a second seat of the same bot
    assert spec.parse_spec("ppo#b:path=a.zip") == ("ppo", {"path": "a.zip"})
    with pytest.raises(ValueError, match="no name"):
        spec.parse_spec("#2")


def test_two_player_counts_and_seat_rotation():
    res = arena.run_arena(["random", "greedy"], players=2, games=10, seed=5, workers=1)
    (p,) = res["pairings"]
    assert p["games"] == 10
    assert p["wins"] + p["ties"] + p["losses"] == 10
    assert p["bot_seat_counts"] == [5, 5]
    for b in res["bots"]:
        assert b["games"] == 10 and b["seat_counts"] == [5, 5]
    assert p["losses"] >= 8  # greedy beats random nearly always
    lo, hi = p["win_ci95"]
    assert lo <= p["win_rate"] <= hi
    ranks = [r["bot"] for r in res["ratings"]]
    assert ranks[0] == "greedy"


def test_results_by_seat_follow_the_records():
    records = [  # bot 0 wins twice from seat 0, ties once and loses once from seat 1
        {"game": 0, "seats": [0, 1], "scores": [30, 20]},
        {"game": 1, "seats": [1, 0], "scores": [25, 25]},
        {"game": 2, "seats": [0, 1], "scores": [40, 10]},
        {"game": 3, "seats": [1, 0], "scores": [50, 5]},
    ]
    (p,) = arena.summarise(["a", "b"], 2, records, ratings=False)["pairings"]
    first, second = p["by_seat"]
    keys = ("seat", "games", "wins", "ties", "losses")
    assert tuple(first[k] for k in keys) == (0, 2, 2, 0, 0)
    assert tuple(second[k] for k in keys) == (1, 2, 0, 1, 1)
    assert first["win_rate"] == 1.0 and second["win_rate"] == 0.0
    assert "100.0% / 0.0%" in arena.to_markdown({"bots": [], "pairings": [p]})


def test_by_seat_adds_up_in_a_real_arena():
    res = arena.run_arena(["random", "greedy"], players=2, games=10, seed=5, workers=1, ratings=False)
    (p,) = res["pairings"]
    assert [x["games"] for x in p["by_seat"]] == p["bot_seat_counts"] == [5, 5]
    for key in ("wins", "ties", "losses"):
        assert sum(x[key] for x in p["by_seat"]) == p[key]


def test_field_of_three_in_three_player_games_is_balanced():
    res = arena.run_arena(["random", "random:seed=1", "greedy"], players=3, games=6, workers=1)
    for b in res["bots"]:
        assert b["seat_counts"] == [2, 2, 2]
    assert len(res["pairings"]) == 3
    for p in res["pairings"]:
        assert p["wins"] + p["ties"] + p["losses"] == p["games"] == 6
    assert len(res["ratings"]) == 3


def test_first_place_and_rank_follow_the_records():
    records = [  # four-player games; bot 0 first twice (once shared), then second, then last
        {"game": 0, "seats": [0, 1, 2, 3], "scores": [40, 30, 20, 10]},
        {"game": 1, "seats": [1, 2, 3, 0], "scores": [35, 20, 10, 35]},
        {"game": 2, "seats": [2, 3, 0, 1], "scores": [50, 10, 40, 5]},
        {"game": 3, "seats": [3, 0, 1, 2], "scores": [30, 0, 30, 30]},
    ]
    bots = arena.summarise(["a", "b", "c", "d"], 4, records, ratings=False)["bots"]
    a = bots[0]
    assert a["first_place_rate"] == 0.5
    assert a["mean_rank"] == pytest.approx((1 + 1 + 2 + 4) / 4)  # rank = 1 + seats that scored more
    lo, hi = a["mean_rank_ci95"]
    assert lo < a["mean_rank"] < hi
    assert a["first_place_ci95"] == list(arena.wilson(2, 4))
    by_seat = {x["seat"]: x["first_place_rate"] for x in a["first_place_by_seat"]}
    assert by_seat == {0: 1.0, 1: 0.0, 2: 0.0, 3: 1.0}
    assert bots[1]["mean_rank"] == pytest.approx((2 + 1 + 4 + 1) / 4)  # tied first with c and d in game 3


def test_a_field_seats_each_bot_alone_against_copies_of_one_bot(capsys):
    res = arena.run_arena(["random", "greedy"], players=3, games=6, workers=1, field="greedy")
    assert res["config"]["field"] == "greedy"
    assert [b["bot"] for b in res["bots"]] == ["random", "greedy", "greedy#1", "greedy#2"]
    assert [b["games"] for b in res["bots"]] == [6, 6, 12, 12]  # one group per listed bot
    for b in res["bots"][:2]:
        assert b["seat_counts"] == [2, 2, 2]
    assert res["bots"][0]["first_place_rate"] < res["bots"][1]["first_place_rate"]
    md = arena.to_markdown(res)
    assert "alone against 2 × `greedy`" in md and "first place by seat" in md
    assert (
        arena_cli.main(["random", "--players", "4", "--field", "greedy", "--games", "4", "--workers", "1"])
        == 0
    )
    out = capsys.readouterr().out
    assert "`greedy#3`" in out and "mean rank" in out
    with pytest.raises(ValueError, match="field needs"):
        arena.run_arena(["random"], players=1, games=2, workers=1, field="greedy")


def test_ratings_treat_groups_alike():
    """Two bots with the same results against the same field get the same rating."""
    records = [
        {"game": i, "seats": [b, 2, 3], "scores": [60, 40 + i % 3, 30]} for b in (0, 1) for i in range(60)
    ]
    ratings = {r["bot"]: r["mu"] for r in arena.summarise(["a", "b", "f1", "f2"], 3, records)["ratings"]}
    assert abs(ratings["a"] - ratings["b"]) < 0.5


def test_results_do_not_depend_on_workers():
    one = arena.run_arena(["random", "random:seed=9"], games=30, seed=1, workers=1, ratings=False)
    two = arena.run_arena(["random", "random:seed=9"], games=30, seed=1, workers=2, ratings=False)
    assert one["pairings"] == two["pairings"]
    assert one["bots"] == two["bots"]


def test_solo_reports_scores_only():
    res = arena.run_arena(["random", "greedy"], players=1, games=4, workers=1)
    assert res["pairings"] == [] and "ratings" not in res
    assert [b["games"] for b in res["bots"]] == [4, 4]
    assert res["bots"][1]["mean_score"] > res["bots"][0]["mean_score"]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="unknown bot"):
        arena.run_arena(["random", "nosuchbot"], games=2, workers=1)
    with pytest.raises(
        ValueError, match=r"'ppo' plays 1- and 2-player games, not 3-player ones; bots for 3 .*planner"
    ):
        arena.run_arena(["ppo", "greedy", "random"], players=3, games=2, workers=1)
    with pytest.raises(ValueError, match="at least 3 bots"):
        arena.run_arena(["random", "greedy"], players=3, games=2, workers=1)
    with pytest.raises(ValueError, match="distinct"):
        arena.run_arena(["random", "random"], games=2, workers=1)


def test_cli_writes_json_markdown_and_plot(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    recs = [
        {
            "steps": s,
            "greedy": {"win_rate": w, "ci95": [w - 0.1, w + 0.1]},
            "random": {"win_rate": 0.9, "ci95": [0.85, 0.95]},
        }
        for s, w in ((0, 0.1), (1000, 0.4))
    ]
    (run_dir / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    parser = argparse.ArgumentParser()
    arena_cli.add_arguments(parser)
    out = tmp_path / "res"
    args = parser.parse_args(
        ["random", "greedy", "--games", "4", "--workers", "1", "--out", str(out), "--plot", str(run_dir)]
    )
    assert arena_cli.run(args) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["config"]["games_per_group"] == 4
    assert "| `random` | `greedy` | 4 |" in out.with_suffix(".md").read_text()
    assert (run_dir / "win_rate.png").stat().st_size > 1000
    assert arena_cli.run(parser.parse_args(["nosuchbot", "random"])) == 2
    assert "unknown bot" in capsys.readouterr().err


def test_record_card_stores_results_and_command(tmp_path):
    from shelfie_env.bots.learned.card import make_card, write_card

    model = tmp_path / "m.zip"
    write_card(model, make_card(2))
    res = arena.run_arena(["random", "greedy"], games=2, workers=1)
    arena.record_in_card(model, res, "shelfie arena random greedy --games 2")
    card = json.loads((tmp_path / "m.json").read_text())
    entry = card["evaluation"]["arena_2p_random_vs_greedy_2g"]
    assert entry["command"].startswith("shelfie arena") and entry["pairings"][0]["games"] == 2
    # the same pairing on other dice gets an entry of its own instead of replacing the first
    other = arena.run_arena(["random", "greedy"], games=2, workers=1, seed=5)
    arena.record_in_card(model, other, "shelfie arena random greedy --games 2 --seed 5")
    card = json.loads((tmp_path / "m.json").read_text())
    assert set(card["evaluation"]) == {"arena_2p_random_vs_greedy_2g", "arena_2p_random_vs_greedy_2g_seed5"}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["greedy", "random", "--seed", "-1"], "argument --seed: must be >= 0, got -1"),
        (["greedy", "random", "--games", "x"], "argument --games: expected an integer, got 'x'"),
        (["greedy", "random", "--players", "5"], "argument --players: must be 1..4, got 5"),
        (["greedy", "random", "--deals", "later"], "argument --deals: deals must be"),
        (["greedy", "random", "--dice", "loaded"], "argument --dice: invalid choice"),
    ],
)
def test_arena_argument_errors_name_their_option(argv, message, capsys) -> None:
    from shelfie_env.arena.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("players", [2, 3])
def test_evaluate_plays_head_to_head_at_two_players_and_in_a_field_beyond(players):
    from shelfie_env.arena import evaluate

    report = evaluate(
        "greedy", opponents=["random"], players=players, games=2 * players, luck=None, workers=1
    )
    (row,) = report.rows
    assert row.opponent == "random" and row.games == 2 * players
    assert row.raw["score_rate"] > 0.5  # greedy beats random seats
    with pytest.raises(ValueError, match="share the name"):
        evaluate("greedy", opponents=["greedy"], games=2, luck=None, workers=1)
