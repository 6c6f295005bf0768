"""Bots: anything with ``act(state: dict) -> int`` (state dict in, legal action out).

``make(name, **kwargs)`` builds a registered bot; ``register(name, factory)``
adds one. Bots may also offer ``act_game(game)`` taking a live
:class:`~shelfie_env.game.engine.Game` (a fast path the envs use when present).

One import runs up, from :mod:`.openspiel_mcts` to :mod:`shelfie_env.openspiel`: the
``openspiel-mcts`` bot is OpenSpiel's MCTS on the ``python_shelfie`` game (the ``openspiel``
extra), imported only when such a bot is built, so the registry and its table sizes stay
readable without the extra.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from shelfie_env.clip import one_line
from shelfie_env.game.engine import Game


@runtime_checkable
class Bot(Protocol):
    """A player: returns a legal action id for ``state["current_player"]``."""

    def act(self, state: dict[str, Any]) -> int: ...


_BUILTIN: dict[str, str] = {
    "random": "shelfie_env.bots.random_bot:RandomBot",
    "greedy": "shelfie_env.bots.greedy:GreedyBot",
    "planner": "shelfie_env.bots.planner:PlannerBot",
    "ppo": "shelfie_env.bots.learned:make_ppo",
    "ppo-flat": "shelfie_env.bots.learned.bot:make_ppo_flat",
    "td": "shelfie_env.bots.learned.value:make_td",
    "openspiel-mcts": "shelfie_env.bots.openspiel_mcts:make_mcts",  # needs the openspiel extra
    "greedy-br": "shelfie_env.bots.bracket.best_response:make_greedy_br",
    "clairvoyant": "shelfie_env.bots.bracket.clairvoyant:make_clairvoyant",
    "rollout": "shelfie_env.bots.rollout:make_rollout",
    "solo-optimal": "shelfie_env.solo.bot:make_solo_optimal",  # plays from the solo table (one seat)
}
"""The bots that ship, by name -> ``module:factory``, imported on first use."""

_REGISTRY: dict[str, Callable[..., Bot]] = {}


def register(name: str, factory: Callable[..., Bot]) -> None:
    """Register ``factory`` under ``name`` for :func:`make` (it replaces a bot of that name)."""
    _REGISTRY[name] = factory


LEVEL_COUNT = 6
"""The ladder's levels ``level-1`` … ``level-6`` (:mod:`.levels`), bots like the others."""
_LEVEL_NAMES = [f"level-{n}" for n in range(1, LEVEL_COUNT + 1)]


def available() -> list[str]:
    """Names :func:`make` accepts."""
    return sorted(set(_BUILTIN) | set(_REGISTRY)) + [n for n in _LEVEL_NAMES if n not in _REGISTRY]


def factory(name: str) -> Callable[..., Bot]:
    """The factory :func:`make` calls for ``name``; ``ValueError`` lists the names there are."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name.startswith("level-"):
        from shelfie_env.bots.levels import find_level, level_factory, level_names

        if name not in _LEVEL_NAMES:
            raise ValueError(f"unknown level {name!r}; the levels are {level_names()}")
        return level_factory(find_level(name))
    target = _BUILTIN.get(name)
    if target is None:
        raise ValueError(f"unknown bot {name!r}; available: {', '.join(available())}")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def table_sizes(name: str) -> tuple[int, ...]:
    """The numbers of players bot ``name`` can play (its factory's ``table_sizes()``; else 1-4)."""
    sizes = getattr(factory(name), "table_sizes", None)
    return tuple(sorted(sizes())) if callable(sizes) else (1, 2, 3, 4)


def needs_tape(name: str) -> bool:
    """Whether bot ``name`` reads the dice ahead and so plays only games dealt from a dice tape
    (``clairvoyant``: an analysis bot for the arena, never a table's opponent)."""
    return bool(getattr(factory(name), "needs_tape", False))


def table_bots() -> list[str]:
    """Names that can sit at a table people play at (``shelfie play``, the web table): every bot
    but those that read the dice ahead."""
    return [name for name in available() if not needs_tape(name)]


def check_name(name: str, *, tape: bool = False) -> None:
    """``ValueError`` listing the bots there are, when ``name`` is not one that may sit.

    ``tape``: the game is dealt from a dice tape (the arena), so bots that read the dice ahead may
    sit; otherwise they are refused and the list names only :func:`table_bots`.
    """
    if name.startswith("level-") and name not in _LEVEL_NAMES:
        factory(name)  # raises the message that lists the levels
    names = available() if tape else table_bots()
    if name not in available():
        where = "available" if tape else "bots for a table"
        raise ValueError(f"unknown bot {name!r}; {where}: {', '.join(names)}")
    if not tape and needs_tape(name):
        raise ValueError(
            f"{name!r} reads the dice ahead and plays only arena games on common dice (shelfie arena); "
            f"bots for a table: {', '.join(names)}"
        )


def check_table(name: str, num_players: int, *, tape: bool = False) -> None:
    """``ValueError`` when bot ``name`` cannot play a ``num_players`` table, naming the bots that can
    (``tape`` as in :func:`check_name`)."""
    check_name(name, tape=tape)
    names = available() if tape else table_bots()
    sizes = table_sizes(name)
    if num_players in sizes:
        return
    fit = [b for b in names if num_players in table_sizes(b)]
    plays = f"{sizes[-1]}-player" if sizes else "no"
    if len(sizes) > 1:
        plays = ", ".join(f"{n}-" for n in sizes[:-1]) + f" and {plays}"
    raise ValueError(
        f"{name!r} plays {plays} games, not {num_players}-player ones; "
        f"bots for {num_players} players: {', '.join(fit)}"
    )


def make(name: str, **kwargs: Any) -> Bot:
    """Build the bot registered as ``name`` (e.g. ``"random"``, ``"greedy"``)."""
    return factory(name)(**kwargs)


def act_on_game(bot: Bot, game: Game) -> int:
    """Ask ``bot`` for a move in a live game, through its fast path when it has one."""
    fast = getattr(bot, "act_game", None)
    value = fast(game) if fast is not None else bot.act(game.to_dict())
    return action_id(value, getattr(bot, "name", type(bot).__name__))


def action_id(value: Any, who: str) -> int:
    """``value`` (a move ``who`` returned) as an int; ``ValueError`` naming ``who`` and the value when it is
    not a number."""
    try:
        return int(value)
    except (TypeError, ValueError):
        shown = one_line(repr(value), 60)
        raise ValueError(f"{who} returned {shown}, not an action id (0-119)") from None


__all__ = [
    "Bot",
    "act_on_game",
    "action_id",
    "available",
    "check_name",
    "check_table",
    "factory",
    "make",
    "needs_tape",
    "register",
    "table_bots",
    "table_sizes",
]
