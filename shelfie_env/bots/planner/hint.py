"""Move hints: the planner's best actions with their values and a short reason.

``hint(state, k=3)`` takes a state dict (or a live
:class:`~shelfie_env.game.engine.Game`) and returns the ``k`` legal actions of
highest planner value, best first::

    [{"action": 93, "name": "circle trophy #4", "value": 11.2,
      "reason": "completes column 4 (locks it for rivals); then circle cat #1 (win chance ~63.4%)",
      "target": None, "chance": None}, ...]

``value`` is the planner's expected value of the action: solo, the expected
final score; with rivals, its win-chance scale (``10 * (P(win) - P(loss))``
roughly, ``50 * (...)`` exactly in the game's last turn). The reasons end with it
in words: ``EV 171.2`` solo, ``win chance ~63.4%`` (the planner's estimate) against one rival,
``rank edge +0.21`` (expected rank reward) against several. The figure has up to two more
decimals when its usual ones would print two different values of the hints returned together
alike (``rank edge +0.0015`` and ``+0.0014``), and never reads ``-0.00``.

A reroll that keeps dice toward a cell names it: ``target`` is that cell (``"book #3"``)
and ``chance`` the exact probability, over the dice it rolls, that the dice after this
roll can circle it; the reason says the same (``aiming for book #3: 52% chance to have
the dice for it after this roll``). Both are ``None`` for every other hint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from shelfie_env.bots.planner.dice import TRANSITION, circle_chance, counts_of, keep_index_of_reroll
from shelfie_env.bots.planner.evaluation import FINAL_TURN_SCALE, Context, Weights
from shelfie_env.bots.planner.search import (
    action_values,
    best_continuation,
    circle_outcome,
    placement_values,
    ranked_actions,
)
from shelfie_env.game.actions import (
    CROSS_BASE,
    END_TURN,
    FACE_NAMES,
    JOKER,
    NUM_DICE,
    STOP,
    SYMBOL_PLURALS,
    SYMBOLS,
    action_name,
)
from shelfie_env.game.engine import CIRCLE, CROSS, MAX_CIRCLES, REROLL, Game, full_rows
from shelfie_env.game.scoring import COL_MASKS, ROW_MASKS, shelf_cells


def hint(state: Mapping[str, Any] | Game, k: int = 3, weights: Weights | None = None) -> list[dict[str, Any]]:
    """Top-``k`` legal actions by planner value, each ``{action, name, value, reason, target, chance}``.

    Raises ``ValueError`` for a malformed state, a ``k`` below 1, or a finished game.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    game = state if isinstance(state, Game) else Game.from_dict(state)
    if game.over:
        raise ValueError("the game is over: there is no move to hint")
    weights = weights or Weights()
    values = action_values(game, weights)
    ranked = ranked_actions(values)[:k]
    explain = _Explainer(game, weights)
    explain.separate([float(values[a]) for a in ranked])
    out = []
    for a in ranked:
        reason, target, chance = explain(a, values[a])
        out.append(
            {
                "action": int(a),
                "name": action_name(a),
                "value": round(float(values[a]), 4) + 0.0,  # + 0.0: no -0.0
                "reason": reason,
                "target": target,
                "chance": chance,
            }
        )
    return out


def _cell_name(r: int, c: int) -> str:
    return f"{SYMBOLS[r]} #{c + 1}"


def _dice_count_words(counts: list[int] | tuple[int, ...]) -> str:
    """Dice given as counts per face, in words: ``"2 plants + 1 joker"`` (``"nothing"`` for none)."""
    parts = []
    for face in (*range(5), JOKER):
        n = counts[face]
        if n:
            name = FACE_NAMES[face] if face == JOKER else (SYMBOLS[face] if n == 1 else SYMBOL_PLURALS[face])
            parts.append(f"{n} {name}{'s' if face == JOKER and n > 1 else ''}")
    return " + ".join(parts) if parts else "nothing"


EXTRA_DECIMALS = 2
"""A hint's figure gets up to this many more decimals when its usual ones would print two different
values of the hints shown together alike."""


def _fixed(x: float, decimals: int, signed: bool = False) -> str:
    """``x`` with ``decimals`` decimals (a ``+`` before a positive one when ``signed``); a value that
    rounds to zero prints as ``0.00``, never ``-0.00``."""
    text = f"{x:+.{decimals}f}" if signed else f"{x:.{decimals}f}"
    return f"{0:.{decimals}f}" if float(text) == 0 else text


class _Explainer:
    """Builds the reason string of one action."""

    def __init__(self, game: Game, weights: Weights) -> None:
        self.game = game
        self.ctx = Context(game, weights)
        self._choice: np.ndarray | None = None
        self._extra = 0

    def _measure(self, value: float) -> tuple[str, float, int]:
        """The value as the figure a reason ends with: ``(label, figure, fewest decimals)``, the
        expected points alone, else the win chance (in %) or the rank edge it stands for."""
        ctx, w = self.ctx, self.ctx.weights
        if not ctx.rivals or (w.sigma <= 0 and not ctx.final_turn):
            return "EV", value, 1
        edge = min(1.0, max(-1.0, value / (FINAL_TURN_SCALE if ctx.final_turn else w.margin_scale)))
        if len(ctx.rivals) == 1:
            return "win chance", 100 * (1 + edge) / 2, 1
        return "rank edge", edge, 2

    def separate(self, values: list[float]) -> None:
        """Print the figures of ``values`` (the hints shown together) with up to
        :data:`EXTRA_DECIMALS` more decimals, the fewest that tell the different ones apart."""
        figures = sorted({self._measure(v)[1] for v in values})
        base = self._measure(values[0])[2] if values else 0
        for extra in range(EXTRA_DECIMALS + 1):
            texts = {_fixed(x, base + extra) for x in figures}
            if len(texts) == len({round(x, base + EXTRA_DECIMALS) for x in figures}):
                break
        self._extra = extra if values else 0

    def _ev(self, value: float) -> str:
        label, figure, decimals = self._measure(value)
        text = _fixed(figure, decimals + self._extra, signed=label == "rank edge")
        return f"win chance ~{text}%" if label == "win chance" else f"{label} {text}"

    def __call__(self, action: int, value: float) -> tuple[str, str | None, float | None]:
        """``(reason, target cell, chance)``; the last two only for a reroll that aims at a cell."""
        g = self.game
        if g.phase == REROLL:
            return self._reroll(action, value)
        if g.phase == CIRCLE:
            return self._circle(action, value), None, None
        if g.phase == CROSS:
            return self._cross(action, value), None, None
        return "", None, None

    def _reroll(self, action: int, value: float) -> tuple[str, str | None, float | None]:
        if self._choice is None:
            _, self._choice = placement_values(self.ctx, with_choice=True)
        dice = self.game.dice
        if action == STOP:
            choice = int(self._choice[_final_index(dice)])
            plan = ", ".join(_cell_name(r, c) for r, c in shelf_cells(choice)) if choice else "a cross-out"
            return f"keeps these dice and plays {plan} ({self._ev(value)})", None, None
        keep = keep_index_of_reroll(dice, action)
        kept = [0] * 6
        for i, d in enumerate(dice):
            if not action >> i & 1:
                kept[d] += 1
        rolled = NUM_DICE - sum(kept)
        # After one roll from this keep: how likely is each cell part of the best play?
        prob = TRANSITION[keep]
        cell_p = np.zeros(25)
        for b in range(25):
            cell_p[b] = prob[(self._choice >> b & 1) == 1].sum()
        if rolled == NUM_DICE:
            likely = int(cell_p.argmax())
            return (
                f"rerolls all six dice; the cell most often in the best play after it is "
                f"{_cell_name(*divmod(likely, 5))} (after {_percent(cell_p[likely])} of rolls) ({self._ev(value)})",
                None,
                None,
            )
        target = self._target(kept, cell_p)
        if target < 0:
            return f"keeps {_dice_count_words(kept)}, rerolls {rolled} ({self._ev(value)})", None, None
        name = _cell_name(*divmod(target, 5))
        chance = circle_chance(kept, *divmod(target, 5))
        return (
            f"keeps {_dice_count_words(kept)}, rerolls {rolled}, aiming for {name}: "
            f"{_percent(chance)} chance to have the dice for it after this roll ({self._ev(value)})",
            name,
            round(chance, 4),
        )

    def _target(self, kept: list[int], cell_p: np.ndarray) -> int:
        """The cell the keep chases: likely, and needing more dice than are kept."""
        best, score = -1, 0.0
        for b in range(25):
            r, c = divmod(b, 5)
            have = kept[r] + min(kept[JOKER], 1) if c >= 1 else kept[r]
            if cell_p[b] > 0.05 and have < c + 1 and kept[r] > 0:
                s = cell_p[b] * (c + 1)
                if s > score:
                    best, score = b, s
        return best

    def _circle(self, action: int, value: float) -> str:
        g, ctx = self.game, self.ctx
        if action == END_TURN:
            return f"stops circling: another circle would not raise the value ({self._ev(value)})"
        rest, bit = circle_outcome(g, action)
        _, best = best_continuation(ctx, bit, rest, MAX_CIRCLES - g.circles - 1)
        r, c = divmod(bit.bit_length() - 1, 5)
        notes = self._line_notes(ctx.circled, ctx.circled | bit, r, c)
        extra = [_cell_name(*rc) for rc in shelf_cells(best & ~bit)]
        words = [f"{SYMBOLS[r]} #{c + 1} is worth {g.points[r][c]} points"] if not notes else notes
        if extra:
            words.append("then circle " + " and ".join(extra))
        return "; ".join(words) + f" ({self._ev(value)})"

    def _line_notes(self, before: int, after: int, r: int, c: int) -> list[str]:
        notes = []
        for kind, _idx, mask in (("row", r, ROW_MASKS[r]), ("column", c, COL_MASKS[c])):
            label = f"the {SYMBOLS[r]} row" if kind == "row" else f"column {c + 1}"
            n_before, n_after = (before & mask).bit_count(), (after & mask).bit_count()
            if n_after == 5:
                rivals = " (locks it for rivals)" if self.game.num_players > 1 else ""
                notes.append(f"completes {label}{rivals}")
            elif n_after == 3 and n_before == 2:
                notes.append(f"makes {label} score (3rd circle)")
            elif n_after > 3:
                notes.append(f"adds {self.game.points[r][c]} points to {label}")
        return notes

    def _cross(self, action: int, value: float) -> str:
        g, ctx = self.game, self.ctx
        r = action - CROSS_BASE
        lost = (ctx.free & ROW_MASKS[r]).bit_count()
        crossed = ctx.crossed | (ctx.free & ROW_MASKS[r])
        ends = ""
        if not g.end_triggered and full_rows(ctx.circled | crossed) >= 2:
            ends = "; triggers the end of the game"
        return (
            f"nothing can be circled: crossing the {SYMBOL_PLURALS[r]} loses {lost} free cell(s){ends} "
            f"({self._ev(value)})"
        )


def _percent(p: float) -> str:
    """A chance in whole percent, never rounded to a flat 0% or 100% when it is neither."""
    if 0 < p < 0.005:
        return "<1%"
    if 0.995 < p < 1:
        return ">99%"
    return f"{p:.0%}"


def _final_index(dice: list[int]) -> int:
    from shelfie_env.bots.planner.dice import FINAL_INDEX

    return FINAL_INDEX[counts_of(dice)]


__all__ = ["hint"]
