"""``scripts/decision_agreement.py``: how often two bots choose the same action."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def agreement():
    spec = importlib.util.spec_from_file_location(
        "decision_agreement", ROOT / "scripts" / "decision_agreement.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_bot_agrees_with_itself_on_every_decision(agreement):
    out = agreement.compare("greedy", "greedy", [10_000_000])
    assert out["games"] == 2 and out["all"]["decisions"] > 20
    assert all(out[p]["agree"] == out[p]["decisions"] for p in (*agreement.PHASES, "all"))


def test_different_bots_are_counted_by_phase(agreement):
    out = agreement.compare("random", "greedy", [10_000_000, 10_000_001])
    assert sum(out[p]["decisions"] for p in agreement.PHASES) == out["all"]["decisions"]
    assert out["all"]["agree"] < out["all"]["decisions"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [(["nosuchbot", "greedy"], "nosuchbot"), (["greedy", "greedy", "--count", "0"], "must be >= 1")],
)
def test_bad_arguments_are_usage_errors(agreement, argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        agreement.main(argv)
    assert exc.value.code == 2 and words in capsys.readouterr().err
