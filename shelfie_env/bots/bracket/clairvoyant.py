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

from collections.abc import Callable
from typing import Any

import numpy as np

from shelfie_env.bots.bracket.turn import Plan, plan_action, play_plan, reachable, tape_of
from shelfie_env.bots.greedy import GreedyBot
from shelfie_env.bots.learned.afterstate import AfterstateNet
from shelfie_env.bots.learned.value import load_value_bot, shipped_td_model
from shelfie_env.game.engine import REROLL, ROLLS_PER_TURN, Game


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
        scored = [(float(values[plan.placement]), plan) for plan in plans]
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
        self._plan: tuple[tuple[int, int, int], Plan, Game] | None = None
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
            result = outcome(roll_out(g, seat, policy, self._rival), seat)
            self.rollouts += 1
            if best is None or result > best[0]:
                best = (result, plan)
        assert best is not None
        return best[1]

    def act_game(self, game: Game) -> int:
        if game.num_players != 2:
            raise ValueError(
                f"clairvoyant plays 2-player games against greedy, the game has {game.num_players}"
            )
        if game.over:
            raise ValueError("no legal action: the game is over")
        key = (tape_of(game).seed, game.current, game.round)
        first = game.phase == REROLL and game.rolls_left == ROLLS_PER_TURN
        if not first and self._plan is not None and self._plan[0] == key:
            _, plan, start = self._plan
            return plan_action(game, plan, start)
        if not first:
            raise ValueError("clairvoyant plans a turn from its first decision; it was first asked mid-turn")
        plan = self.choose(game)
        self._plan = (key, plan, game.clone())
        return plan_action(game, plan, self._plan[2])

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def make_clairvoyant(width: int = 8, inner: int = 0) -> ClairvoyantBot:
    """``bots.make("clairvoyant", width=8)``: the tape-reading search against ``greedy`` (2 players);
    ``inner`` > 0 plays the rollouts with a clairvoyant of that width (a search two levels deep)."""
    return ClairvoyantBot(width, inner)


make_clairvoyant.table_sizes = lambda: (2,)  # type: ignore[attr-defined]
make_clairvoyant.needs_tape = True  # type: ignore[attr-defined]

__all__ = ["ClairvoyantBot", "TurnChooser", "make_clairvoyant", "outcome", "roll_out"]
