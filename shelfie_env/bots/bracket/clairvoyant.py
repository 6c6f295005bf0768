"""``clairvoyant``: a bot that reads the dice tape, its own future dice and its rival's, and plays ``greedy`` knowing so.

The ceiling of the bracket against ``greedy`` (docs/bracket.md). With common dice
(:class:`~shelfie_env.game.dice.DiceTape`) every face of the game is fixed in advance and
``greedy`` is deterministic, so from any position the rest of a game against ``greedy`` is a
deterministic single-player problem over the bot's own choices. The bot searches it:

* **Its turn, whole.** At a turn's first decision it lists every placement the turn can end
  with on the dice the tape will bring (:func:`~shelfie_env.bots.bracket.turn.reachable`:
  every keep, twice) and values each with the shipped ``td`` after-state network.
* **Rollouts.** The ``width`` best placements by that value are each played out to the end
  of the game on a copy: ``greedy`` plays its own turns exactly as it will, and the bot's later
  turns are played by the *base policy*, the same turn-wide choice of the best placement by
  ``td``'s value (clairvoyant within each turn, no further rollouts). The placement whose
  game ends best wins: first the result (win, tie, loss), then the final margin; ties go to
  ``td``'s order.
* **Then it follows its plan** (the keeps and circles that reach that placement) and plans
  again at its next turn.

Its answer is a function of the position (and the tape): before the turn's first circle the
turn's start is known (the tape's first roll on the shelves as they stand), so a position on the
plan made there follows it; a position off that plan, or one after a circle (the cells circled
this turn are not part of a position), is planned from where it stands, among the placements still
open (ending the turn now among them): the plan's own rest is one of the candidates and keeps its
rollout's result, so the choice still finishes at least as well. Each rollout's result is
remembered by the position it starts from.

Because the base policy's own choice is always among the candidates and the game is
deterministic, each turn's choice finishes at least as well as the rollout that chose it
(a rollout algorithm: the result never falls below the base policy's from the same position).
It is not the exact optimum: later turns are searched only by the base policy. ``width=0``
plays the base policy itself; ``inner=k`` plays the rollouts with a clairvoyant of width ``k``
instead of the base policy (two levels of search, its own choice always a candidate: the same
guarantee against that stronger policy, at about ``k`` x the turns left times the cost). It
refuses a game whose dice come from a stream.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from shelfie_env.bots.bracket.turn import (
    STAY,
    Plan,
    on_plan,
    plan_action,
    play_plan,
    position_of,
    reachable,
    tape_of,
    turn_start,
)
from shelfie_env.bots.greedy import GreedyBot
from shelfie_env.bots.learned.afterstate import AfterstateNet
from shelfie_env.bots.learned.value import load_value_bot, shipped_td_model, stay_value
from shelfie_env.game.engine import CIRCLE, Game


def outcome(scores: list[int], seat: int) -> tuple[int, int]:
    """How a finished game ended for ``seat``: (+1 win / 0 tie / −1 loss against the best rival, margin)."""
    rival = max(s for q, s in enumerate(scores) if q != seat)
    margin = scores[seat] - rival
    return (int(np.sign(margin)), margin)


class TurnChooser:
    """The base policy: at each own turn, the reachable placement of best ``td`` value (dice known)."""

    def __init__(self, net: AfterstateNet) -> None:
        self.net = net

    def ranked(self, game: Game) -> list[tuple[float, Plan]]:
        """Every reachable placement of this turn with its ``td`` value, best first (ties: ``SETS`` order)."""
        plans = reachable(game)
        values = self.net.values_of(game)
        stay = stay_value(self.net, game) if game.phase == CIRCLE and game.circles else None
        scored = [(float(stay if plan.placement == STAY else values[plan.placement]), plan) for plan in plans]
        order = sorted(range(len(scored)), key=lambda i: -scored[i][0])
        return [scored[i] for i in order]

    def best(self, game: Game) -> Plan:
        return self.ranked(game)[0][1]


def roll_out(game: Game, seat: int, choose: Callable[[Game], Plan], rival: GreedyBot) -> list[int]:
    """Play ``game`` (changed in place) to its end: ``seat``'s turns by ``choose``, every other seat by ``rival``."""
    while not game.over:
        if game.current == seat:
            play_plan(game, choose(game))
        else:
            game.step(rival.act_game(game))
    return game.scores()


class ClairvoyantBot:
    """Reads the tape and searches the rest of the game against ``greedy`` (module doc)."""

    name = "clairvoyant"

    def __init__(self, width: int = 8, inner: int = 0, net: AfterstateNet | None = None) -> None:
        if width < 0 or inner < 0:
            raise ValueError(f"width and inner must be >= 0, got {width} and {inner}")
        self.width, self.inner = int(width), int(inner)
        self._net = net
        self._rival = GreedyBot()
        self._plans: OrderedDict[tuple[Any, ...], Plan] = OrderedDict()
        """Plans by the position they were made at (:func:`~.turn.position_of`)."""
        self._results: OrderedDict[tuple[Any, ...], tuple[int, int]] = OrderedDict()
        """Rollout results by the position each rollout starts from."""
        self.rollouts = 0
        """Rollouts played so far (a measure of the search's cost)."""

    @property
    def chooser(self) -> TurnChooser:
        if self._net is None:
            self._net = load_value_bot(shipped_td_model(2), 2).net
        return TurnChooser(self._net)

    def choose(self, game: Game) -> Plan:
        """The placement (with its plan) the search picks for this turn (module doc)."""
        chooser = self.chooser
        ranked = chooser.ranked(game)
        if self.width == 0 or len(ranked) == 1:
            return ranked[0][1]
        seat = game.current
        policy = chooser.best
        if self.inner:
            inner = ClairvoyantBot(self.inner, net=self._net)
            inner._rival = self._rival
            policy = inner.choose
        candidates = [plan for _, plan in ranked[: self.width]]
        if self.inner:  # the rollout policy's own choice is always a candidate
            own = policy(game)
            if all(c.placement != own.placement for c in candidates):
                candidates.append(own)
        best: tuple[tuple[int, int], Plan] | None = None
        for plan in candidates:
            g = game.clone()
            play_plan(g, plan)
            result = self._result(g, seat, policy)
            if best is None or result > best[0]:
                best = (result, plan)
        assert best is not None
        return best[1]

    def _result(self, game: Game, seat: int, policy: Callable[[Game], Plan]) -> tuple[int, int]:
        """:func:`outcome` of the rollout from ``game`` (played on it), remembered by its position."""
        key = (seat, position_of(game))
        result = self._results.pop(key, None)
        if result is None:
            result = outcome(roll_out(game, seat, policy, self._rival), seat)
            self.rollouts += 1
        self._results[key] = result
        while len(self._results) > 4096:
            self._results.popitem(last=False)
        return result

    def planned(self, game: Game) -> Plan:
        """:meth:`choose` of ``game``, remembered by its position."""
        key = position_of(game)
        plan = self._plans.pop(key, None)
        if plan is None:
            plan = self.choose(game)
        self._plans[key] = plan
        while len(self._plans) > 16:
            self._plans.popitem(last=False)
        return plan

    def plan_for(self, game: Game) -> tuple[Plan, Game]:
        """The plan the bot follows at ``game`` and the position it was made at (module doc): the plan
        of the turn's start when ``game`` lies on it, else one made at ``game``."""
        if game.phase != CIRCLE or game.circles == 0:
            start = turn_start(game)
            plan = self.planned(start)
            if on_plan(start, plan, game):
                return plan, start
        return self.planned(game), game

    def act_game(self, game: Game) -> int:
        if game.num_players != 2:
            raise ValueError(
                f"clairvoyant plays 2-player games against greedy, the game has {game.num_players}"
            )
        if game.over:
            raise ValueError("no legal action: the game is over")
        tape_of(game)  # stream dice: nothing to read ahead
        plan, start = self.plan_for(game)
        return plan_action(game, plan, start)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def make_clairvoyant(width: int = 8, inner: int = 0) -> ClairvoyantBot:
    """``bots.make("clairvoyant", width=8)``: the tape-reading search against ``greedy`` (2 players);
    ``inner`` > 0 plays the rollouts with a clairvoyant of that width (a search two levels deep)."""
    return ClairvoyantBot(width, inner)


make_clairvoyant.table_sizes = lambda: (2,)  # type: ignore[attr-defined]
make_clairvoyant.needs_tape = True  # type: ignore[attr-defined]

__all__ = ["ClairvoyantBot", "TurnChooser", "make_clairvoyant", "outcome", "roll_out"]
