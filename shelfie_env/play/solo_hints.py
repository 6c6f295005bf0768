"""Exact hints for the solo game: each option with what it is worth in expected final points.

The solo game is solved (:mod:`shelfie_env.solo`), so a solo hint is not an estimate: the value of
a move is the final score the player can expect after it, playing perfectly from then on
(:meth:`~shelfie_env.solo.turn.SoloTurn.action_values`). ``shelfie play`` and the web table give
these instead of the planner's hints when one person plays alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shelfie_env.arena.analysis.decisions import move_words
from shelfie_env.game.actions import action_kind, action_name
from shelfie_env.game.engine import Game
from shelfie_env.solo.table import SoloTable, shipped_table
from shelfie_env.solo.turn import SoloTurn, best_action

TIE = 1e-9
"""Values this close to the best are the best (the tie rule of ``solo-optimal``)."""
MAX_DECIMALS = 4
"""Values are printed with 2 decimals, or up to this many where 2 would print different ones alike."""


def ranked_values(game: Game, table: SoloTable | None = None) -> list[tuple[int, float]]:
    """Every legal action with its exact value, best first: ``solo-optimal``'s move, then the
    others by value (ties to the lower id)."""
    values = SoloTurn(table or shipped_table(), game).action_values()
    best = best_action(values, TIE)
    rest = sorted((a for a in values if a != best), key=lambda a: (-values[a], a))
    return [(a, values[a]) for a in (best, *rest)]


def _decimals(values: list[float]) -> int:
    """The fewest decimals (2 to :data:`MAX_DECIMALS`) that print different ``values`` differently."""
    distinct = len({round(v, MAX_DECIMALS) for v in values})
    for d in range(2, MAX_DECIMALS):
        if len({f"{v:.{d}f}" for v in values}) == distinct:
            return d
    return MAX_DECIMALS


def solo_hints(state: Mapping[str, Any] | Game, k: int = 3, table: SoloTable | None = None) -> list[dict[str, Any]]:
    """The ``k`` best moves of a solo game by exact value, best first, each ``{action, name, value,
    loss, reason, exact}``: ``value`` the expected final score after the move with perfect play
    afterwards, ``loss`` the best move's value minus it (0 for the best and the moves tied with it).

    ``ValueError`` names the problem: ``k`` below 1, a malformed state, a game of several players,
    a finished game, or points other than those the table was solved for.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    game = state if isinstance(state, Game) else Game.from_dict(state)
    if game.num_players != 1:
        raise ValueError(f"exact hints are for the solo game, not {game.num_players} players")
    if game.over:
        raise ValueError("the game is over: there is no move to hint")
    ranked = ranked_values(game, table)[:k]
    top = ranked[0][1]
    d = _decimals([v for _, v in ranked])
    out = []
    for a, v in ranked:
        loss = top - v if top - v > TIE else 0.0
        where = "the best" if loss == 0 else f"{loss:.{d}f} less than the best"
        does = f"{move_words(game, a)} " if action_kind(a) == "reroll" else ""
        out.append(
            {
                "action": int(a),
                "name": action_name(a),
                "value": v,
                "loss": loss,
                "reason": f"{does}(exact: {v:.{d}f} expected final points, {where})",
                "exact": True,
            }
        )
    return out


def solo_hint_answer(state: Mapping[str, Any], k: int) -> dict[str, Any]:
    """The web table's answer to a hint in a solo game: ``{"hints": [{action, name, value, loss,
    reason}, ...], "exact": true}`` (values in expected final points)."""
    keys = ("action", "name", "value", "loss", "reason")
    return {"hints": [{key: h[key] for key in keys} for h in solo_hints(state, k)], "exact": True}


__all__ = ["ranked_values", "solo_hint_answer", "solo_hints"]
