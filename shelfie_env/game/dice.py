"""Dice sources: where a game's dice come from.

The engine draws every die from one dice source. Two kinds exist:

* a **stream** (the default): a ``numpy.random.Generator``; each roll takes the
  next numbers of the stream, so which faces a player sees depends on every
  roll made before it in the game;
* a **tape** (:class:`DiceTape`): common dice. The faces are a fixed function
  of ``(seed, seat, turn, roll, k)`` — the seat that throws, that seat's turn
  number (0 for its first turn, the same as the round), the roll within the
  turn (0 the first roll, 1 and 2 the rerolls) and the k-th die thrown in that
  roll. The same seat at the same turn and roll sees the same faces whatever
  any player did before, so two games on one seed differ only by the players'
  choices: the first roll of every turn (all six dice) is identical, and a
  reroll of ``m`` dice gets the tape's first ``m`` faces of that roll.

Each face of a tape is an independent fair die, as on a stream.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from shelfie_env.game.actions import NUM_DICE

MAX_SEATS = 4
ROLLS_PER_TURN = 3  # the first roll and two rerolls
_BLOCK = 32  # turns per block of the tape; a seat never gets more than 26 turns
_TAG = 0x5E1F  # keeps a tape's stream apart from a stream seeded with the same number


@runtime_checkable
class PositionalDice(Protocol):
    """A dice source that deals by position in the game (seat, turn, roll) rather than in sequence."""

    def throw(self, seat: int, turn: int, roll: int, count: int) -> list[int]: ...


class DiceTape:
    """Common dice: faces fixed by ``(seed, seat, turn, roll, k)`` (module doc).

    Stateless: reading the tape never advances it, so games, clones and
    searches that share one tape all see the same dice at the same position.
    """

    __slots__ = ("seed", "_blocks")

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"a dice tape's seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self._blocks: dict[int, np.ndarray] = {}

    def _block(self, b: int) -> np.ndarray:
        block = self._blocks.get(b)
        if block is None:
            rng = np.random.default_rng([_TAG, self.seed, b])
            block = rng.integers(0, 6, size=(MAX_SEATS, _BLOCK, ROLLS_PER_TURN, NUM_DICE), dtype=np.int8)
            block.setflags(write=False)
            self._blocks[b] = block
        return block

    def faces(self, seat: int, turn: int) -> np.ndarray:
        """The ``(3, 6)`` faces of ``seat``'s turn ``turn``: row ``r`` is roll ``r``, column ``k`` its k-th die."""
        if not 0 <= seat < MAX_SEATS:
            raise ValueError(f"seat must be 0..{MAX_SEATS - 1}, got {seat}")
        if turn < 0:
            raise ValueError(f"turn must be non-negative, got {turn}")
        return self._block(turn // _BLOCK)[seat, turn % _BLOCK]

    def throw(self, seat: int, turn: int, roll: int, count: int) -> list[int]:
        """The faces of the first ``count`` dice thrown in roll ``roll`` of ``seat``'s turn ``turn``."""
        if not 0 <= roll < ROLLS_PER_TURN:
            raise ValueError(f"roll must be 0..{ROLLS_PER_TURN - 1}, got {roll}")
        if not 0 <= count <= NUM_DICE:
            raise ValueError(f"count must be 0..{NUM_DICE}, got {count}")
        return self.faces(seat, turn)[roll, :count].tolist()

    def integers(self, low: int, high: int, size: int) -> Any:
        """Refuse sequential draws: a tape deals only by position (the engine calls :meth:`throw`)."""
        raise TypeError("a DiceTape deals by (seat, turn, roll); it is not a sequential random generator")

    def __repr__(self) -> str:
        return f"DiceTape(seed={self.seed})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DiceTape) and other.seed == self.seed

    def __hash__(self) -> int:
        return hash(("DiceTape", self.seed))


DICE_MODES = ("stream", "tape")
"""The dice modes an env or the arena accepts (``dice=...``)."""


def check_dice_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`DICE_MODES`, else a ``ValueError`` naming them."""
    if mode not in DICE_MODES:
        raise ValueError(f"dice must be one of {', '.join(map(repr, DICE_MODES))}, got {mode!r}")
    return mode


def dice_source(mode: str, seed: int | None) -> np.random.Generator | DiceTape:
    """A fresh dice source of ``mode`` for one game seeded ``seed`` (a tape with no seed draws one)."""
    check_dice_mode(mode)
    if mode == "tape":
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 2)
        return DiceTape(seed)
    return np.random.default_rng(seed)
