"""The review of a solo game, exact: every decision and every roll valued by the solved solo game.

The solo table (:mod:`shelfie_env.solo`) gives every position an exact value: the expected final
score under optimal play from it (:class:`~shelfie_env.solo.turn.SoloTurn`). So, in **expected
final points**:

* **Loss** at a decision: the best action's value minus the played action's value (zero when the
  best, or an action tied with it, was played). The loss per decision is the player's error rate.
* **Luck** at a roll (a turn's first roll, a reroll): the value after it minus its exact average
  over everything it could have shown; it averages zero whatever the player does.
* **E*** (:func:`~shelfie_env.solo.optimum`): what perfect play scores on average from the empty
  board.

The values chain exactly, so a finished game started on a fresh turn obeys
``score = start value + luck - loss`` (the start value is E* for a new game): the score is E*,
plus what the dice gave, minus what the decisions cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from shelfie_env.arena.analysis.decisions import decision_row, words
from shelfie_env.game.actions import action_kind
from shelfie_env.game.engine import REROLL, ROLLS_PER_TURN, Game
from shelfie_env.solo.table import SoloTable, shipped_table
from shelfie_env.solo.turn import SoloTurn, best_action, end_values

SOLO_MISTAKE = 0.5
"""A solo decision that loses at least this many expected final points is a mistake."""
SOLO_BLUNDER = 2.0
"""... and at least this many, a blunder."""
SOLO_LUCKY = 3.0
"""A solo turn whose luck is at least this (in expected final points, either way) is marked lucky
or unlucky: about one standard deviation of a turn's luck (3.2 over 315 turns of ``solo-optimal``)."""
SOLO_VERY_LUCKY = 6.0
"""... and at least this (about two), very lucky or very unlucky."""
SOLO_TOP_MISTAKES = 3
"""How many of the biggest mistakes the review lists."""
SOLO_UNIT = (
    "expected final points: the score the player can expect at the end of the game, playing "
    "perfectly from there on"
)
TIE = 1e-9
"""Losses up to this are ties with the best action (zero)."""


def _fresh_turn(game: Game) -> bool:
    return not game.over and game.phase == REROLL and game.rolls_left == ROLLS_PER_TURN


def _board_value(table: SoloTable, game: Game) -> float:
    """The exact value of ``game``'s board before its turn's first roll."""
    circled = np.array([game.circled[0]], dtype=np.int64)
    return float(end_values(table, game.table, circled, game.crossed[0])[0])


def _kept_out(before: Game, action: int, after: Game) -> list[int]:
    """The faces a reroll threw: the dice after it less the ones it kept."""
    rest = list(after.dice)
    for i, d in enumerate(before.dice):
        if not action >> i & 1:
            rest.remove(d)
    return rest


def review_solo(
    games: Sequence[Game],
    actions: Sequence[int],
    name: str = "player 1",
    resigned: bool = False,
    table: SoloTable | None = None,
) -> dict[str, Any]:
    """The exact review (module doc) of the solo game whose positions are ``games`` (the first,
    then one after each of ``actions``), as a JSON-compatible dict shaped like
    :func:`~shelfie_env.arena.analysis.review.review_game`'s, in expected final points.

    ``ValueError`` names the problem: the game's points are not those the table was solved for.
    """
    table = table or shipped_table()
    values = [SoloTurn(table, g).action_values() for g in games]
    final = games[-1]

    def worth(j: int) -> float:  # the value of position j: its score once the game is over
        return float(final.score(0)) if games[j].over else max(values[j].values())

    decisions: list[dict[str, Any]] = []
    rolls: list[dict[str, Any]] = []
    start = games[0]
    if _fresh_turn(start):
        before = _board_value(table, start)
        rolls.append(_roll(start, 6, sorted(start.dice), None, before, worth(0)))
    else:
        before = worth(0)
    start_value = before
    for j, action in enumerate(actions):
        game, after = games[j], games[j + 1]
        decisions.append(_decision(j, game, action, values[j]))
        if action_kind(action) == "reroll":
            thrown = _kept_out(game, action, after)
            rolls.append(_roll(after, len(thrown), sorted(thrown), j, values[j][action], worth(j + 1)))
        elif _fresh_turn(after):
            rolls.append(_roll(after, 6, sorted(after.dice), j, _board_value(table, after), worth(j + 1)))
    luck = sum(r["luck"] for r in rolls)
    loss = sum(d["regret"] for d in decisions)
    score = final.score(0)
    player = {
        "seat": 0,
        "name": name,
        "score": score,
        "resigned": bool(resigned),
        "luck": luck,
        "adjusted": score - luck,
        "decisions": len(decisions),
        "regret": loss,
        "loss_per_decision": loss / len(decisions) if decisions else 0.0,
        "mistakes": sum(d["regret"] >= SOLO_MISTAKE for d in decisions),
        "blunders": sum(d["regret"] >= SOLO_BLUNDER for d in decisions),
    }
    turns: dict[int, dict[str, Any]] = {}
    for r in rolls:
        t = turns.setdefault(r["round"], {"round": r["round"], "seat": 0, "rolls": 0, "luck": 0.0})
        t["rolls"] += 1
        t["luck"] += r["luck"]
    for t in turns.values():
        t["mark"] = _mark(t["luck"])
    ranked = sorted((d for d in decisions if d["regret"] > 0), key=lambda d: (-d["regret"], d["move"]))
    return {
        "version": 1,
        "value": "exact",
        "unit": SOLO_UNIT,
        "num_players": 1,
        "optimum": table.optimum,
        "start_value": start_value,
        "thresholds": {
            "mistake": SOLO_MISTAKE,
            "blunder": SOLO_BLUNDER,
            "lucky": SOLO_LUCKY,
            "very_lucky": SOLO_VERY_LUCKY,
        },
        "players": [player],
        "turns": [turns[k] for k in sorted(turns)],
        "rolls": rolls,
        "decisions": decisions,
        "mistakes": ranked[:SOLO_TOP_MISTAKES],
    }


def _mark(luck: float) -> str:
    """``very lucky``, ``lucky``, ``unlucky``, ``very unlucky`` or ``""`` for a solo turn's luck."""
    size = abs(luck)
    if size < SOLO_LUCKY:
        return ""
    word = "lucky" if luck > 0 else "unlucky"
    return f"very {word}" if size >= SOLO_VERY_LUCKY else word


def _roll(
    game: Game, thrown: int, faces: Sequence[int], move: int | None, before: float, after: float
) -> dict[str, Any]:
    """One roll: the position it led to, what it threw, its value before and after."""
    return {
        "seat": 0,
        "round": game.round + 1,
        "roll": ROLLS_PER_TURN - game.rolls_left,
        "thrown": thrown,
        "faces": words(faces),
        "dice": words(game.dice),
        "move": None if move is None else move + 1,
        "before": before,
        "after": after,
        "luck": after - before,
    }


def _decision(j: int, game: Game, action: int, values: dict[int, float]) -> dict[str, Any]:
    """One decision: what was played and the best action, with their exact values."""
    if action not in values:
        raise ValueError(f"move {j + 1}: the solo values give action {action} no value")
    return decision_row(j, game, action, values, best_action(values, TIE), TIE)


__all__ = [
    "SOLO_BLUNDER",
    "SOLO_LUCKY",
    "SOLO_MISTAKE",
    "SOLO_TOP_MISTAKES",
    "SOLO_UNIT",
    "SOLO_VERY_LUCKY",
    "review_solo",
]
