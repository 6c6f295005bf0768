"""Luck: how much of a game's result the dice decided, and results corrected for it.

A **value function** fixed before the evaluation estimates, for the player on
turn, the rank reward they will finish with (docs/rules.md: (rivals beaten −
rivals ahead) / (n − 1)). It is asked one thing per turn: the value of the best
placement for each of the 462 final dice multisets (``V0``), from which the
dice recursion of the planner's search gives the value of every state of the
turn exactly over the dice:

* ``V1[m]`` / ``V2[m]``: dice ``m`` with one / two rerolls left (the best keep,
  keeping everything = stopping);
* ``E1[k]`` / ``E2[k]``: keep ``k`` before the last / the first reroll
  (``E = TRANSITION @ V``, exact over the thrown dice);
* before the first roll: ``E2[no dice kept]``.

At every **chance event** ``e`` (a turn's first roll, each reroll) the luck of
the player on turn ``a_e`` is ``L_e = value after the roll − expected value
before it`` (the exact average of the same values over the roll's outcomes).

A seat's **corrected result** is its raw rank reward minus the luck it got and
plus its share of the luck its rivals got::

    corrected_s = raw_s − Σ_{e: a_e = s} L_e + Σ_{e: a_e ≠ s} L_e / (n − 1)

The edge of moving first is counted the same way, as seat 0's luck
(:func:`first_seat_edge`: a constant that sums to zero over balanced seatings).

The rank reward is zero-sum, so a rival's good roll costs the other seats its
value between them (in two players exactly ``L_e``). Every term ``L_e`` has
mean zero given everything before the roll, whatever the players do and
whatever the value function (the expectation is exact under fair dice), so the
corrected result is an unbiased estimate of the seat's expected rank reward;
a good value function only makes it less noisy (Burch et al.'s AIVAT, here
with the chance terms only: the bots' own choices carry no correction).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from shelfie_env.bots.planner.dice import (
    FINAL_INDEX,
    KEEP_INDEX,
    TRANSITION,
    best_keep_value,
    counts_of,
    keep_index_of_reroll,
)
from shelfie_env.game.actions import STOP
from shelfie_env.game.engine import REROLL, ROLLS_PER_TURN, Game

FRESH = KEEP_INDEX[(0,) * 6]
"""Keep index of 'no dice kept' (the first roll of a turn)."""


class ValueFunction(Protocol):
    """What luck needs of a value function: a name, and ``V0`` of the player on turn."""

    name: str

    def placement_values(self, game: Game) -> np.ndarray:
        """``(462,)`` values of the best placement for each final dice multiset (``tables.MULTISETS``
        order), for the player on turn of ``game`` (a position of their reroll phase), in rank-reward units."""
        ...


@dataclass(frozen=True)
class TurnTables:
    """The values of every dice state of one turn (module doc)."""

    v: tuple[np.ndarray, np.ndarray, np.ndarray]
    """``V0, V1, V2``: ``(462,)`` values of dice with 0, 1, 2 rerolls left."""
    e: tuple[np.ndarray, np.ndarray]
    """``E1, E2``: ``(924,)`` expected values of each keep before the last / the first reroll."""
    fresh: float
    """Expected value before the turn's first roll: ``V2`` averaged over six fresh dice."""


_TABLES: dict[bytes, TurnTables] = {}
_TABLES_MAX = 512


def turn_tables(v0: np.ndarray) -> TurnTables:
    """Every state value of a turn from its placement values ``V0`` (exact over the dice)."""
    v0 = np.asarray(v0, dtype=np.float64)
    key = v0.tobytes()
    tables = _TABLES.get(key)
    if tables is None:
        e1 = TRANSITION @ v0
        v1 = best_keep_value(e1)
        e2 = TRANSITION @ v1
        v2 = best_keep_value(e2)
        tables = TurnTables((v0, v1, v2), (e1, e2), float(TRANSITION[FRESH] @ v2))
        if len(_TABLES) >= _TABLES_MAX:
            _TABLES.clear()
        _TABLES[key] = tables
    return tables


@dataclass(frozen=True)
class ChanceEvent:
    """One roll of a game and the luck it brought the player who rolled."""

    seat: int
    turn: int
    roll: int
    """0: the turn's first roll (six dice); 1, 2: the rerolls."""
    thrown: int
    """Dice thrown."""
    before: float
    """Expected value before the roll (exact over its outcomes)."""
    after: float
    """Value after the roll."""

    @property
    def luck(self) -> float:
        return self.after - self.before


class MixedValue:
    """Luck measured by several value functions at once: each event's luck is their weighted mean.

    Every component's luck has mean zero at every roll, so their weighted mean does too;
    where the components' errors differ, the mean removes more of the luck than either.
    """

    def __init__(self, components: Sequence[tuple[float, ValueFunction]]) -> None:
        total = sum(w for w, _ in components)
        if not components or total <= 0 or any(w < 0 for w, _ in components):
            raise ValueError(
                "a mixed value function needs components with non-negative weights summing above 0"
            )
        self.components = [(w / total, v) for w, v in components]
        self.name = "+".join(v.name for _, v in self.components)

    def placement_values(self, game: Game) -> np.ndarray:
        raise TypeError("a mixed value function has one table per component; LuckTracker reads them")


class LuckTracker:
    """Follows one game step by step and records its chance events (call :meth:`before` / :meth:`after`)."""

    def __init__(self, value: ValueFunction | MixedValue, game: Game) -> None:
        self.value = value
        self._parts = value.components if isinstance(value, MixedValue) else [(1.0, value)]
        self.num_players = game.num_players
        self.events: list[ChanceEvent] = []
        self._tables: list[tuple[float, TurnTables]] = []
        self._turn: tuple[int, int] | None = None
        self._pending: tuple[int, int, int] | None = None
        if not game.over:
            self._new_turn(game)

    def _mean(self, pick: Callable[[TurnTables], float]) -> float:
        return float(sum(w * pick(t) for w, t in self._tables))

    def _new_turn(self, game: Game) -> None:
        self._turn = (game.current, game.round)
        self._tables = [(w, turn_tables(v.placement_values(game))) for w, v in self._parts]
        m = FINAL_INDEX[counts_of(game.dice)]
        before = self._mean(lambda t: t.fresh)
        after = self._mean(lambda t: t.v[2][m])
        self.events.append(ChanceEvent(game.current, game.round, 0, 6, before, after))

    def before(self, game: Game, action: int) -> None:
        """Note ``action`` (about to be played in ``game``) if it throws dice."""
        if game.phase == REROLL and action != STOP:
            self._pending = (game.rolls_left, keep_index_of_reroll(game.dice, action), bin(action).count("1"))
        else:
            self._pending = None

    def after(self, game: Game) -> None:
        """Record the chance events of the step just played."""
        if self._pending is not None and self._tables:
            rolls_left, keep, thrown = self._pending
            self._pending = None
            m = FINAL_INDEX[counts_of(game.dice)]
            seat, turn = self._turn  # type: ignore[misc]
            before = self._mean(lambda t: t.e[rolls_left - 1][keep])
            after = self._mean(lambda t: t.v[rolls_left - 1][m])
            self.events.append(
                ChanceEvent(seat, turn, ROLLS_PER_TURN + 1 - rolls_left, thrown, before, after)
            )
        if not game.over and (game.current, game.round) != self._turn:
            self._new_turn(game)

    def own_luck(self) -> list[float]:
        """Each seat's total luck (its own rolls)."""
        return own_luck(self.events, self.num_players)


def own_luck(events: Sequence[ChanceEvent], num_players: int) -> list[float]:
    """Each seat's total luck: the sum over the rolls it made."""
    out = [0.0] * num_players
    for e in events:
        out[e.seat] += e.luck
    return out


def corrected_results(
    raw: Sequence[float], events: Sequence[ChanceEvent], first_seat_edge: float = 0.0
) -> list[float]:
    """Each seat's raw result minus its own luck plus its share of its rivals' (module doc).

    ``first_seat_edge`` (:func:`first_seat_edge`) is taken out the same way: seat 0 gives it
    up, the others share it.
    """
    n = len(raw)
    out = [float(r) for r in raw]
    own = own_luck(events, n)
    own[0] += first_seat_edge
    total = sum(own)
    for s in range(n):
        rivals = total - own[s]
        out[s] += -own[s] + (rivals / (n - 1) if n > 1 else 0.0)
    return out


def first_seat_edge(events: Sequence[ChanceEvent]) -> float:
    """The value function's value of moving first: seat 0's expected result before the game's first roll.

    A constant of the value function (every game starts from empty shelves). It is the
    seat's share of the game's luck, measured against 0, the average over the seats of
    the rank reward: over seatings that give each bot each seat equally often (the
    arena's rotations and duplicate matches) these terms sum to zero, so taking them out
    leaves every bot's mean result unchanged and only removes the seat's noise.
    """
    if not events or (events[0].seat, events[0].turn, events[0].roll) != (0, 0, 0):
        return 0.0
    return events[0].before
