"""A bad value of a ``shelfie serve`` / ``train`` / ``train-td`` option is reported with the option's name."""

from __future__ import annotations

import pytest

from shelfie_env.cli import main


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--port", "70000", "must be 0..65535"),
        ("--port", "x", "expected an integer, got 'x'"),
        ("--request-timeout", "0", "must be > 0"),
        ("--keep-alive", "nan", "expected a finite number"),
        ("--limit-concurrency", "0", "must be >= 1"),
        ("--games-per-minute", "-1", "must be >= 0"),
        ("--hints-per-minute", "many", "expected a number"),
        ("--expire-days", "-2", "must be >= 0"),
        ("--keep-finished-days", "inf", "expected a finite number"),
        ("--request-threads", "0", "must be >= 1"),
        ("--bot-workers", "-1", "must be >= 1"),
        ("--bot-processes", "-1", "must be >= 0"),
        ("--bot-table-pace", "-0.5", "must be >= 0"),
    ],
)
def test_serve_names_the_option_of_a_bad_value(option, value, words, capsys):
    with pytest.raises(SystemExit) as info:
        main(["serve", option, value, "--no-browser"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: {words}" in err, err


@pytest.mark.parametrize("command, option", [("train", "--learning-rate"), ("train", "--gamma"), ("train-td", "--lam")])
def test_a_float_option_that_is_not_finite_is_named(command, option, tmp_path, capsys):
    assert main([command, option, "nan", "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"{option} must be a finite number, got nan" in err, err
