"""A search one turn past our own: each candidate placement is valued by the rival's reply.

``td`` values the position a turn ends in with its network (one ply). At two
players the reply search (``td:depth=2``) re-values the ``width`` best
candidates of the placement being chosen by playing the rival's whole next turn
exactly: its first roll and both rerolls averaged exactly over the dice, its
keeps and its placement chosen by the same network from its own seat, and its
after-states valued by the network (or exactly, where they end the game)::

    Q2(ours) = − E_dice[ max over the rival's turn of V(rival's after-state) ]

The value is a rank reward from the mover's seat, so at two players the rival's
expected value is minus ours. Candidates outside the ``width`` best rank below
the searched ones. Rerolls keep the one-ply values (their keeps average over
hundreds of placements); the circle and cross choices use the search.
Numpy only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from shelfie_env.bots.learned.afterstate import AfterstateNet
from shelfie_env.bots.planner.dice import KEEP_INDEX, TRANSITION, best_keep_value
from shelfie_env.bots.planner.search import placement_values
from shelfie_env.game.engine import REROLL, Game, full_rows, placed_shelves
from shelfie_env.game.scoring import FULL

_FRESH = KEEP_INDEX[(0,) * 6]


def turn_value(v0: np.ndarray) -> float:
    """Expected value of a turn before its first roll, from the best placement's value per final dice."""
    v1 = best_keep_value(TRANSITION @ v0)
    v2 = best_keep_value(TRANSITION @ v1)
    return float(TRANSITION[_FRESH] @ v2)


def rival_turn(
    start: Game, player: int, circled: tuple[int, ...], crossed: tuple[int, ...], extra: int, row: int | None
) -> Game | None:
    """The position at the rival's turn start after ``player`` ends its turn with a placement.

    The placement circles ``extra`` (cells beyond the turn-start shelf ``circled``/``crossed``)
    or, with ``row``, crosses that row out. ``None`` when the game ends with it or the rival
    has no free cell (then nobody replies).
    """
    n = start.num_players
    g = start.clone()
    g.circled, g.crossed = placed_shelves(circled, crossed, player, extra, row)
    triggered = start.end_triggered or any(full_rows(g.circled[q] | g.crossed[q]) >= 2 for q in range(n))
    if triggered and player == n - 1:
        return None
    rival = (player + 1) % n
    if g.circled[rival] | g.crossed[rival] == FULL:
        return None
    g.current, g.phase, g.rolls_left, g.circles, g.end_triggered = rival, REROLL, 2, 0, triggered
    return g


class ReplySearch:
    """Two-ply values of a turn's placements under an after-state network (2 players)."""

    def __init__(self, net: AfterstateNet, width: int, context: Callable[[Game, np.ndarray], Any]) -> None:
        if width < 1:
            raise ValueError(f"width must be at least 1, got {width}")
        self.net = net
        self.width = width
        self.context = context

    def values(self, start: Game, turn: tuple[Any, ...], keys: list[tuple[int, int | None]]) -> np.ndarray:
        """``Q2`` of each placement ``(extra cells, row or None)``; NaN where nobody replies."""
        player, circled, crossed = turn
        games, where = [], []
        for i, (extra, row) in enumerate(keys):
            g = rival_turn(start, player, circled, crossed, extra, row)
            if g is not None:
                games.append(g)
                where.append(i)
        out = np.full(len(keys), np.nan)
        if games:
            out[where] = self.turn_start_values(games, [player] * len(games))
        return out

    def turn_start_values(self, games: list[Game], seats: list[int], chunk: int = 256) -> np.ndarray:
        """Seat ``seats[i]``'s value of ``games[i]`` at a turn's start (2 players): the mover's whole
        turn exactly over the dice with the network's after-state values, negated when the mover is
        the rival."""
        out = np.empty(len(games))
        for at in range(0, len(games), chunk):
            part = games[at : at + chunk]
            for j, (g, (v, _)) in enumerate(zip(part, self.net.turns_many(part))):
                value = turn_value(placement_values(self.context(g, v)))
                out[at + j] = value if g.current == seats[at + j] else -value
        return out

    def rerank(
        self,
        start: Game,
        turn: tuple[Any, ...],
        cache: dict[object, float],
        keys: list[tuple[int, int | None]],
        one_ply: np.ndarray,
    ) -> np.ndarray:
        """One-ply values of ``keys`` with the ``width`` best distinct ones replaced by ``Q2``.

        Those not searched rank just below the worst searched one; placements nobody
        replies to (game over) keep their one-ply value, which is exact there.
        """
        order = np.argsort(-one_ply, kind="stable")
        chosen: list[tuple[int, int | None]] = []
        for i in order:
            if keys[i] not in chosen:
                chosen.append(keys[i])
            if len(chosen) >= self.width:
                break
        todo = [k for k in chosen if ("q2", k) not in cache]
        if todo:
            for k, q in zip(todo, self.values(start, turn, todo)):
                cache[("q2", k)] = float(q)
        searched = {}
        for i in order:
            k = keys[i]
            if k in chosen and k not in searched:
                q = cache[("q2", k)]
                searched[k] = float(one_ply[i]) if np.isnan(q) else q
        floor = min(searched.values())
        out = np.minimum(one_ply, floor - 1e-6)
        for i, k in enumerate(keys):
            if k in searched:
                out[i] = searched[k]
        return out


__all__ = ["ReplySearch", "rival_turn", "turn_value"]
