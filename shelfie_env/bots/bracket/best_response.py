"""``greedy-br``: ``td``'s search, with each turn's placement chosen knowing the rival is ``greedy``.

A best response from below for the bracket against ``greedy`` (docs/bracket.md). ``greedy`` is
deterministic given its dice, so its next turn after any placement of ours can be played
exactly as it will play it; only its dice are unknown. The bot

* rerolls as ``td`` does (the shipped after-state network with the planner's exact expectimax
  over the dice);
* at each circle (or cross) decision lists every placement it can still end the turn with from
  this position (after a circle: ending the turn now, :data:`STAY`, too), takes the ``top`` best
  by ``td``'s value that lie within ``window`` of the best, and re-values each by playing
  ``greedy``'s next turn on ``samples`` sampled sets of dice, the same samples for every
  candidate (common random numbers), from a copy of the game: the position ``greedy``'s turn
  ends in is valued by ``td``'s network from our side (the negative of its value for
  ``greedy``, the mover), and a game that ends there by its exact result;
* plays the first circle of the best placement (or its cross-out).

The samples are drawn from a generator seeded by what stays the same through the turn (the
seat, the round, the dice, the rivals' circles), so a placement chosen at the turn's first
circle keeps its value at the next one, and the bot is deterministic: its answer is a function
of the position. Each placement's reply value is remembered by the position it leaves.
The copies get their own dice and never touch the game's: it plays with tape or stream dice.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from shelfie_env.bots.bracket.turn import STAY
from shelfie_env.bots.greedy import GreedyBot
from shelfie_env.bots.learned.afterstate import AfterstateNet, afterstates_many, final_reward
from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.learned.value import ValueBot, load_value_bot, shipped_td_model, stay_value
from shelfie_env.bots.planner.placements import SET_MASKS, SET_SIZES, SETS, feasible_matrix, first_step
from shelfie_env.game.actions import CROSS_BASE, END_TURN, NUM_DICE
from shelfie_env.game.engine import CIRCLE, CROSS, MAX_CIRCLES, Game, full_rows, placed_shelves
from shelfie_env.game.scoring import FULL

_EMPTY = np.zeros(0, dtype=np.int64)
_NO_CELLS = np.zeros(1, dtype=np.int64)


class SampledTurn:
    """Dice for one simulated turn: roll ``r`` of whatever seat and turn throws the first ``count`` of ``faces[r]``."""

    def __init__(self, faces: np.ndarray) -> None:
        self.faces = faces

    def throw(self, seat: int, turn: int, roll: int, count: int) -> list[int]:
        return self.faces[roll, :count].tolist()

    def integers(self, low: int, high: int, size: int) -> Any:
        raise TypeError("a SampledTurn deals by roll (the engine calls throw)")


def placement_options(game: Game) -> list[int]:
    """The placements the player on turn can end with from here: ``NUM_SET_VALUES`` indices, and
    :data:`STAY`.

    In the circle phase: every set within the free cells that its unspent dice can circle with
    the circles left, and :data:`STAY` after a circle (sets are of cells beyond the shelf as it
    stands); in the cross phase: every row with a free cell.
    """
    p = game.current
    free = FULL & ~(game.circled[p] | game.crossed[p])
    if game.phase == CROSS:
        return [NUM_SETS + a - CROSS_BASE for a in game.legal_actions()]
    ok = feasible_matrix(np.array([game.counts]))[0] & ((SET_MASKS & ~free) == 0)
    ok &= SET_SIZES <= MAX_CIRCLES - game.circles
    sets = np.flatnonzero(ok).tolist()
    return sets + [STAY] if game.circles else sets


def placement_cells(placement: int) -> tuple[tuple[int, int], ...]:
    """The cells ``placement`` circles (none for :data:`STAY` and a cross-out)."""
    return SETS[placement] if 0 <= placement < NUM_SETS else ()


def play_placement(game: Game, placement: int) -> None:
    """Play ``placement`` on ``game`` (changed in place) to the end of the current turn."""
    if placement >= NUM_SETS:
        game.step(CROSS_BASE + placement - NUM_SETS)
        return
    p, start = game.current, game.circled[game.current]
    cells = placement_cells(placement)
    while game.current == p and game.phase == CIRCLE and not game.over:
        left = tuple((r, c) for r, c in cells if not (game.circled[p] & ~start) >> (5 * r + c) & 1)
        game.step(first_step(game.counts, left, game.legal_actions()) if left else END_TURN)


def rival_reply(game: Game, placement: int, faces: np.ndarray, rival: GreedyBot) -> tuple[Game, bool]:
    """A copy of ``game`` after our ``placement`` and the rival's next turn thrown from ``faces`` ``(3, 6)``.

    The rival's turn is played by ``rival`` exactly; returns the copy (at our next turn, or over)
    and whether the rival played (it passes when its shelf is full, and has no turn once the game is over).
    """
    me = game.current
    g = game.clone(rng=SampledTurn(faces))
    play_placement(g, placement)
    replied = False
    while not g.over and g.current != me:
        g.step(rival.act_game(g))
        replied = True
    return g, replied


class GreedyBestResponse:
    """``td`` that re-ranks its placements by ``greedy``'s sampled reply (module doc). Two players."""

    name = "greedy-br"

    def __init__(
        self, top: int = 4, samples: int = 16, window: float = 0.2, net: AfterstateNet | None = None
    ) -> None:
        if top < 1 or samples < 1:
            raise ValueError(f"top and samples must be >= 1, got {top} and {samples}")
        self.top, self.samples, self.window = int(top), int(samples), float(window)
        self._net = net
        self._td: ValueBot | None = None
        self._rival = GreedyBot()
        self._replies: OrderedDict[tuple[Any, ...], float] = OrderedDict()
        """Reply values by the samples' seed and the position the placement leaves."""

    @property
    def td(self) -> ValueBot:
        if self._td is None:
            self._td = (
                ValueBot(self._net) if self._net is not None else load_value_bot(shipped_td_model(2), 2)
            )
        return self._td

    @staticmethod
    def sample_seed(game: Game) -> list[int]:
        """What the samples are drawn from: the seat, the round, the dice and the rivals' circles, all
        the same through a turn."""
        me = game.current
        rivals = [c for q, c in enumerate(game.circled) if q != me]
        return [me, game.round, *game.dice, *rivals]

    def reply_values(self, game: Game, placements: list[int]) -> np.ndarray:
        """Our value of each placement after ``greedy``'s next turn, averaged over the sampled dice.

        Each placement is valued on its own (its samples in one network forward), so its value
        depends only on the samples and the position it leaves, by which it is remembered.
        """
        seed = self.sample_seed(game)
        faces: np.ndarray | None = None
        out = np.zeros(len(placements))
        for i, placement in enumerate(placements):
            key = (*seed, self.samples, *self.left_by(game, placement))
            value = self._replies.pop(key, None)
            if value is None:
                if faces is None:
                    faces = np.random.default_rng(seed).integers(0, 6, size=(self.samples, 3, NUM_DICE))
                value = self._reply_value(game, placement, faces)
            self._replies[key] = value
            out[i] = value
        while len(self._replies) > 4096:
            self._replies.popitem(last=False)
        return out

    @staticmethod
    def left_by(game: Game, placement: int) -> tuple[Any, ...]:
        """The position ``placement`` leaves at the end of the turn: every shelf, and the end trigger."""
        p = game.current
        row = placement - NUM_SETS if placement >= NUM_SETS else None
        cells = 0 if row is not None or placement == STAY else int(SET_MASKS[placement])
        circled, crossed = placed_shelves(game.circled, game.crossed, p, cells, row)
        triggered = game.end_triggered or any(full_rows(c | x) >= 2 for c, x in zip(circled, crossed))
        return (*circled, *crossed, triggered, game.table.points)

    def _reply_value(self, game: Game, placement: int, faces: np.ndarray) -> float:
        """:meth:`reply_values` of one placement on the sampled ``faces`` ``(samples, 3, 6)``."""
        net = self.td.net
        me = game.current
        values = np.zeros(len(faces))
        later: list[tuple[int, Game, float]] = []
        for j in range(len(faces)):
            g, replied = rival_reply(game, placement, faces[j], self._rival)
            sign = -1.0 if replied else 1.0
            if g.over:
                scores = np.array([[g.scores()[me], g.scores()[1 - me]]])
                values[j] = float(final_reward(scores, net.margin_coef)[0])
            else:
                g.current = me if sign > 0 else 1 - me  # the mover of the position's last turn
                later.append((j, g, sign))
        if later:
            feats, _, _ = afterstates_many(
                [g for _, g, _ in later], [_NO_CELLS] * len(later), [_EMPTY] * len(later)
            )
            for (j, _, sign), v in zip(later, net(feats)):
                values[j] = sign * float(v)
        return float(values.mean())

    def td_values(self, game: Game, placements: list[int]) -> np.ndarray:
        """``td``'s value of each placement from this position (:data:`STAY`: the shelves as they stand)."""
        values = self.td.net.values_of(game)
        stay = stay_value(self.td.net, game) if STAY in placements else None
        return np.array([stay if o == STAY else values[o] for o in placements], dtype=np.float64)

    def choose(self, game: Game) -> int:
        """The placement to end this turn with, from this position (module doc)."""
        options = placement_options(game)
        td_values = self.td_values(game, options)
        order = np.argsort(-td_values, kind="stable")
        best = td_values[order[0]]
        chosen = [options[i] for i in order[: self.top] if td_values[i] >= best - self.window]
        if len(chosen) == 1:
            return chosen[0]
        reply = self.reply_values(game, chosen)
        return chosen[int(np.argmax(reply))]

    def act_game(self, game: Game) -> int:
        if game.num_players != 2:
            raise ValueError(f"greedy-br plays 2-player games, the game has {game.num_players}")
        if game.over:
            raise ValueError("no legal action: the game is over")
        if game.phase not in (CIRCLE, CROSS):
            return self.td.act_game(game)
        placement = self.choose(game)
        if placement >= NUM_SETS:
            return CROSS_BASE + placement - NUM_SETS
        cells = placement_cells(placement)
        return first_step(game.counts, cells, game.legal_actions()) if cells else END_TURN

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def make_greedy_br(top: int = 4, samples: int = 16, window: float = 0.2) -> GreedyBestResponse:
    """``bots.make("greedy-br", top=4, samples=16, window=0.2)``: the best response to ``greedy`` (2 players)."""
    return GreedyBestResponse(top, samples, window)


make_greedy_br.table_sizes = lambda: (2,)  # type: ignore[attr-defined]

__all__ = [
    "STAY",
    "GreedyBestResponse",
    "SampledTurn",
    "make_greedy_br",
    "placement_cells",
    "placement_options",
    "play_placement",
    "rival_reply",
]
