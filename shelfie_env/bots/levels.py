"""The ladder's levels: ``level-1`` (beginner) … ``level-6`` (master), at two, three and four players.

Every level plays the shipped ``td`` network of its table size (the after-state values and the
planner's exact search over the dice). The top level plays its best action; each level below
errs on purpose, by one of two rules, and never plays an action the network values more than
``cap`` below its best:

* **aiming at a gap** (two and four players): the action whose value lies nearest ``target``
  below the best, with Gaussian noise of sd ``sigma`` on that distance, so nearly every decision
  gives up a little (about ``target`` in the network's eyes) and none gives up much;
* **noise on the values** (three players): Gaussian noise of sd ``sigma`` on every action's value,
  and the best noisy value is played.

Both make many small errors and no blunder the network can see, where an ε-mix of a strong bot
and random moves makes rare huge ones instead. **One fixed policy**: the noise is a function of
the position and the level (a hash of the state dict), so the same position always gets the same
move, at every replay and on every machine.

The parameters of each table size were chosen on the ``selection`` positions and deals
(docs/levels.md has the error rates and ratings measured on the ``test`` deals and positions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from shelfie_env.game.digest import state_digest
from shelfie_env.game.engine import Game

SIGMA = 0.02
"""Sd of every level's noise on the distance to its target (rank reward)."""
CAP = 0.15
"""Largest gap below its best value any level plays (rank reward)."""


@dataclass(frozen=True)
class Level:
    """One rung of the ladder: its number, its name and how it errs (module doc)."""

    number: int
    name: str
    target: float
    """The gap below its best value the level aims at (rank reward); 0: noise on the values instead
    (or, with ``sigma`` 0, its best action)."""
    sigma: float = SIGMA
    """Sd of the Gaussian noise, on the distance to the target or on every value (rank reward)."""
    cap: float = CAP
    """Largest gap below its best value the level ever plays (rank reward)."""
    tables: tuple[tuple[int, float, float, float], ...] = ()
    """``(players, target, sigma, cap)`` for a table size whose ladder plays otherwise than the default."""

    @property
    def spec(self) -> str:
        return f"level-{self.number}"

    @property
    def errs(self) -> bool:
        """False for a level that plays the network's best action (no target, no noise)."""
        return self.target > 0 or self.sigma > 0

    def at(self, num_players: int | None) -> Level:
        """The level as it plays at a table of ``num_players`` (its parameters there; the same hash)."""
        for players, target, sigma, cap in self.tables:
            if players == num_players:
                return replace(self, target=target, sigma=sigma, cap=cap, tables=())
        return self

    def describe(self, num_players: int | None = None) -> str:
        """What the level plays (at ``num_players``), in a few words."""
        lv = self.at(num_players)
        if not lv.errs:
            return "td"
        if lv.target > 0:
            return f"td, aims {lv.target:g} below its best (sd {lv.sigma:g}), within {lv.cap:g}"
        return f"td, noise sd {lv.sigma:g}, within {lv.cap:g} of its best"


def _tables(four: float, three_sigma: float, three_cap: float) -> tuple[tuple[int, float, float, float], ...]:
    """``Level.tables``: aim at ``four`` at four players; noise sd ``three_sigma`` on the values within
    ``three_cap`` at three."""
    return ((3, 0.0, three_sigma, three_cap), (4, four, SIGMA, CAP))


LEVELS: tuple[Level, ...] = (
    Level(1, "beginner", 0.09, tables=_tables(0.11, 1.0, 0.25)),
    Level(2, "casual", 0.07, tables=_tables(0.08, 0.4, 0.2)),
    Level(3, "intermediate", 0.05, tables=_tables(0.05, 0.3, 0.13)),
    Level(4, "advanced", 0.03, tables=_tables(0.03, 0.08, 0.12)),
    Level(5, "expert", 0.015, tables=_tables(0.015, 0.04, 0.08)),
    Level(6, "master", 0.0, sigma=0.0, cap=0.0),
)
"""The ladder, weakest first; every table size (2, 3 and 4 players) has all of it. At two and four
players the levels aim at a gap (each table its own targets); at three they play noise on the values."""

TABLE_SIZES = (2, 3, 4)
"""Table sizes with a ladder (each has its own shipped ``td`` network)."""

_SPEC = re.compile(r"^level-(.+)$")
_NORMAL = NormalDist()


def level_names() -> str:
    """``level-1 (beginner), …``: the levels there are, for messages."""
    return ", ".join(f"{lv.spec} ({lv.name})" for lv in LEVELS)


def find_level(text: str | int) -> Level:
    """The level named ``text``: ``level-3``, ``3`` or ``intermediate``; ``ValueError`` lists the levels."""
    key = str(text).strip().lower()
    found = _SPEC.match(key)
    key = found.group(1) if found else key
    for lv in LEVELS:
        if key in (str(lv.number), lv.name):
            return lv
    raise ValueError(f"no level {str(text)!r}; the levels are {level_names()}")


def check_players(num_players: int) -> None:
    """``ValueError`` unless the ladder has a table of ``num_players``."""
    if num_players not in TABLE_SIZES:
        sizes = ", ".join(map(str, TABLE_SIZES))
        raise ValueError(f"the ladder has tables of {sizes} players, not {num_players}")


def noise(state: dict[str, Any], level: Level) -> np.ndarray:
    """The level's noise of one position: a standard normal per action id (120), from a hash of the
    state dict and the level (SHAKE-256 bytes through the normal quantile: the same on every run,
    machine and numpy version)."""
    raw = np.frombuffer(state_digest(state, level.spec, 8 * 120), dtype="<u8")
    uniform = (raw.astype(np.float64) + 0.5) / 2.0**64
    return np.array([_NORMAL.inv_cdf(u) for u in np.clip(uniform, 1e-15, 1 - 1e-15)])


def noisy_choice(values: dict[int, float], z: np.ndarray, level: Level) -> int:
    """The level's action among those valued within ``cap`` of the best: the one whose gap below the
    best is nearest ``target`` (the distance less ``sigma * z``), or with no target the highest
    ``value + sigma * z``."""
    actions = np.fromiter(values, dtype=np.int64)
    v = np.fromiter(values.values(), dtype=np.float64)
    gap = v.max() - v
    score = -np.abs(gap - level.target) if level.target > 0 else v
    scored = np.where(gap <= level.cap, score + level.sigma * z[actions], -np.inf)
    return int(actions[int(np.argmax(scored))])


class LevelBot:
    """``level-N``: the shipped ``td`` network of the table, with the level's noise (module doc)."""

    def __init__(self, level: Level, num_players: int | None = None) -> None:
        if num_players is not None:
            check_players(num_players)
        self.level = level
        self.name = level.spec
        self.num_players = num_players
        self._td: dict[int, Any] = {}

    def base(self, num_players: int) -> Any:
        """The shipped ``td`` bot of ``num_players``."""
        bot = self._td.get(num_players)
        if bot is None:
            from shelfie_env.bots.learned.value import make_td

            check_players(num_players)
            bot = self._td[num_players] = make_td(num_players=num_players)
        return bot

    def act_game(self, game: Game) -> int:
        if self.num_players is not None and game.num_players != self.num_players:
            raise ValueError(
                f"{self.name} was built for {self.num_players}-player games, the game has {game.num_players}"
            )
        if game.over:
            raise ValueError("no legal action: the game is over")
        td = self.base(game.num_players)
        level = self.level.at(game.num_players)
        if not level.errs:
            return int(td.act_game(game))
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        from shelfie_env.bots.planner.search import action_values

        values = action_values(game, ctx=td.context(game))
        return noisy_choice(values, noise(game.to_dict(), level), level)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def make_level(name: str, num_players: int | None = None) -> LevelBot:
    """The bot of level ``name`` (``level-3``, ``3`` or ``intermediate``)."""
    return LevelBot(find_level(name), num_players)


def level_factory(level: Level) -> Any:
    """``bots.make("level-N", num_players=None)``."""

    def build(num_players: int | None = None) -> LevelBot:
        return LevelBot(level, num_players)

    build.__name__ = f"make_{level.spec.replace('-', '_')}"
    build.__doc__ = f"{level.spec} ({level.name}): {level.describe()}."
    build.table_sizes = lambda: TABLE_SIZES  # type: ignore[attr-defined]
    return build


__all__ = [
    "LEVELS",
    "TABLE_SIZES",
    "Level",
    "LevelBot",
    "check_players",
    "find_level",
    "level_factory",
    "level_names",
    "make_level",
    "noise",
    "noisy_choice",
]
