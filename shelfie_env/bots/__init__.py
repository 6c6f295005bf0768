"""Bots: anything with ``act(state: dict) -> int`` (SPEC §6 state in, legal action out).

``make(name, **kwargs)`` builds a registered bot; ``register(name, factory)``
adds one. Bots may also offer ``act_game(game)`` taking a live
:class:`~shelfie_env.engine.Game` (a fast path the envs use when present).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

from ..engine import Game


@runtime_checkable
class Bot(Protocol):
    """A player: returns a legal action id for ``state["current_player"]``."""

    def act(self, state: dict[str, Any]) -> int: ...


_REGISTRY: dict[str, Callable[..., Bot]] = {}


def register(name: str, factory: Callable[..., Bot]) -> None:
    """Register ``factory`` under ``name`` for :func:`make`."""
    _REGISTRY[name] = factory


def available() -> list[str]:
    """Names :func:`make` accepts."""
    _load_builtin()
    return sorted(_REGISTRY)


def make(name: str, **kwargs: Any) -> Bot:
    """Build the bot registered as ``name`` (e.g. ``"random"``, ``"greedy"``)."""
    _load_builtin()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; available: {', '.join(sorted(_REGISTRY))}") from None
    return factory(**kwargs)


def act_on_game(bot: Bot, game: Game) -> int:
    """Ask ``bot`` for a move in a live game, through its fast path when it has one."""
    fast = getattr(bot, "act_game", None)
    if fast is not None:
        return int(fast(game))
    return int(bot.act(game.to_dict()))


_LOADED = False


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib

    for module in ("random_bot", "greedy", "planner", "ppo"):
        try:
            importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{module}":
                raise


__all__ = ["Bot", "act_on_game", "available", "make", "register"]
