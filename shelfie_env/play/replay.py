"""``shelfie replay FILE``: show a saved game (a replay JSON) move by move."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from shelfie_env.game.actions import (
    action_name,
)
from shelfie_env.game.engine import Game
from shelfie_env.game.errors import InvalidStateError
from shelfie_env.game.render import render_text
from shelfie_env.play.terminal import _fail, _use_color, final_report


# --------------------------------------------------------------------------- replay
def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``shelfie replay``."""
    parser.add_argument(
        "file", help='replay JSON: {"version": 1, "initial_state", "actions", "states"?, "final_state"}'
    )
    parser.add_argument("--no-color", action="store_true", help="plain text")


def run_replay(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Show a saved game: every stored state in order, with the logged actions between them."""
    out = sys.stdout if out is None else out
    try:
        data = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return _fail(f"cannot read replay {args.file}: {exc}")
    if not isinstance(data, dict):
        return _fail("a replay must be a JSON object")
    if data.get("version", 1) != 1:
        return _fail(f"unsupported replay version {data.get('version')!r} (this reader knows version 1)")
    color = _use_color(args, out)
    actions = data.get("actions") or []
    if not isinstance(actions, list):
        return _fail("'actions' must be a list")
    states = data.get("states")
    try:
        if isinstance(states, list) and states:
            frames = [Game.from_dict(s) for s in states]
            offset = 1 if len(frames) == len(actions) + 1 else 0
            for i, g in enumerate(frames):
                j = i - offset
                if 0 <= j < len(actions):
                    out.write(_replay_action_line(actions[j]) + "\n")
                out.write("\n" + render_text(g, None, color) + "\n\n")
        else:
            initial = data.get("initial_state")
            if initial is None:
                return _fail("a replay needs 'states' or 'initial_state'")
            out.write("Initial position:\n\n" + render_text(Game.from_dict(initial), None, color) + "\n\n")
            out.write("(this replay stores no intermediate states: the moves were)\n")
            for a in actions:
                out.write(_replay_action_line(a) + "\n")
            final = data.get("final_state")
            if final is not None:
                out.write("\nFinal position:\n\n" + render_text(Game.from_dict(final), None, color) + "\n")
                game = Game.from_dict(final)
                if game.over:
                    out.write("\n" + final_report(game) + "\n")
                return 0
        last = frames[-1]
        if last.over:
            out.write(final_report(last) + "\n")
    except (InvalidStateError, ValueError, TypeError) as exc:
        return _fail(f"bad replay {args.file}: {exc}")
    return 0


def _replay_action_line(entry: Any) -> str:
    if isinstance(entry, dict):
        seat = entry.get("seat")
        name = entry.get("name")
        if name is None and isinstance(entry.get("action"), int):
            name = action_name(entry["action"])
        who = f"player {seat + 1}" if isinstance(seat, int) else "?"
        return f"{who}: {name}"
    if isinstance(entry, int):
        return action_name(entry)
    return str(entry)
