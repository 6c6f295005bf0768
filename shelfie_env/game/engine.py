"""The rules engine of My Shelfie: The Dice Game.

Pure Python (plus numpy's ``Generator`` for the dice): nothing here imports
gymnasium, pettingzoo or torch. A :class:`Game` is one mutable game; every
random number comes from the ``rng`` it was given, so a game is replayable.

Shelves are 25-bit ints: bit ``5*r + c`` is row ``r`` (symbol ``r``) and column
``c`` (the item that needs ``c + 1`` dice). Each player has a ``circled`` and a
``crossed`` mask; a cell in neither is free.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from shelfie_env.game.actions import (
    CIRCLE_BASE,
    CROSS_BASE,
    END_TURN,
    JOKER,
    NUM_ACTIONS,
    NUM_DICE,
    STOP,
    SYMBOL_PLURALS,
    SYMBOLS,
    action_name,
)
from shelfie_env.game.dice import DiceTape, PositionalDice
from shelfie_env.game.errors import IllegalActionError, InvalidStateError
from shelfie_env.game.scoring import COL_MASKS, DEFAULT_POINTS, FULL, ROW_MASKS, ScoreTable
from shelfie_env.game.tables import ALL_JOKER_IDS, CIRCLE_IDS, REROLL_IDS

REROLL, CIRCLE, CROSS, OVER = 0, 1, 2, 3
PHASES = ("reroll", "circle", "cross", "over")
PHASE_INDEX = {name: i for i, name in enumerate(PHASES)}
MAX_CIRCLES = 3
ROLLS_PER_TURN = 2  # rerolls after the first roll
MAX_PLAYERS = 4


def placed_shelves(
    circled: Sequence[int], crossed: Sequence[int], player: int, cells: int = 0, row: int | None = None
) -> tuple[list[int], list[int]]:
    """Every seat's (circled, crossed) shelves after ``player`` ends a turn that started from
    ``circled``/``crossed`` by circling ``cells`` or, with ``row``, crossing that row out: as
    :meth:`Game.step` leaves them, each row and column the circles complete crossing the rivals'
    open cells there."""
    circ, cross = list(circled), list(crossed)
    if row is not None:
        cross[player] |= ROW_MASKS[row] & ~circ[player]
        return circ, cross
    mine = circ[player] | cells
    circ[player] = mine
    lines = 0
    for m in ROW_MASKS + COL_MASKS:
        if mine & m == m and circled[player] & m != m:
            lines |= m
    if lines:
        for q in range(len(circ)):
            if q != player:
                cross[q] |= lines & ~circ[q]
    return circ, cross


class DiceSource(Protocol):
    """What the engine needs of a random generator (``numpy.random.Generator`` fits)."""

    def integers(self, low: int, high: int, size: int) -> Any: ...


def full_rows(filled: int) -> int:
    """Number of rows of a shelf with no free cell (``filled = circled | crossed``)."""
    return (
        (filled & 31 == 31)
        + (filled >> 5 & 31 == 31)
        + (filled >> 10 & 31 == 31)
        + (filled >> 15 & 31 == 31)
        + (filled >> 20 & 31 == 31)
    )


class Game:
    """One game: shelves of ``num_players`` players, the dice and the turn.

    Create with :meth:`new` (rolls the first dice) or :meth:`from_dict`.
    Advance with :meth:`step`; ask :meth:`legal_actions` / :meth:`legal_mask`.
    """

    __slots__ = (
        "num_players",
        "table",
        "circled",
        "crossed",
        "current",
        "phase",
        "dice",
        "spent",
        "counts",
        "rolls_left",
        "circles",
        "end_triggered",
        "round",
        "rng",
        "_throw",
        "_legal",
    )

    def __init__(
        self,
        num_players: int = 2,
        points: Sequence[Sequence[int]] | ScoreTable | None = None,
        rng: DiceSource | int | None = None,
    ) -> None:
        """An empty game *before* the first roll; prefer :meth:`new`."""
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
            raise ValueError(f"num_players must be an integer 1..4, got {num_players!r}")
        if not 1 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be 1..{MAX_PLAYERS}, got {num_players}")
        self.num_players = int(num_players)
        if isinstance(points, ScoreTable):
            self.table = points
        else:
            self.table = _score_table(DEFAULT_POINTS if points is None else points)
        self.rng: DiceSource = (
            rng if rng is not None and not isinstance(rng, (int, np.integer)) else np.random.default_rng(rng)
        )
        self._throw = _thrower(self.rng)
        self.circled = [0] * self.num_players
        self.crossed = [0] * self.num_players
        self.current = 0
        self.phase = REROLL
        self.dice = [0] * NUM_DICE
        self.spent = [False] * NUM_DICE
        self.counts = [0] * 6
        self.rolls_left = ROLLS_PER_TURN
        self.circles = 0
        self.end_triggered = False
        self.round = 0
        self._legal: tuple[int, ...] | None = None

    # ------------------------------------------------------------------ setup
    @classmethod
    def new(
        cls,
        num_players: int = 2,
        points: Sequence[Sequence[int]] | ScoreTable | None = None,
        rng: DiceSource | int | None = None,
    ) -> Game:
        """A fresh game with seat 0's first roll made."""
        game = cls(num_players, points, rng)
        game._start_turn()
        return game

    def clone(self, rng: DiceSource | None = None) -> Game:
        """An independent copy (sharing the rng unless another is given)."""
        g = Game.__new__(Game)
        g.num_players = self.num_players
        g.table = self.table
        g.circled = self.circled[:]
        g.crossed = self.crossed[:]
        g.current = self.current
        g.phase = self.phase
        g.dice = self.dice[:]
        g.spent = self.spent[:]
        g.counts = self.counts[:]
        g.rolls_left = self.rolls_left
        g.circles = self.circles
        g.end_triggered = self.end_triggered
        g.round = self.round
        if rng is None:
            g.rng, g._throw = self.rng, self._throw
        else:
            g.rng, g._throw = rng, _thrower(rng)
        g._legal = self._legal
        return g

    # -------------------------------------------------------------- queries
    @property
    def points(self) -> tuple[tuple[int, ...], ...]:
        return self.table.points

    @property
    def phase_name(self) -> str:
        return PHASES[self.phase]

    @property
    def over(self) -> bool:
        return self.phase == OVER

    def free(self, player: int) -> int:
        """Free-cell mask of ``player``."""
        return FULL & ~(self.circled[player] | self.crossed[player])

    def score(self, player: int) -> int:
        """Score of ``player`` as the scoring rule values the shelf now."""
        return self.table.score(self.circled[player])

    def scores(self) -> list[int]:
        score = self.table.score
        return [score(c) for c in self.circled]

    def cell(self, player: int, row: int, col: int) -> int:
        """0 free, 1 circled, 2 crossed."""
        bit = 1 << (5 * row + col)
        if self.circled[player] & bit:
            return 1
        if self.crossed[player] & bit:
            return 2
        return 0

    def board(self, player: int) -> list[list[int]]:
        """The 5x5 shelf of ``player`` (0 free, 1 circled, 2 crossed)."""
        return [[self.cell(player, r, c) for c in range(5)] for r in range(5)]

    def legal_actions(self) -> tuple[int, ...]:
        """Legal action ids of the player on turn (empty when the game is over)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def legal_mask(self) -> np.ndarray:
        """int8 mask of the 120 action ids for the player on turn."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[list(self.legal_actions())] = 1
        return mask

    def _circle_candidates(self) -> tuple[int, ...]:
        counts = self.counts
        free = FULL & ~(self.circled[self.current] | self.crossed[self.current])
        if counts[JOKER] == NUM_DICE:  # all six dice are unspent jokers
            aj = ALL_JOKER_IDS
            return (
                aj[0][free & 31]
                + aj[1][free >> 5 & 31]
                + aj[2][free >> 10 & 31]
                + aj[3][free >> 15 & 31]
                + aj[4][free >> 20 & 31]
            )
        j = 1 if counts[JOKER] else 0
        t = CIRCLE_IDS
        return (
            t[0][counts[0]][j][free & 31]
            + t[1][counts[1]][j][free >> 5 & 31]
            + t[2][counts[2]][j][free >> 10 & 31]
            + t[3][counts[3]][j][free >> 15 & 31]
            + t[4][counts[4]][j][free >> 20 & 31]
        )

    def _compute_legal(self) -> tuple[int, ...]:
        phase = self.phase
        if phase == REROLL:
            return REROLL_IDS[tuple(self.dice)]
        if phase == CIRCLE:
            ids = self._circle_candidates()
            return ids + (END_TURN,) if self.circles else ids
        if phase == CROSS:
            free = self.free(self.current)
            return tuple(CROSS_BASE + r for r in range(5) if free >> (5 * r) & 31)
        return ()

    # ---------------------------------------------------------------- moves
    def step(self, action: int) -> None:
        """Apply ``action`` for the player on turn; raise IllegalActionError if illegal."""
        if type(action) is int:
            a = action
        else:
            a = _as_action_id(action)
        if a not in self.legal_actions():
            raise IllegalActionError(a, self.why_illegal(a), _action_name_or_none(a))
        self._legal = None
        phase = self.phase
        if phase == REROLL:
            if a == STOP:
                self._start_circle_phase()
            else:
                self._reroll(a)
        elif phase == CIRCLE:
            if a == END_TURN:
                self._end_turn()
            else:
                self._circle(a)
        else:  # CROSS
            p = self.current
            self.crossed[p] |= ROW_MASKS[a - CROSS_BASE] & ~self.circled[p]
            self._check_end()
            self._end_turn()

    def _roll(self, k: int, roll: int) -> list[int]:
        """``k`` dice for roll ``roll`` of this turn (0: the first roll, 1 and 2: the rerolls)."""
        if self._throw is not None:
            return self._throw(self.current, self.round, roll, k)
        vals = self.rng.integers(0, 6, size=k)
        if type(vals) is np.ndarray and vals.dtype.kind == "i":
            return vals.tolist()  # fast path for numpy Generators: same ints
        return [int(v) for v in vals]

    def _reroll(self, bits: int) -> None:
        dice = self.dice
        new = self._roll(bin(bits).count("1"), ROLLS_PER_TURN + 1 - self.rolls_left)
        kept = [dice[i] for i in range(NUM_DICE) if not bits >> i & 1]
        dice = sorted(kept + new)
        self.dice = dice
        counts = [0] * 6
        for v in dice:
            counts[v] += 1
        self.counts = counts
        self.rolls_left -= 1
        if self.rolls_left == 0:
            self._start_circle_phase()

    def _start_circle_phase(self) -> None:
        self.phase = CIRCLE
        candidates = self._circle_candidates()
        if candidates:
            self._legal = candidates  # no circle yet, so no END_TURN
        else:
            self.phase = CROSS
            self._legal = None

    def _spend(self, face: int, n: int) -> None:
        dice, spent = self.dice, self.spent
        for i in range(NUM_DICE):
            if n == 0:
                break
            if dice[i] == face and not spent[i]:
                spent[i] = True
                n -= 1

    def _circle(self, a: int) -> None:
        k = a - CIRCLE_BASE
        cell, joker = k >> 1, k & 1
        row, col = divmod(cell, 5)
        p = self.current
        counts = self.counts
        if counts[JOKER] == NUM_DICE:
            self.spent = [True] * NUM_DICE
            self.counts = [0] * 6
        else:
            need = col + 1 - joker
            self._spend(row, need)
            counts[row] -= need
            if joker:
                self._spend(JOKER, 1)
                counts[JOKER] -= 1
        circled = self.circled[p] | (1 << cell)
        self.circled[p] = circled
        self.circles += 1
        # Lockout: a completed row or column crosses the rivals' open cells there.
        lines = 0
        if circled & ROW_MASKS[row] == ROW_MASKS[row]:
            lines |= ROW_MASKS[row]
        if circled & COL_MASKS[col] == COL_MASKS[col]:
            lines |= COL_MASKS[col]
        if lines:
            for q in range(self.num_players):
                if q != p:
                    self.crossed[q] |= lines & ~self.circled[q]
        self._check_end()
        if self.circles >= MAX_CIRCLES:
            self._end_turn()
            return
        candidates = self._circle_candidates()
        if candidates:
            self._legal = candidates + (END_TURN,)  # reuse: the mask needs exactly these
        else:
            self._end_turn()

    def _check_end(self) -> None:
        if self.end_triggered:
            return
        for q in range(self.num_players):
            if full_rows(self.circled[q] | self.crossed[q]) >= 2:
                self.end_triggered = True
                return

    def _end_turn(self) -> None:
        n = self.num_players
        while True:
            if self.end_triggered and self.current == n - 1:
                self.phase = OVER
                self._legal = ()
                return
            self.current = (self.current + 1) % n
            if self.current == 0:
                self.round += 1
            p = self.current
            if (self.circled[p] | self.crossed[p]) != FULL:
                break
            # A player with no free cell passes; the turn still counts.
        self._start_turn()

    def _start_turn(self) -> None:
        dice = sorted(self._roll(NUM_DICE, 0))
        self.dice = dice
        counts = [0] * 6
        for v in dice:
            counts[v] += 1
        self.counts = counts
        self.spent = [False] * NUM_DICE
        self.rolls_left = ROLLS_PER_TURN
        self.circles = 0
        self.phase = REROLL
        self._legal = None

    # -------------------------------------------------------- explanations
    def why_illegal(self, action: int) -> str:
        """A sentence saying why ``action`` is not legal now ("" if it is legal)."""
        try:
            action = _as_action_id(action)
        except IllegalActionError as exc:
            return exc.reason
        if not 0 <= action < NUM_ACTIONS:
            return f"action ids are 0..{NUM_ACTIONS - 1}"
        if action in self.legal_actions():
            return ""
        phase = self.phase
        if phase == OVER:
            return "the game is over"
        phase_of = {"stop": REROLL, "reroll": REROLL, "circle": CIRCLE, "end": CIRCLE, "cross": CROSS}
        from shelfie_env.game.actions import action_kind, decode_circle

        kind = action_kind(action)
        if phase_of[kind] != phase:
            return f"it is the {PHASES[phase]} phase, not a time to {kind}"
        if kind == "reroll":
            return (
                "not a canonical reroll set for these dice (among equal faces reroll the highest positions)"
            )
        if kind == "end":
            if self.circles == 0:
                return "you must circle at least one item before ending the turn"
            return "no further circle is possible; the turn ends by itself"
        if kind == "cross":
            return f"the {SYMBOL_PLURALS[action - CROSS_BASE]} row has no free cell"
        row, col, joker = decode_circle(action)
        if self.cell(self.current, row, col) == 1:
            return f"{SYMBOLS[row]} #{col + 1} is already circled"
        if self.cell(self.current, row, col) == 2:
            return f"{SYMBOLS[row]} #{col + 1} is crossed out"
        if self.counts[JOKER] == NUM_DICE:
            return "with six jokers circle any free cell with the joker flag"
        have = self.counts[row]
        if joker and col == 0:
            return "a joker is never used alone"
        if joker and not self.counts[JOKER]:
            return "no unspent joker"
        need = col + 1 - joker
        return (
            f"{SYMBOLS[row]} #{col + 1} needs {need} unspent {SYMBOLS[row]} dice"
            f"{' plus a joker' if joker else ''}, you have {have}"
        )

    # --------------------------------------------------------------- (de)serialise
    def to_dict(self) -> dict[str, Any]:
        """The state dict (JSON-compatible, docs/rules.md)."""
        return {
            "num_players": self.num_players,
            "points": [list(row) for row in self.table.points],
            "boards": [self.board(p) for p in range(self.num_players)],
            "current_player": self.current,
            "phase": PHASES[self.phase],
            "dice": list(self.dice),
            "spent": list(self.spent),
            "rolls_left": self.rolls_left,
            "circles_this_turn": self.circles,
            "end_triggered": self.end_triggered,
            "scores": self.scores(),
            "round": self.round,
            **({"tape_seed": self.rng.seed} if isinstance(self.rng, DiceTape) else {}),
        }

    @classmethod
    def from_dict(cls, state: Mapping[str, Any], rng: DiceSource | int | None = None) -> Game:
        """Build a game from a state dict (docs/rules.md), validating every field.

        Raises :class:`InvalidStateError` (a ``ValueError``) naming the field of
        a malformed or impossible state.
        """
        from shelfie_env.game.state_validation import validate_state

        v = validate_state(state)
        if rng is None and v["tape_seed"] is not None:
            rng = DiceTape(v["tape_seed"])
        game = cls(v["num_players"], v["points"], rng)
        game.circled = v["circled"]
        game.crossed = v["crossed"]
        game.current = v["current_player"]
        game.phase = PHASE_INDEX[v["phase"]]
        game.dice = v["dice"]
        game.spent = v["spent"]
        counts = [0] * 6
        for d, s in zip(game.dice, game.spent):
            if not s:
                counts[d] += 1
        game.counts = counts
        game.rolls_left = v["rolls_left"]
        game.circles = v["circles_this_turn"]
        game.end_triggered = v["end_triggered"]
        game.round = v["round"]
        game._legal = None
        _check_consistency(game)
        return game

    def __repr__(self) -> str:
        return (
            f"Game(players={self.num_players}, current={self.current}, phase={PHASES[self.phase]}, "
            f"dice={self.dice}, rolls_left={self.rolls_left}, circles={self.circles})"
        )


def _thrower(rng: object) -> Any:
    """The ``throw`` method of a positional dice source (:mod:`.dice`), or ``None`` for a stream."""
    if isinstance(rng, np.random.Generator):
        return None
    return rng.throw if isinstance(rng, PositionalDice) else None


_TABLE_CACHE: dict[tuple[tuple[int, ...], ...], ScoreTable] = {}


def _score_table(points: Sequence[Sequence[int]]) -> ScoreTable:
    from shelfie_env.game.scoring import validate_points

    key = validate_points(points)
    table = _TABLE_CACHE.get(key)
    if table is None:
        table = _TABLE_CACHE[key] = ScoreTable(key)
    return table


def _as_action_id(action: object) -> int:
    """``action`` as a plain int id; bools, floats and strings are refused."""
    if isinstance(action, (bool, np.bool_)):
        raise IllegalActionError(action, "an action must be an integer id 0..119, not a bool")
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise IllegalActionError(action, "an action must be an integer id 0..119") from None


def _action_name_or_none(a: int) -> str | None:
    """:func:`action_name` of ``a``, or ``None`` when it is no action id."""
    try:
        return action_name(a)
    except ValueError:
        return None


def _check_consistency(game: Game) -> None:
    """Refuse positions the rules can never reach (beyond per-field checks)."""
    n = game.num_players
    for p in range(n):
        for line_masks, kind in ((ROW_MASKS, "row"), (COL_MASKS, "column")):
            for i, m in enumerate(line_masks):
                if game.circled[p] & m == m:
                    for q in range(n):
                        if q != p and game.free(q) & m:
                            raise InvalidStateError(
                                "boards",
                                f"player {p} completed {kind} {i} but player {q} still has a free cell "
                                "there (lockout should have crossed it)",
                            )
    triggered = any(full_rows(game.circled[q] | game.crossed[q]) >= 2 for q in range(n))
    if triggered and not game.end_triggered:
        raise InvalidStateError("end_triggered", "a player has 2 rows with no free cell, so it must be true")
    if game.end_triggered and not triggered:
        raise InvalidStateError("end_triggered", "true, but no player has 2 rows with no free cell")
    if game.phase == OVER:
        return
    p = game.current
    if game.free(p) == 0:
        raise InvalidStateError("current_player", f"player {p} has no free cell and cannot be on turn")
    if game.phase == CIRCLE and not game._circle_candidates():
        raise InvalidStateError(
            "phase", "circle phase but nothing is circleable (the turn would have ended or be a cross phase)"
        )
    if game.phase == CROSS and game._circle_candidates():
        raise InvalidStateError("phase", "cross phase but an item is circleable")
