"""A finished game's review: the luck of every roll, the regret of every decision, the biggest mistakes.

The way a backgammon player reads gnubg's analysis of a match:

* **Luck** (:mod:`.luck`): at each roll, the value of the position after it minus
  the exact average over everything the roll could have shown. A turn's luck is
  the sum over its rolls (the first roll and up to two rerolls).
* **Regret**: at each decision, the value of the best action minus the value of
  the action played, both by the value function's exact search over the dice
  (:func:`~shelfie_env.bots.planner.search.action_values`, the search ``planner``
  and ``td`` play with). Zero when the best action was played.
* **Luck-adjusted result** (:func:`.luck.corrected_results`): the raw result minus
  the player's own luck plus their share of the rivals'.

Every figure is in **rank-reward units**: the rank reward is +1 for beating every
rival and −1 for finishing behind all of them ((rivals beaten − rivals ahead) /
(n − 1)). At two players it is the chance to win minus the chance to lose, so
0.10 is about 5 percentage points of win chance.

The game is replayed from its first position with the dice it had: each roll's
faces are read from the position stored after the move that threw them (a
reroll's new dice are the stored dice minus the kept ones), and every move must
be legal and lead to the stored position.

A solo game has no rivals and no rank reward; it is solved, so its review is exact, in expected
final points (:mod:`.solo_review`).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from shelfie_env.arena.analysis.decisions import decision_row, move_words, words
from shelfie_env.arena.luck import ChanceEvent, LuckTracker, corrected_results
from shelfie_env.arena.values import PlannerValue, TDValue, make_value
from shelfie_env.bots.learned.value import LearnedContext
from shelfie_env.bots.planner.search import action_values, ranked_actions
from shelfie_env.envs.common import final_rewards
from shelfie_env.game.actions import action_name, action_name_or_id
from shelfie_env.game.engine import REROLL, ROLLS_PER_TURN, Game
from shelfie_env.game.replay_check import ReplayError, differences, follow

REVIEW_VERSION = 1
MISTAKE = 0.02
"""A decision with at least this regret counts as a mistake (one point of win chance at two players)."""
BLUNDER = 0.10
"""A decision with at least this regret counts as a blunder (five points of win chance at two players)."""
LUCKY = 0.2
"""A turn whose luck is at least this (in size) is marked lucky or unlucky."""
VERY_LUCKY = 0.4
"""... and at least this, very lucky or very unlucky."""
TOP_MISTAKES = 3

UNIT = (
    "the rank reward: +1 for beating every rival, -1 for finishing behind all of them; "
    "at two players it is the chance to win minus the chance to lose, so 0.10 is about "
    "5 percentage points of win chance"
)

_VALUES: dict[tuple[str, int], TDValue | PlannerValue] = {}


def value_function(spec: str, num_players: int) -> TDValue | PlannerValue:
    """The value function ``spec`` (``td``, ``td:path=MODEL`` or ``planner``), built once per table size."""
    key = (spec, num_players)
    if key not in _VALUES:
        _VALUES[key] = make_value(spec, num_players)
    return _VALUES[key]


def luck_mark(luck: float) -> str:
    """``very lucky``, ``lucky``, ``unlucky``, ``very unlucky`` or ``""`` for a turn's luck."""
    size = abs(luck)
    if size < LUCKY:
        return ""
    word = "lucky" if luck > 0 else "unlucky"
    return f"very {word}" if size >= VERY_LUCKY else word


def _reusable(ctx: Any, game: Game) -> bool:
    if ctx is None:
        return False
    if isinstance(ctx, LearnedContext):
        return ctx.matches(game)
    return bool(ctx.matches(game, ctx.weights))


def _thrown_faces(before: Game, action: int, after: Game) -> list[int]:
    """The faces a reroll brought: the dice after it minus the ones it kept."""
    rest = list(after.dice)
    for i, d in enumerate(before.dice):
        if not action >> i & 1:
            rest.remove(d)
    return rest


def _positions(
    initial: Game | Mapping[str, Any], actions: Sequence[int], states: Sequence[Game | Mapping[str, Any]]
) -> list[Game]:
    """The game's positions (the first, then one after each move), stepped with the recorded dice."""
    game = initial.clone() if isinstance(initial, Game) else Game.from_dict(initial)
    stored = [s if isinstance(s, Game) else Game.from_dict(s) for s in states]
    if len(stored) != len(actions):
        raise ValueError(
            f"a review needs one position after each move: {len(stored)} positions for {len(actions)} moves"
        )
    out = [game]
    for j, (raw, want) in enumerate(zip(actions, stored)):
        try:
            if isinstance(raw, bool):
                raise TypeError
            action = operator.index(raw)  # ints, numpy integers; not floats, strings or booleans
        except TypeError:
            raise ValueError(f"move {j + 1}: {raw!r} is not an action id") from None
        try:
            nxt = follow(out[-1], action, want.dice)
        except ReplayError as exc:
            raise ValueError(f"move {j + 1} ({action_name_or_id(action)}): {exc}") from None
        assert nxt is not None  # the dice are known: they are the stored position's
        wrong = differences(nxt, want)
        if wrong:
            raise ValueError(
                f"move {j + 1} ({action_name(action)}): the position stored after it does not follow "
                f"from the move (it differs in {', '.join(wrong)})"
            )
        out.append(nxt)
    return out


def review_game(
    initial: Game | Mapping[str, Any],
    actions: Sequence[int],
    states: Sequence[Game | Mapping[str, Any]],
    value: str | TDValue | PlannerValue = "td",
    names: Sequence[str] | None = None,
    resigned: int | None = None,
) -> dict[str, Any]:
    """The review of a finished game (module doc) as a JSON-compatible dict.

    ``initial`` is the first position, ``actions`` the action ids played from it and
    ``states`` the position after each of them (the dice they rolled are read from
    these). ``value`` is ``td`` (default), ``td:path=MODEL``, ``planner`` or a value
    function object. ``resigned``: the seat whose resignation ended the game after these
    moves (it finishes last; the others are ranked by their scores then). A solo game gets
    the exact review of :mod:`.solo_review` (in expected final points; ``value`` is not used).
    ``ValueError`` says what is wrong: a game that is not over, a move that is illegal or
    does not lead to the stored position.
    """
    games = _positions(initial, actions, states)
    start, final = games[0], games[-1]
    n = start.num_players
    if resigned is not None and (isinstance(resigned, bool) or resigned not in range(n)):
        raise ValueError(f"resigned must be a seat 0..{n - 1}, got {resigned!r}")
    if not final.over and resigned is None:
        raise ValueError("the game is not over: a review needs a finished game")
    names = list(names) if names is not None else [f"player {s + 1}" for s in range(n)]
    if len(names) != n:
        raise ValueError(f"{len(names)} names for {n} players")
    if n == 1:  # the solo game is solved: its review is exact, whatever ``value`` says
        from shelfie_env.arena.analysis.solo_review import review_solo

        return review_solo(games, [int(a) for a in actions], names[0], resigned is not None)
    judge = value_function(value, n) if isinstance(value, str) else value

    tracker = LuckTracker(judge, start)
    rolls: list[dict[str, Any]] = []
    fresh_start = start.phase == REROLL and start.rolls_left == ROLLS_PER_TURN
    if not fresh_start:  # the first position is mid-turn: no roll was seen before it
        tracker.events.clear()
    else:
        rolls.append(_roll(tracker.events[0], start.dice, start.dice, None))
    decisions: list[dict[str, Any]] = []
    ctx: Any = None
    for j, action in enumerate(int(a) for a in actions):  # _positions checked they are action ids
        before, after = games[j], games[j + 1]
        if not _reusable(ctx, before):
            ctx = judge.context(before)
        decisions.append(_decision(j, before, action, judge, ctx))
        seen = len(tracker.events)
        tracker.before(before, action)
        tracker.after(after)
        for event in tracker.events[seen:]:
            if event.roll == 0:
                rolls.append(_roll(event, after.dice, after.dice, j))
            else:
                rolls.append(_roll(event, _thrown_faces(before, action, after), after.dice, j))

    ranked = list(final.scores())
    if resigned is not None:  # the seat that resigned finishes behind everyone
        ranked[resigned] = min(ranked) - 1
    raw = final_rewards(ranked, "rank")
    own = tracker.own_luck()
    corrected = corrected_results(raw, tracker.events)
    players = []
    for s in range(n):
        mine = [d for d in decisions if d["seat"] == s]
        players.append(
            {
                "seat": s,
                "name": names[s],
                "score": final.scores()[s],
                "result": raw[s],
                "luck": own[s],
                "adjusted": corrected[s],
                "decisions": len(mine),
                "regret": sum(d["regret"] for d in mine),
                "mistakes": sum(d["regret"] >= MISTAKE for d in mine),
                "blunders": sum(d["regret"] >= BLUNDER for d in mine),
            }
        )
    ranked = sorted((d for d in decisions if d["regret"] > 1e-9), key=lambda d: (-d["regret"], d["move"]))
    return {
        "version": REVIEW_VERSION,
        "value": judge.name,
        "unit": UNIT,
        "num_players": n,
        "thresholds": {"mistake": MISTAKE, "blunder": BLUNDER, "lucky": LUCKY, "very_lucky": VERY_LUCKY},
        "players": players,
        "turns": _turns(rolls),
        "rolls": rolls,
        "decisions": decisions,
        "mistakes": ranked[:TOP_MISTAKES],
    }


def _roll(event: ChanceEvent, faces: Sequence[int], dice: Sequence[int], move: int | None) -> dict[str, Any]:
    return {
        "seat": event.seat,
        "round": event.turn + 1,
        "roll": event.roll,
        "thrown": event.thrown,
        "faces": words(sorted(faces)),
        "dice": words(dice),
        "move": None if move is None else move + 1,
        "before": event.before,
        "after": event.after,
        "luck": event.luck,
    }


def _turns(rolls: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each turn's luck: the sum over its rolls, marked when large (:func:`luck_mark`)."""
    turns: dict[tuple[int, int], dict[str, Any]] = {}
    for r in rolls:
        t = turns.setdefault(
            (r["round"], r["seat"]), {"round": r["round"], "seat": r["seat"], "rolls": 0, "luck": 0.0}
        )
        t["rolls"] += 1
        t["luck"] += r["luck"]
    out = sorted(turns.values(), key=lambda t: (t["round"], t["seat"]))
    for t in out:
        t["mark"] = luck_mark(t["luck"])
    return out


def _decision(j: int, game: Game, action: int, judge: TDValue | PlannerValue, ctx: Any) -> dict[str, Any]:
    values = {a: judge.to_rank(v) for a, v in action_values(game, ctx=ctx).items()}
    if action not in values:  # follow() checked legality; this would be a search that skips a legal move
        raise ValueError(f"move {j + 1} ({action_name(action)}): the search gives it no value")
    return decision_row(j, game, action, values, ranked_actions(values)[0])


__all__ = ["BLUNDER", "MISTAKE", "UNIT", "luck_mark", "move_words", "review_game", "value_function"]
