"""Line editing at the ``shelfie play`` prompt: history in a file and Tab completion (``readline``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from shelfie_env.game.actions import (
    SYMBOL_PLURALS,
    SYMBOLS,
)

COMPLETIONS_FIRST = (
    "reroll",
    "stop",
    "keep",
    "circle",
    "end",
    "cross",
    "hint",
    "board",
    "last",
    "moves",
    "help",
    "quit",
)
COMPLETIONS_LATER = SYMBOLS + SYMBOL_PLURALS + ("joker", "all")


def history_path() -> Path | None:
    """Where typed commands are kept between games: ``$SHELFIE_HISTORY`` (empty: nowhere),
    else ``$XDG_STATE_HOME/shelfie/history`` (``~/.local/state/shelfie/history``)."""
    env = os.environ.get("SHELFIE_HISTORY")
    if env is not None:
        return Path(env).expanduser() if env else None
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "shelfie" / "history"


def complete_command(text: str, state: int, line: str) -> str | None:
    """The ``state``-th completion of the word ``text`` in the typed ``line`` (readline's protocol)."""
    first = not line[: len(line) - len(text)].strip()
    words = COMPLETIONS_FIRST if first else COMPLETIONS_LATER
    matches = [w + " " for w in words if w.startswith(text.lower())]
    return matches[state] if state < len(matches) else None


def line_editing() -> tuple[Callable[[str], str], Callable[[], None]] | None:
    """``(read, save)`` for interactive play: ``input`` with line editing, history (kept in
    :func:`history_path`) and Tab completion, or ``None`` where ``readline`` is missing.

    Imported only here, so piped play never loads readline.
    """
    try:
        import readline
    except ImportError:  # e.g. Windows without pyreadline
        return None
    path = history_path()
    if path is not None:
        try:
            readline.read_history_file(path)
        except (OSError, ValueError):  # no history yet, or an unreadable file
            pass
    readline.set_history_length(1000)
    readline.set_completer(lambda text, state: complete_command(text, state, readline.get_line_buffer()))
    readline.set_completer_delims(" \t,")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")

    def save() -> None:
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)
        except OSError:  # a read-only home must not spoil the end of a game
            pass

    return input, save
