"""Positions: drawn from games of mixed bots on a deal set, labelled, saved and loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shelfie_env.arena.analysis.positions import (
    LABEL,
    draw_positions,
    label_file,
    label_position,
    label_settings,
    load_positions,
    main,
    precision,
    save_positions,
)
from shelfie_env.bots.rollout.rollouts import BasePolicy
from shelfie_env.game.engine import Game

TINY = {"rollouts": 2, "extra": 2, "focus": 2, "policy": "td"}


def test_draw_is_deterministic_and_on_the_part_deals() -> None:
    a = list(draw_positions(2, "test", 6))
    b = list(draw_positions(2, "test", 6))
    assert a == b and len(a) == 6
    assert len({r["id"] for r in a}) == 6
    assert all(30_000_000 <= r["deal"] < 30_000_010 for r in a)
    sel = list(draw_positions(2, "selection", 2))
    assert all(10_000_000 <= r["deal"] < 10_000_010 for r in sel)
    for r in a:
        g = Game.from_dict(r["state"])
        assert len(g.legal_actions()) > 1
        assert r["phase"] in ("reroll", "circle", "cross")
        assert r["mover"] == r["bots"][g.current]


def test_label_values_every_legal_action() -> None:
    rec = next(iter(draw_positions(3, "test", 1)))
    out = label_position(rec, BasePolicy(3), TINY)
    lab = out["label"]
    assert lab["actions"] == list(Game.from_dict(rec["state"]).legal_actions())
    assert len(lab["value"]) == len(lab["se"]) == len(lab["gap_se"]) == len(lab["actions"])
    assert lab["rollouts"] == 2 and max(lab["rollouts_per_action"]) == (4 if len(lab["actions"]) > 1 else 2)


def test_save_load_round_trip_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    assert label_file(2, "test", 2, out, TINY, progress=False) == 2
    assert label_file(2, "test", 3, out, TINY, progress=False) == 1  # the first two are kept
    recs = load_positions(out)
    assert [r["id"] for r in recs] == [r["id"] for r in draw_positions(2, "test", 3)]
    gz = tmp_path / "p.jsonl.gz"
    assert save_positions(recs, gz) == 3
    assert load_positions(gz) == recs
    assert load_positions(gz, players=3) == [] and len(load_positions(gz, part="test")) == 3
    p = precision(recs)
    assert p["positions"] == 3 and 0 <= p["share_separated_2se"] <= 1


def test_bad_files_and_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(ValueError, match="line 1"):
        load_positions(bad)
    bad.write_text(json.dumps({"id": 1}) + "\n")
    with pytest.raises(ValueError, match="'state' and 'label'"):
        load_positions(bad)
    with pytest.raises(FileNotFoundError):
        load_positions(tmp_path / "none.jsonl")
    with pytest.raises(ValueError, match="part"):
        next(draw_positions(2, "train", 1))
    with pytest.raises(SystemExit):
        main(["info", str(tmp_path / "none.jsonl")])
    assert "no positions file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["label", "--count", "1", "--rollouts", "0", "--out", str(tmp_path / "x.jsonl")])
    assert "--rollouts must be at least 1, not 0" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


def test_three_and_four_players_label_with_twice_the_rollouts() -> None:
    assert label_settings(2) == LABEL
    for players in (3, 4):
        more = label_settings(players)
        assert (more["rollouts"], more["extra"]) == (2 * LABEL["rollouts"], 2 * LABEL["extra"])
        assert more["focus"] == LABEL["focus"] and more["policy"] == LABEL["policy"]


def test_the_shipped_set_is_whole_and_every_label_matches_its_position() -> None:
    records = load_positions()  # the file shipped with the package
    assert len({r["id"] for r in records}) == len(records)
    count = {(p, part): 0 for p in (1, 2, 3, 4) for part in ("test", "selection")}
    for r in records:
        count[(r["players"], r["part"])] += 1
        game = Game.from_dict(r["state"])
        assert game.num_players == r["players"]
        assert r["phase"] == game.phase_name
        label = r["label"]
        assert sorted(label["actions"]) == sorted(game.legal_actions()), r["id"]
        n = len(label["actions"])
        for key in ("value", "se", "raw", "raw_se", "gap_se", "rollouts_per_action"):
            assert len(label[key]) == n, (r["id"], key)
        assert min(label["se"]) >= 0 and min(label["rollouts_per_action"]) >= label["rollouts"]
        settings = label_settings(r["players"])
        assert all(label[k] == settings[k] for k in ("rollouts", "extra", "focus", "policy")), r["id"]
    assert count[(2, "test")] + count[(2, "selection")] >= 2000
    assert count[(2, "test")] >= 1500 and count[(2, "selection")] >= 500
    assert count[(3, "test")] >= 500 and count[(4, "test")] >= 500
    assert count[(3, "selection")] >= 100 and count[(4, "selection")] >= 100
    assert count[(1, "test")] >= 1000 and count[(1, "selection")] >= 300


def test_solo_positions_carry_their_exact_values() -> None:
    from shelfie_env.solo.table import shipped_table
    from shelfie_env.solo.turn import SoloTurn

    records = load_positions(None, players=1, part="test")
    assert {r["phase"] for r in records} == {"reroll", "circle", "cross"}
    for r in records[:60]:
        label = r["label"]
        assert label["policy"] == "exact" and max(label["se"]) == 0
        values = SoloTurn(shipped_table(), Game.from_dict(r["state"])).action_values()
        assert label["value"] == pytest.approx([values[a] for a in label["actions"]], abs=1e-9)
