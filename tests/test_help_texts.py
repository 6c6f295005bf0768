"""Every ``shelfie`` help screen reads as written: no doubled percent signs from argparse's %-escaping."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from shelfie_env import cli


def _rendered(parser: argparse.ArgumentParser, path: str) -> dict[str, str]:
    """``path`` -> the help text of ``parser`` and of each of its subcommands, nested ones included."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        parser.print_help()
    texts = {path: out.getvalue()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                texts.update(_rendered(sub, f"{path} {name}"))
    return texts


def _subcommand(name: str) -> argparse.ArgumentParser:
    parser = cli.build_parser(name)  # imports only ``name``'s module: its options are rendered too
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[name]


@pytest.mark.parametrize("command", sorted(cli.LAZY_COMMANDS))
def test_no_help_screen_shows_a_doubled_percent_sign(command: str) -> None:
    for path, text in _rendered(_subcommand(command), f"shelfie {command}").items():
        assert "%%" not in text, f"{path} --help: {[line for line in text.splitlines() if '%%' in line]}"


def test_the_top_level_and_rate_help_say_95_percent_once() -> None:
    top = _rendered(cli.build_parser(), "shelfie")
    assert all("%%" not in text for text in top.values())
    assert "rating and 95 % interval" in top["shelfie"]
    assert "rating and 95 % interval" in _rendered(_subcommand("rate"), "shelfie rate")["shelfie rate"]
