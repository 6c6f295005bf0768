"""Rollout labels of solo positions held against their exact values."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.arena.analysis.positions import draw_positions, exact_label
from shelfie_env.arena.analysis.solo_rollouts import compare, format_comparison, rollout_label
from shelfie_env.bots import make


def test_a_rollout_label_values_every_action_on_common_dice() -> None:
    rec = next(iter(draw_positions(1, "test", 1)))
    label = rollout_label(rec, make("greedy"), rollouts=3, extra=2, focus=1)
    n = len(label["actions"])
    assert n >= 2 and len(label["value"]) == n and len(label["se"]) == n
    assert sorted(label["rollouts_per_action"]) == [3] * (n - 1) + [5]
    assert all(0 <= v <= 190 for v in label["value"])
    again = rollout_label(rec, make("greedy"), rollouts=3, extra=2, focus=1)
    assert again["value"] == label["value"]  # the same dice tapes: the same label


def test_exact_labels_compared_with_themselves_show_no_bias() -> None:
    recs = [exact_label(r) for r in draw_positions(1, "test", 6)]
    c = compare(recs, bots=["greedy"])
    assert c["positions"] == 6 and c["bias"] == 0 and c["rmse"] == 0 and c["centered_rmse"] == 0
    assert c["best_agrees"] == 1.0 and c["labels_best_loses"] == 0
    g = c["bots"]["greedy"]
    assert g["rollout_error_rate"] == pytest.approx(g["exact_error_rate"])
    shifted = [{**r, "label": {**r["label"], "value": list(np.array(r["label"]["value"]) - 5.0)}} for r in recs]
    c = compare(shifted)
    assert c["bias"] == pytest.approx(-5.0) and c["centered_rmse"] == pytest.approx(0, abs=1e-9)
    assert "bias -5.000 points" in format_comparison(c)
