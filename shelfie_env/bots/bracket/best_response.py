"""``greedy-br``: ``td``'s search, with each turn's placement chosen knowing the rival is ``greedy``.

A best response from below for the bracket against ``greedy`` (docs/bracket.md). ``greedy`` is
deterministic given its dice, so its next turn after any placement of ours can be played
exactly as it will play it; only its dice are unknown. The bot

* rerolls as ``td`` does (the shipped after-state network with the planner's exact expectimax
  over the dice);
* at the turn's first circle (or cross) decision lists every placement its final dice allow,
  takes the ``top`` best by ``td``'s value that lie within ``window`` of the best, and re-values
  each by playing ``greedy``'s next turn on ``samples`` sampled sets of dice, the same samples for
  every candidate (common random numbers), from a copy of the game: the position ``greedy``'s
  turn ends in is valued by ``td``'s network from our side (the negative of its value for
  ``greedy``, the mover), and a game that ends there by its exact result;
* circles the best placement, and keeps to it for the rest of the turn.

The samples are drawn from a generator seeded by the position, so the bot is deterministic.
The copies get their own dice and never touch the game's: it plays with tape or stream dice.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shelfie_env.bots.greedy import GreedyBot
from shelfie_env.bots.learned.afterstate import AfterstateNet, afterstates_many, final_reward
from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.learned.value import ValueBot, load_value_bot, shipped_td_model
from shelfie_env.bots.planner.placements import SET_MASKS, SETS, feasible_matrix, first_step
from shelfie_env.game.actions import CROSS_BASE, END_TURN, NUM_DICE
from shelfie_env.game.engine import CIRCLE, CROSS, Game
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
    """The placements (``NUM_SET_VALUES`` indices) the player on turn can end with from here.

    In the circle phase before any circle: every set within the free cells its unspent dice can
    circle; in the cross phase: every row with a free cell.
    """
    p = game.current
    free = FULL & ~(game.circled[p] | game.crossed[p])
    if game.phase == CROSS:
        return [NUM_SETS + a - CROSS_BASE for a in game.legal_actions()]
    ok = feasible_matrix(np.array([game.counts]))[0] & ((SET_MASKS & ~free) == 0)
    return np.flatnonzero(ok).tolist()


def play_placement(game: Game, placement: int) -> None:
    """Play ``placement`` on ``game`` (changed in place) to the end of the current turn."""
    if placement >= NUM_SETS:
        game.step(CROSS_BASE + placement - NUM_SETS)
        return
    p, start = game.current, game.circled[game.current]
    cells = SETS[placement]
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
        self._target: tuple[tuple[int, int], int, int] | None = None

    @property
    def td(self) -> ValueBot:
        if self._td is None:
            self._td = (
                ValueBot(self._net) if self._net is not None else load_value_bot(shipped_td_model(2), 2)
            )
        return self._td

    def reply_values(self, game: Game, placements: list[int]) -> np.ndarray:
        """Our value of each placement after ``greedy``'s next turn, averaged over the sampled dice."""
        net = self.td.net
        me = game.current
        seed = [me, game.round, *game.circled, *game.crossed, *game.dice]
        faces = np.random.default_rng(seed).integers(0, 6, size=(self.samples, 3, NUM_DICE))
        exact: dict[tuple[int, int], float] = {}
        later: list[tuple[int, int, Game, float]] = []
        for i, placement in enumerate(placements):
            for j in range(self.samples):
                g, replied = rival_reply(game, placement, faces[j], self._rival)
                sign = -1.0 if replied else 1.0
                if g.over:
                    scores = np.array([[g.scores()[me], g.scores()[1 - me]]])
                    exact[i, j] = float(final_reward(scores, net.margin_coef)[0])
                else:
                    g.current = me if sign > 0 else 1 - me  # the mover of the position's last turn
                    later.append((i, j, g, sign))
        out = np.zeros((len(placements), self.samples))
        for (i, j), v in exact.items():
            out[i, j] = v
        if later:
            feats, _, _ = afterstates_many(
                [g for _, _, g, _ in later], [_NO_CELLS] * len(later), [_EMPTY] * len(later)
            )
            vals = net(feats)
            for (i, j, _, sign), v in zip(later, vals):
                out[i, j] = sign * float(v)
        return out.mean(axis=1)

    def choose(self, game: Game) -> int:
        """The placement to end this turn with (module doc)."""
        options = placement_options(game)
        values = self.td.net.values_of(game)
        td_values = np.array([values[o] for o in options], dtype=np.float64)
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
        turn = (game.current, game.round)
        if game.circles == 0 or self._target is None or self._target[0] != turn:
            self._target = (turn, self.choose(game), game.circled[game.current])
        _, placement, start = self._target
        if placement >= NUM_SETS:
            return CROSS_BASE + placement - NUM_SETS
        done = game.circled[game.current] & ~start
        left = tuple((r, c) for r, c in SETS[placement] if not done >> (5 * r + c) & 1)
        return first_step(game.counts, left, game.legal_actions()) if left else END_TURN

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def make_greedy_br(top: int = 4, samples: int = 16, window: float = 0.2) -> GreedyBestResponse:
    """``bots.make("greedy-br", top=4, samples=16, window=0.2)``: the best response to ``greedy`` (2 players)."""
    return GreedyBestResponse(top, samples, window)


make_greedy_br.table_sizes = lambda: (2,)  # type: ignore[attr-defined]

__all__ = [
    "GreedyBestResponse",
    "SampledTurn",
    "make_greedy_br",
    "placement_options",
    "play_placement",
    "rival_reply",
]
