"""The agent a command line names (``shelfie rate``, ``shelfie errors``, ``shelfie bench rate --agent``).

The text is one of

* a bot spec (``greedy``, ``level-3``, ``td:path=my_td.npz``);
* ``module:attr`` — an importable object with ``act(state)``, a function of the state dict, or a class
  or factory called with no arguments that returns one of those (``my_pkg.agents:MyAgent``);
* a model file with its card beside it (``my_model.npz`` and ``my_model.json``): a TD(λ) card plays as
  ``td:path=...``, any other as ``ppo:path=...``.

:func:`load_agent` turns it into a bot spec (checked for the table size) or a bot object;
:func:`agent_name` is the name the agent's results go under.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any


class AgentError(ValueError):
    """An agent that cannot be loaded, or that does not fit the table; the message names the agent's text."""


def load_agent(text: str, players: int) -> Any:
    """The agent named by ``text`` (module doc) for a table of ``players``: a bot spec (a string) or an object
    with ``act(state)`` (a plain function comes wrapped, named :func:`agent_name`); :class:`AgentError` says
    why not."""
    module_name, colon, attr = text.partition(":")
    if colon and "=" in attr:  # a bot spec with options (``td:path=my_td.npz``)
        return _spec(text, players)
    path = Path(text)
    if path.suffix == ".npz":
        return _model_spec(path, players)
    if colon:  # a bot spec's options are key=value: module:attr has none
        if not module_name or not attr:
            raise AgentError(f"{text!r}: expected module:attr, e.g. my_pkg.agents:MyAgent")
        agent = _imported(module_name, attr)
        if callable(getattr(agent, "act", None)):
            return agent
        from shelfie_env.arena.evaluate import FunctionBot

        return FunctionBot(agent, agent_name(text))
    return _spec(text, players)


def agent_name(text: str) -> str:
    """The name results give the agent ``text``: ``module.attr`` for ``module:attr`` (a name no bot spec
    reads as options), the text itself for a bot spec or a model file."""
    module_name, colon, attr = text.partition(":")
    if colon and module_name and attr and "=" not in attr and Path(text).suffix != ".npz":
        return f"{module_name}.{attr}"
    return text


def _spec(text: str, players: int) -> str:
    from shelfie_env.bots import check_table
    from shelfie_env.bots.spec import parse_spec

    try:
        name, _ = parse_spec(text)
        check_table(name, players)
    except ValueError as exc:
        raise AgentError(f"{text!r}: {exc}") from None
    return text


def _model_spec(path: Path, players: int) -> str:
    from shelfie_env.bots.learned.card import load_card

    if not path.is_file():
        raise AgentError(f"{path}: no such model file")
    try:
        card = load_card(path, players)
    except Exception as exc:  # a missing, unreadable or mismatched card says what is wrong
        raise AgentError(f"{path}: {exc}") from None
    kind = "td" if str(card.get("algo", "")).lower().startswith("td") else "ppo"
    return f"{kind}:path={path}"


def _imported(module_name: str, attr: str) -> Any:
    where = f"{module_name}:{attr}"
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may fail in any way on import
        raise AgentError(f"{where}: cannot import {module_name} ({type(exc).__name__}: {exc})") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AgentError(f"{where}: {module_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if callable(getattr(obj, "act", None)) and not isinstance(obj, type):
        return obj
    if isinstance(obj, type) or _is_factory(obj):
        try:
            made = obj()
        except Exception as exc:
            raise AgentError(f"{where}: calling it failed ({type(exc).__name__}: {exc})") from None
        if callable(getattr(made, "act", None)) or callable(made):
            return made
        raise AgentError(f"{where}: it returned {type(made).__name__}, which has no act(state)")
    if callable(obj):
        return obj
    raise AgentError(f"{where}: a {type(obj).__name__} has no act(state) and is not a function")


def _is_factory(obj: Any) -> bool:
    """A function of no arguments (a factory), as opposed to a function of the state."""
    if not callable(obj):
        return False
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


__all__ = ["AgentError", "agent_name", "load_agent"]
