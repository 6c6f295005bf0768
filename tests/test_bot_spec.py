"""Every bot-spec option error names the key, the value and the type the option takes."""

from __future__ import annotations

import pytest

from shelfie_env import bots
from shelfie_env.bots import spec
from shelfie_env.bots.spec import build_bot, option_types, parse_spec, register_spec


@pytest.mark.parametrize(
    "spec, words",
    [
        ("planner:threat=x", ["threat", "'x'", "a number"]),
        ("planner:deep=2.5", ["deep", "'2.5'", "an integer"]),
        ("ppo:deterministic=maybe", ["deterministic", "'maybe'", "true or false"]),
        ("ppo:seed=one", ["seed", "'one'", "an integer"]),
        ("random:seed=1.5", ["seed", "'1.5'", "an integer"]),
        ("greedy#2:seed=x", ["seed", "'x'", "an integer"]),
    ],
)
def test_a_badly_typed_option_names_key_value_and_type(spec, words):
    with pytest.raises(ValueError) as info:
        parse_spec(spec)
    message = str(info.value)
    assert spec in message
    for word in words:
        assert word in message


@pytest.mark.parametrize("spec, key", [("planner:thret=1", "thret"), ("greedy:depth=2", "depth"), ("td:seed=1", "seed")])
def test_an_option_the_bot_does_not_take_is_named_with_the_ones_it_does(spec, key):
    name = spec.partition(":")[0]
    with pytest.raises(ValueError, match=f"{name} has no option '{key}'") as info:
        build_bot(spec)
    for known in option_types(name) or {}:
        assert known in str(info.value)


def test_values_are_read_as_the_type_each_option_takes():
    assert parse_spec("planner:threat=1,deep=2") == ("planner", {"threat": 1.0, "deep": 2})
    assert isinstance(parse_spec("planner:threat=1")[1]["threat"], float)
    assert parse_spec("ppo:path=007,deterministic=FALSE,seed=none") == (
        "ppo",
        {"path": "007", "deterministic": False, "seed": None},
    )
    assert parse_spec("random#3:seed=4") == ("random", {"seed": 4})


def test_an_unknown_bot_keeps_its_options_for_the_callers_message():
    assert parse_spec("foo:x=1,y=true") == ("foo", {"x": 1, "y": True})
    with pytest.raises(ValueError, match="unknown bot 'foo'"):
        build_bot("foo")


def test_a_registered_spec_checks_options_like_the_bot_it_builds_on():
    register_spec("spec_test_planner", "planner:threat=0.5")
    try:
        assert parse_spec("spec_test_planner:threat=0.7")[1] == {"threat": 0.7}
        with pytest.raises(ValueError, match="option threat must be a number, got 'x'"):
            parse_spec("spec_test_planner:threat=x")
    finally:
        bots._REGISTRY.pop("spec_test_planner", None)
        spec._SPECS.pop("spec_test_planner", None)
