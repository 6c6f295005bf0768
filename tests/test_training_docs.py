"""The default run's figures in docs/training.md are the recorded run's, and the default run still is that run.

``docs/results/train_default.json`` holds what ``shelfie train`` (no flags) printed and evaluated on the
development machine; the docs' table must quote it, and the first iteration of the default run today must
repeat the recorded one (a change to the default recipe shows here, and the docs are measured again).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RECORD = json.loads((ROOT / "docs/results/train_default.json").read_text(encoding="utf-8"))
DOC = (ROOT / "docs/training.md").read_text(encoding="utf-8")


def _table_rows(header: str) -> list[list[str]]:
    lines = DOC[DOC.index(header) :].splitlines()
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[:3]]


def test_the_docs_table_quotes_the_recorded_evaluations() -> None:
    head, _, rates = _table_rows("| learner steps | ")
    steps = [int(re.sub(r"\D", "", c)) for c in head[1:]]
    shown = [float(c.rstrip(" %")) for c in rates[1:]]
    evals = RECORD["evaluations"]
    assert steps == [e["steps"] for e in evals]
    assert shown == [round(100 * e["win_rate_vs_greedy"], 1) for e in evals]


def test_the_docs_quote_the_recorded_test_deal_result() -> None:
    test = RECORD["test_deals"]
    text = " ".join(DOC.split())
    assert f"won {100 * test['win_rate']:.1f} %" in text
    assert f"{test['wins']:,} wins, {test['ties']} ties, {test['losses']:,} losses" in text


@pytest.mark.slow
def test_the_default_run_repeats_its_recorded_first_iteration(tmp_path: Path) -> None:
    from shelfie_env.train.ppo_afterstate import PPOAfterstateConfig, PPOAfterstateTrainer

    cfg = PPOAfterstateConfig(run_dir=str(tmp_path / "run"), eval_games=0)  # the default run, not evaluated
    trainer = PPOAfterstateTrainer(cfg)
    trainer.run_dir.mkdir(parents=True)
    try:
        rec = trainer.iterate(log=lambda *_: None)
    finally:
        if trainer.source is not None:
            trainer.source.close(wait=False)  # the second iteration's games are not needed
    want = RECORD["first_iteration"]
    assert rec["steps"] == want["steps"] and rec["games"] == want["games"]
    for key in ("beta", "vf", "entropy", "clipfrac", "train_win_vs_greedy"):
        assert rec[key] == pytest.approx(want[key], rel=0.02, abs=1e-3), key
