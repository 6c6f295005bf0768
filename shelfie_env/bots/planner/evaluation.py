"""The planner's evaluation of a position right after the player's placement.

``value = mean over rivals of (E_me - rival_weight * E_rival)``

where ``E_x`` is player x's *expected final score*: the sum over the 10 lines
of the line's expected score (:mod:`.lines`) when each free cell ``(r, c)``
will still be circled with probability

``q(r, c) = (1 - (1 - hit[c]) ** T) * (1 - threat(r, c))``

* ``T`` is the number of turns the player still gets. If the placement
  triggers the end (some shelf has two rows with no free cell) the player gets
  none and only secured points count; a rival seated later gets exactly one,
  valued exactly (:mod:`.last_turn`: its best expected final score). Otherwise
  ``T`` is the estimated number of turns left (:func:`rounds_left_many`; a
  rival seated later gets one more), so potential is worth less and less as
  the end nears, and a player ahead gains by triggering the end (crossing
  choice) while one behind does not.
* ``hit[c]`` is the per-turn chance a given free cell of column ``c`` (it needs
  ``c + 1`` equal dice) gets circled: harder cells are discounted more.
* ``threat(r, c)`` is the chance a rival completes row ``r`` or column ``c``
  first (product of the rival's own ``q`` over the line's missing cells, when
  the rival has nothing crossed there): completing crosses our cell.
* Completions that lock rivals out are applied exactly: the rivals' free cells
  of a line we complete become crossed, which lowers ``E_rival``; the lines we
  may still complete cost each rival ``sum_L P(we complete L) * loss_L``.

With ``rival_weight = 1`` each rival's term starts as the expected final
score difference; solo the value is the expected final score. Against rivals
that margin is then turned into a win chance (``sigma``, on by default):
``margin_scale * tanh(margin / (sigma * sqrt(turns left to both + 0.5)))``,
since what counts is finishing ahead, and the spread of the final margin grows
with the turns still to play. Placements that end our game get their exact
value instead: ``margin_scale * (P(win) - P(loss))`` against a later rival's
score-maximising last turn (:func:`.last_turn.last_turn_edge`), the sign of the
margin against earlier ones; in the game's very last turn ``50 * sign``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from shelfie_env.bots.planner.last_turn import last_turn_edge, last_turn_value
from shelfie_env.bots.planner.lines import LINE_CELLS, line_points, line_tables, shelf_values, transpose_many
from shelfie_env.game.engine import CIRCLE, REROLL, Game
from shelfie_env.game.scoring import COL_MASKS, FULL, ROW_MASKS

_ROW_MASKS = np.array(ROW_MASKS, dtype=np.int64)
_COL_MASKS = np.array(COL_MASKS, dtype=np.int64)
_LINE_MASKS = np.concatenate([_ROW_MASKS, _COL_MASKS])
_COLUMN_OF_BIT = np.array([b % 5 for b in range(25)])
_PATTERN_BITS = ((np.arange(32)[:, None] >> np.arange(5)[None, :]) & 1).astype(bool)  # (32, 5)


@dataclass(frozen=True)
class Weights:
    """Parameters of the evaluation (``planner:threat=0.4`` sets one from a bot spec; ``docs/planner.md``)."""

    hit: tuple[float, ...] = (0.109, 0.128, 0.146, 0.105, 0.027)
    """Per-turn chance that a free cell of column c (needs c+1 dice) gets circled."""
    rival_weight: float = 1.01
    """Weight of the rivals' expected score (1 = maximise the score difference)."""
    threat: float = 0.66
    """Scale of the discount of our cells in lines a rival may complete first."""
    deep: int = 0
    """Circle phase with rivals: re-value the best ``deep`` circle sets by playing our next turn
    exactly (0: off)."""
    solo_deep: int = 8
    """``deep`` in solo games: the best ``solo_deep`` circle sets are re-valued by playing the
    next turn exactly."""
    sigma: float = 12.9
    """Win-chance mode when > 0: each rival margin m becomes ``margin_scale * tanh(m / (sigma *
    sqrt(turns left to both + 0.5)))`` (close to the expected rank reward); 0 keeps the raw margin."""
    margin_scale: float = 10.0
    """Scale of the win-chance value (only a unit: it keeps values in points-like ranges)."""
    lockout: float = 0.57
    """Scale of the rivals' expected loss from lines we may complete later."""
    pace: tuple[float, float, float, float] = (0.103, 0.306, -0.230, -0.364)
    """Turns-left estimate coefficients (see :func:`rounds_left_many`)."""

    solo_hit: tuple[float, ...] = (0.3, 0.2, 0.16, 0.115, 0.03)
    """``hit`` in solo games, which last about twice as long."""
    solo_pace: tuple[float, float, float, float] = (0.113, 0.913, -3.313, 0.0)
    """``pace`` in solo games (the end comes only from one's own shelf)."""

    def __post_init__(self) -> None:
        for name in ("hit", "solo_hit"):
            rates = getattr(self, name)
            if len(rates) != 5 or not all(0.0 <= float(h) <= 1.0 for h in rates):
                raise ValueError(f"{name} must be 5 per-turn rates in [0, 1], got {rates!r}")
        for name in ("pace", "solo_pace"):
            if len(getattr(self, name)) != 4:
                raise ValueError(f"{name} must be 4 coefficients (a, b, c, d), got {getattr(self, name)!r}")
        names = (
            "rival_weight",
            "threat",
            "lockout",
            "sigma",
            "margin_scale",
            "deep",
            "solo_deep",
        )
        for name in names:
            if float(getattr(self, name)) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")


def full_rows_many(filled: np.ndarray) -> np.ndarray:
    """Rows with no free cell, for an array of filled (circled | crossed) masks."""
    return sum(((filled & m) == m).astype(np.int64) for m in ROW_MASKS)


FINAL_TURN_SCALE = 50.0
"""Value of a win (and minus that of a loss) in the game's last turn, in points-like units."""

_POP5 = np.array([m.bit_count() for m in range(32)], dtype=np.int64)


def rounds_left_many(fills: list[np.ndarray], weights: Weights, mid_round: bool) -> np.ndarray:
    """Estimated turns the mover still gets after this one, for untriggered positions.

    ``fills`` holds one array of filled (circled | crossed) masks per player.
    The end comes when one shelf has two rows with no free cell, so the shelf
    closest to it sets the pace: ``a * (fewest free cells in two rows of one
    shelf) + b * (fewest free cells of one shelf) + c``, plus ``d`` when the
    mover is not the last seat (a later seat may still trigger the end this
    round); ``(a, b, c, d) = weights.pace``, fitted on recorded games.
    """
    two_rows = total = None
    for f in fills:
        free = np.stack([5 - _POP5[f >> (5 * r) & 31] for r in range(5)], axis=-1)
        free.sort(axis=-1)
        t2, tt = free[..., 0] + free[..., 1], free.sum(axis=-1)
        two_rows = t2 if two_rows is None else np.minimum(two_rows, t2)
        total = tt if total is None else np.minimum(total, tt)
    a, b, c, d = weights.pace if len(fills) > 1 else weights.solo_pace
    return np.maximum(0.0, a * two_rows + b * total + c + (d if mid_round else 0.0))


def rounds_left(game: Game, weights: Weights) -> float:
    """:func:`rounds_left_many` for the position of ``game`` as it stands (mover: ``game.current``)."""
    fills = [np.array([game.circled[q] | game.crossed[q]]) for q in range(game.num_players)]
    return float(rounds_left_many(fills, weights, game.current < game.num_players - 1)[0])


PositionKey = tuple[int, tuple[int, ...], tuple[int, ...], bool, tuple[tuple[int, ...], ...], int]
"""See :func:`position_key`."""


def position_key(game: Game) -> PositionKey:
    """What a turn's context depends on: ``(player on turn, every seat's circled masks, every seat's
    crossed masks, end triggered, points table, circles made this turn)``.

    Not the dice, the spent dice, the rolls left or the phase: a context values the placements the
    turn can end with from this position, whatever the dice. The layout is :attr:`Context.turn_start`'s.
    """
    return (
        game.current,
        tuple(game.circled),
        tuple(game.crossed),
        bool(game.end_triggered),
        game.table.points,
        game.circles,
    )


def continues_turn(start: PositionKey, game: Game) -> bool:
    """Whether ``game`` can be a later position of the turn that was at position ``start``.

    True when nothing changed but this turn's circles by the same player: its shelf only gained
    ``game.circles - circles at start`` circled cells and nothing crossed, the rivals' circles are
    the same, and no cell of theirs stopped being crossed (lockouts add crosses). A state alone
    does not say which cells were circled this turn, so this holds for many positions of other
    turns too: only a caller that knows ``game`` followed from ``start`` in one game (a review
    walking a game's positions in order) may reuse a context on it. Bots key their contexts by
    :func:`position_key` instead (:class:`ContextCache`).
    """
    p, circled, crossed, triggered, points, circles = start
    if game.current != p or game.over or game.table.points != points:
        return False
    if game.phase == REROLL or game.circles == circles:
        return (
            tuple(game.circled) == circled
            and tuple(game.crossed) == crossed
            and bool(game.end_triggered) == triggered
        )
    if game.phase != CIRCLE or game.circles < circles:
        return False
    new = game.circled[p] & ~circled[p]
    if game.circled[p] & circled[p] != circled[p] or new.bit_count() != game.circles - circles:
        return False
    if game.crossed[p] != crossed[p] or (triggered and not game.end_triggered):
        return False
    for q in range(len(circled)):
        if q != p and (game.circled[q] != circled[q] or game.crossed[q] & crossed[q] != crossed[q]):
            return False
    return True


C = TypeVar("C")


class ContextCache(Generic[C]):
    """The contexts of the last ``size`` positions asked about, by :func:`position_key`.

    A context is reused only for the position it was built for (at other dice, rolls left or
    phase), so what a bot answers with it is what a fresh bot answers.
    """

    def __init__(self, size: int = 8) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._items: OrderedDict[PositionKey, C] = OrderedDict()

    def get(self, game: Game, build: Callable[[Game], C]) -> C:
        """The context of ``game``'s position: the cached one, else ``build(game)`` (then cached)."""
        key = position_key(game)
        ctx = self._items.pop(key, None)
        if ctx is None:
            ctx = build(game)
        self._items[key] = ctx
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return ctx


class Context:
    """Everything a decision of ``game.current`` needs to evaluate placements fast.

    It reads a copy of ``game``, so a live game that moves on later does not change it.
    """

    def __init__(self, game: Game, weights: Weights) -> None:
        game = self.game = game.clone()
        self.weights = weights
        p = self.player = game.current
        n = game.num_players
        self.rivals = [q for q in range(n) if q != p]
        self.circled = game.circled[p]
        self.crossed = game.crossed[p]
        self.free = FULL & ~(self.circled | self.crossed)
        self.already_triggered = bool(game.end_triggered)
        # The game's last turn (the end is triggered and nobody plays after us): every
        # final score is known once we place, so the value is the exact rank reward.
        self.final_turn = self.already_triggered and bool(self.rivals) and all(q < p for q in self.rivals)
        self.turn_start = position_key(game)
        self.cache: dict[object, np.ndarray] = {}
        self.points = line_points(game.table.points)
        self._zero = line_tables(np.zeros(25), self.points)
        own_hit = weights.hit if n > 1 else weights.solo_hit
        self._hit = np.array(own_hit, dtype=np.float64)[_COLUMN_OF_BIT]
        self._rival_hit = np.array(weights.hit, dtype=np.float64)[_COLUMN_OF_BIT]
        R = 0.0 if self.already_triggered else rounds_left(game, weights)
        self.rounds = R
        turns = {q: R + (1 if q > p else 0) for q in range(n)}
        base_q = {q: self._base_prob(q, turns[q]) for q in range(n)}
        completes = {q: self._completion_prob(q, base_q[q]) for q in range(n)}
        # My cells: discounted by the rivals' chances of completing their lines first.
        self._me_q = base_q[p] * self._cell_safe([completes[o] for o in self.rivals])
        self._me_go = line_tables(self._me_q, self.points)
        # Rivals: tables without my threat (that one follows my move, see _lockout_risk).
        self._riv_go, self._riv_end, self._riv_damage = [], [], []
        for q in self.rivals:
            others = [completes[o] for o in self.rivals if o != q]
            table = (
                line_tables(base_q[q] * self._cell_safe(others), self.points) if turns[q] > 0 else self._zero
            )
            self._riv_go.append(table)
            self._riv_end.append(self._table_for(q, 1.0, others) if q > p else self._zero)
            self._riv_damage.append(self._line_damage(q, table))
        # _me_prod[L, free5]: product of my q over the free cells (pattern free5) of line L.
        q_line = base_q[p][LINE_CELLS]  # (10, 5), undiscounted like the rivals' completion chances
        self._me_prod = np.prod(np.where(_PATTERN_BITS[None, :, :], q_line[:, None, :], 1.0), axis=2)

    def matches(self, game: Game, weights: Weights) -> bool:
        """Whether this context (built earlier in the same turn of the same game) still fits ``game``:
        the same weights and :func:`continues_turn` (which see: only for one game's positions in order)."""
        return weights == self.weights and continues_turn(self.turn_start, game)

    # ----------------------------------------------------------- building blocks
    def _base_prob(self, q: int, turns: float) -> np.ndarray:
        free = FULL & ~(self.game.circled[q] | self.game.crossed[q])
        bits = (free >> np.arange(25)) & 1
        hit = self._hit if q == self.player else self._rival_hit
        return bits * (1.0 - (1.0 - hit) ** max(turns, 0.0))

    def _cell_safe(self, completes: list[np.ndarray]) -> np.ndarray:
        """Per cell: chance no listed player completes its row or column first."""
        safe = np.ones(10)
        for comp in completes:
            safe *= 1.0 - np.clip(self.weights.threat * comp, 0.0, 1.0)
        return safe[:5].repeat(5) * np.tile(safe[5:], 5)  # bit 5r+c: row r times column c

    def _table_for(self, q: int, turns: float, others: list[np.ndarray]) -> np.ndarray:
        return line_tables(self._base_prob(q, turns) * self._cell_safe(others), self.points)

    def _completion_prob(self, q: int, prob: np.ndarray) -> np.ndarray:
        """Chance player q completes each of the 10 lines (0 if one of its cells is crossed)."""
        circ, cross = self.game.circled[q], self.game.crossed[q]
        out = np.zeros(10)
        for i, m in enumerate(_LINE_MASKS.tolist()):
            if cross & m or circ & m == m:
                continue
            bits = [b for b in range(25) if m >> b & 1 and not circ >> b & 1]
            out[i] = float(np.prod(prob[bits]))
        return out

    def _line_damage(self, q: int, table: np.ndarray) -> np.ndarray:
        """What rival q would lose if each line's free cells were crossed by a lockout."""
        c, x = self.game.circled[q], self.game.crossed[q]
        locked = np.array([x | (m & ~c) for m in _LINE_MASKS.tolist()], dtype=np.int64)
        base = shelf_values(table, np.array([c]), np.array([x]))[0]
        return base - shelf_values(table, np.full(10, c), locked)

    def _lockout_risk(self, circled: np.ndarray, crossed: np.ndarray) -> np.ndarray:
        """(n, 10): chance I complete each line later, from each candidate shelf of mine."""
        out = np.zeros(circled.shape + (10,))
        tc, tx = transpose_many(circled), transpose_many(crossed)
        for i in range(10):
            s = 5 * (i % 5)
            c5 = (circled >> s if i < 5 else tc >> s) & 31
            x5 = (crossed >> s if i < 5 else tx >> s) & 31
            open_ = (x5 == 0) & (c5 != 31)
            out[:, i] = np.where(open_, self._me_prod[i][31 & ~c5], 0.0)
        return out

    # -------------------------------------------------------------- evaluation
    def _last_turn(self, q: int, crossed: int) -> float:
        return last_turn_value(self.game.table.points, self.game.circled[q], crossed)

    def evaluate(self, circled: np.ndarray, crossed: np.ndarray) -> np.ndarray:
        """Values of candidate shelves of the player (arrays of masks), rivals updated by lockout."""
        circled = np.asarray(circled, dtype=np.int64)
        crossed = np.asarray(crossed, dtype=np.int64)
        return self._evaluate(circled, crossed)[0]

    def _evaluate(self, circled: np.ndarray, crossed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Values and whether each placement triggers the end."""
        g = self.game
        # Lines newly completed lock the rivals out.
        lock = np.zeros(circled.shape, dtype=np.int64)
        for m in _LINE_MASKS.tolist():
            if self.circled & m != m:
                lock |= np.where(circled & m == m, m, 0)
        triggered = np.full(circled.shape, self.already_triggered)
        triggered |= full_rows_many(circled | crossed) >= 2
        riv_cross = []
        for q in self.rivals:
            x = g.crossed[q] | (lock & ~g.circled[q])
            riv_cross.append(x)
            triggered |= full_rows_many(g.circled[q] | x) >= 2
        me_go = shelf_values(self._me_go, circled, crossed)
        me = np.where(triggered, shelf_values(self._zero, circled, crossed), me_go)
        if not self.rivals:
            return me, triggered
        risk = self._lockout_risk(circled, crossed) * self.weights.lockout  # (n, 10)
        sigma = self.weights.sigma
        total = np.zeros(circled.shape)
        for i, q in enumerate(self.rivals):
            c = np.full(circled.shape, g.circled[q])
            x = riv_cross[i]
            go = shelf_values(self._riv_go[i], c, x)
            go = go - np.clip(risk, 0.0, 1.0) @ self._riv_damage[i]
            if q > self.player and triggered.any():
                end = np.array([self._last_turn(q, int(xx)) for xx in x[triggered]])
                riv = go.copy()
                riv[triggered] = end
            else:
                riv = np.where(triggered, shelf_values(self._riv_end[i], c, x), go)
            margin = me - self.weights.rival_weight * riv
            if self.final_turn:
                # Win 1 / tie 0 / loss -1 (scaled to points), the margin only breaks ties.
                margin = FINAL_TURN_SCALE * np.sign(me - riv) + 0.01 * (me - riv)
            elif sigma > 0:
                # Turns still to play by both: the spread of the final margin grows with them.
                later = 1.0 if q > self.player else 0.0
                turns = np.where(triggered, later, 2.0 * self.rounds + later)
                raw = margin
                margin = self.weights.margin_scale * np.tanh(raw / (sigma * np.sqrt(turns + 0.5)))
                if triggered.any():
                    margin[triggered] = self._end_edge(q, me[triggered], raw[triggered], x[triggered])
            total += margin
        return total / len(self.rivals), triggered

    def _end_edge(self, q: int, mine: np.ndarray, raw: np.ndarray, crossed: np.ndarray) -> np.ndarray:
        """Win-chance values of placements that end our game (``sigma`` mode), exactly.

        Our final score is ``mine``. A rival seated later plays one last turn
        maximising its score (:func:`last_turn_edge`); an earlier one is done,
        so the sign of the margin decides. ``margin_scale * (P(win) - P(loss))``,
        the margin breaking ties."""
        if q < self.player:
            edge = np.sign(raw)
        else:
            pts, circ = self.game.table.points, self.game.circled[q]
            edge = np.array([last_turn_edge(pts, circ, int(x), float(m)) for x, m in zip(crossed, mine)])
        return self.weights.margin_scale * edge + 0.001 * raw

    def evaluate_circles(self, sets: np.ndarray) -> np.ndarray:
        """Values after circling each set of cells (masks of free cells)."""
        return self.evaluate(self.circled | sets, np.full(sets.shape, self.crossed))

    def evaluate_crosses(self, rows: list[int]) -> np.ndarray:
        """Values after crossing out each row (its free cells become crossed)."""
        cross = np.array([self.crossed | (ROW_MASKS[r] & self.free) for r in rows], dtype=np.int64)
        return self.evaluate(np.full(cross.shape, self.circled), cross)
