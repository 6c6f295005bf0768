"""The ``solo`` task's score: reproducible means on fixed deals, the shipped reference and its scale, bad input."""

from __future__ import annotations

import json

import pytest

from shelfie_env.arena.deals import deal_start
from shelfie_env.arena.protocol import play_game
from shelfie_env.arena.solo_score import (
    SoloScore,
    load_reference,
    main,
    normalized_solo,
    percent_of_optimum,
    solo_score,
)
from shelfie_env.bots import make
from shelfie_env.solo import optimum


def test_the_same_agent_on_the_same_deals_scores_the_same() -> None:
    a, b = solo_score("random", games=20), solo_score("random", games=20)
    assert a == b and a.scores == b.scores
    assert solo_score("random", games=20, deals="selection").scores != a.scores


def test_game_i_is_played_on_deal_i() -> None:
    s = solo_score("greedy", games=5, deals="selection")
    assert s.scores[:3] == solo_score("greedy", games=3, deals="selection").scores
    assert s.scores[2] == play_game([make("greedy")], deal_start("selection") + 2)[0]
    assert s.deals == "selection" and solo_score("greedy", games=2, deals=7).deals == "seed 7"


def test_a_function_agent_a_bot_object_and_a_spec_agree() -> None:
    greedy = make("greedy")
    spec = solo_score("greedy", games=20)
    assert solo_score(lambda state: greedy.act(state), games=20) == spec
    assert solo_score(make("greedy"), games=20) == spec


def test_greedy_beats_random() -> None:
    greedy, random = solo_score("greedy", games=20), solo_score("random", games=20)
    assert greedy.ci95[0] > random.ci95[1]
    d = greedy.to_dict()
    assert set(d) == {"mean", "sd", "se", "ci95", "games", "deals"} and d["games"] == 20
    assert d["ci95"] == pytest.approx([d["mean"] - 1.96 * d["se"], d["mean"] + 1.96 * d["se"]])


def test_summary_of_given_scores() -> None:
    s = SoloScore.of([10, 20, 30], "test")
    assert (s.mean, s.sd, s.games) == (20.0, 10.0, 3)
    assert SoloScore.of([7], "test").ci95 == [7.0, 7.0]


def test_the_normalized_scale_runs_from_random_to_the_optimum() -> None:
    ref = load_reference()
    assert ref["deals"] == "test" and ref["games"] >= 500
    assert "random" in ref["bots"] and ref["best"] in ref["bots"]
    assert ref["best"] == max(ref["bots"], key=lambda k: ref["bots"][k]["mean"])
    assert "--reference" in ref["command"]
    low = ref["bots"]["random"]["mean"]
    assert normalized_solo(low) == 0.0
    assert normalized_solo(optimum()) == pytest.approx(100.0)
    assert normalized_solo((low + optimum()) / 2) == pytest.approx(50.0)
    assert percent_of_optimum(optimum() / 2) == pytest.approx(50.0)
    # every reference bot sits below the optimum, the perfect player on it within its interval
    for spec, b in ref["bots"].items():
        assert b["mean"] < optimum() or spec == "solo-optimal"
    lo, hi = ref["bots"]["solo-optimal"]["ci95"]
    assert lo <= optimum() <= hi
    load_reference()["bots"].clear()  # a copy: the next reader still gets the file's numbers
    assert normalized_solo(low) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"games": 0}, "games must be a positive integer"),
        ({"games": -3}, "games must be a positive integer"),
        ({"deals": "training"}, "deals must be"),
        ({"workers": 0}, "workers must be a positive integer"),
    ],
)
def test_bad_arguments_are_named(kwargs, words) -> None:
    with pytest.raises(ValueError, match=words):
        solo_score("greedy", **{"games": 4, **kwargs})


def test_an_illegal_action_and_a_bot_that_cannot_play_solo_are_named() -> None:
    with pytest.raises(ValueError, match=r"the agent 'agent' returned an illegal action .*: 119: "):
        solo_score(lambda state: 119, games=2)
    with pytest.raises(ValueError, match="returned None, not an action id"):
        solo_score(lambda state: None, games=2)
    with pytest.raises(ValueError, match="not 1-player ones"):
        solo_score("td", games=2)


def test_the_command_scores_an_agent_and_measures_a_reference(tmp_path, capsys) -> None:
    assert main(["greedy", "--games", "4"]) == 0
    assert json.loads(capsys.readouterr().out)["mean"] == solo_score("greedy", games=4).mean
    out = tmp_path / "ref.json"
    argv = ["--reference", "--bots", "random", "greedy", "--games", "4", "--out", str(out)]
    assert main(argv) == 0
    ref = json.loads(out.read_text())
    assert ref["best"] == "greedy" and set(ref["bots"]) == {"random", "greedy"}
    assert ref["bots"]["greedy"]["games"] == 4 and set(ref["bots"]["greedy"]) == {
        "mean",
        "ci95",
        "sd",
        "games",
    }
    assert ref["command"].startswith("python -m shelfie_env.arena.solo_score --reference")
    assert ref["optimum"] == pytest.approx(optimum(), abs=1e-6)
    assert normalized_solo(ref["bots"]["random"]["mean"], ref) == 0.0
    with pytest.raises(SystemExit):
        main(["greedy", "--reference"])
