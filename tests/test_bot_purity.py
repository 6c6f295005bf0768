"""Every shipped bot's ``act(state)`` is a function of the state.

Positions are taken from several games (tape dice, seats drawn from ``greedy``, ``random`` and
``td``) and cover every phase: reroll with two and one rerolls left, circle with 0, 1 and 2
circles made this turn, cross. Each bot answers them

* (a) with a fresh bot per position,
* (b) with one bot, in game order, through ``act_game`` on a live game that is stepped after the
  answer (as an environment does),
* (c) with that same bot, through ``act(state)``, in two shuffled orders,

and every answer must be legal and the same in (a), (b) and (c). Slow bots get small budgets
(their options) and few positions.

Bots that draw from a seeded generator stream (``random``, ``openspiel-mcts``; ``ppo`` with
``deterministic=false`` too) answer by design with the next draw, so their answer depends on the
decisions made before: for them a fresh seeded bot must give the same legal answer twice, and a
reused one legal answers. ``rollout`` deals a decision's rollouts from dice tapes seeded by a hash
of the position, so it is held to the same answers as every other bot; its ``time`` budget is set
out of reach here, since how many rollouts fit in a time budget depends on the machine.
"""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from shelfie_env import bots
from shelfie_env.bots.learned.card import models_dir
from shelfie_env.bots.spec import build_bot, parse_spec
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import Game

SPECS: dict[str, str] = {
    "clairvoyant": "clairvoyant:width=2",
    "greedy": "greedy",
    "greedy-br": "greedy-br:top=3,samples=4",
    "openspiel-mcts": "openspiel-mcts:simulations=6,seed=0",
    "planner": "planner",
    "ppo": "ppo",
    "ppo-flat": "ppo-flat",
    "random": "random:seed=0",
    "rollout": "rollout:rollouts=2,width=2,time=60",
    "td": "td",
}
"""The spec some shipped bots are built from here (small budgets for the slow ones, seeds for the
stream ones); the others play with their default options."""

EXTRA_SPECS: dict[str, tuple[int, ...]] = {
    "td:depth=2": (2,),
    f"ppo:path={models_dir() / 'ppo_afterstate_2p.npz'}": (2,),
}
"""Other shipped configurations, with their table sizes: the reply search and the after-state PPO."""

STREAM = {"random", "openspiel-mcts"}
"""Bots that answer with the next draw of their seeded generator (by design)."""

POSITIONS = {"clairvoyant": 6, "greedy-br": 10, "openspiel-mcts": 8, "td:depth=2": 12}
"""Positions asked of the slow bots (and of the levels, ``td`` with noise: :data:`LEVEL_POSITIONS`);
the others get :data:`DEFAULT_POSITIONS`."""
DEFAULT_POSITIONS = 20
LEVEL_POSITIONS = 8
LATE = {"rollout"}
"""Bots asked one position of each of :data:`LATE_CATEGORIES`, the last of the games' (their cost
grows with the game left to play)."""
LATE_CATEGORIES = ("reroll-2", "circle-1", "cross")

NEEDS = {"openspiel-mcts": "pyspiel"}
"""Optional extras: the module a bot needs (the bot is skipped without it)."""


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on one thread (with ``threadpoolctl``): the networks' products here are small, and
    a multi-threaded BLAS on busy shared cores spins and makes the module several times slower."""
    from shelfie_env.bots.rollout.rollouts import one_blas_thread as one_thread

    with one_thread():
        yield


CATEGORIES = ("reroll-2", "reroll-1", "circle-0", "circle-1", "circle-2", "cross")


def _category(state: dict[str, Any]) -> str:
    phase = state["phase"]
    if phase == "reroll":
        return f"reroll-{state['rolls_left']}"
    if phase == "circle":
        return f"circle-{state['circles_this_turn']}"
    return phase


@functools.cache
def _game_positions(players: int) -> tuple[tuple[tuple[int, int, int], dict[str, Any]], ...]:
    """``((game, round, seat), state)`` of every decision of a few mixed games, in game order."""
    out = []
    for g, seed in enumerate((41, 42, 43, 44)):
        rng = random.Random(seed)
        names = [rng.choice(("greedy", "random", "td")) for _ in range(players)]
        seats = [bots.make(n, seed=seed) if n == "random" else bots.make(n) for n in names]
        game = Game.new(players, rng=DiceTape(seed))
        while not game.over:
            out.append(((g, game.round, game.current), game.to_dict()))
            game.step(bots.act_on_game(seats[game.current], game))
    return tuple(out)


def _late_positions(players: int) -> list[dict[str, Any]]:
    """One position of each of :data:`LATE_CATEGORIES`: the one with the fewest decisions left in its game."""
    positions = _game_positions(players)
    left = [sum(t[0] == turn[0] for t, _ in positions[i:]) for i, (turn, _) in enumerate(positions)]
    best: dict[str, int] = {}
    for i, (_, state) in enumerate(positions):
        cat = _category(state)
        if cat in LATE_CATEGORIES and (cat not in best or left[i] <= left[best[cat]]):
            best[cat] = i
    return [positions[i][1] for i in sorted(best.values())]


def _positions(players: int, count: int) -> list[dict[str, Any]]:
    """About ``count`` positions in game order, made of whole turns and covering every category."""
    turns: dict[tuple[int, int, int], list[dict[str, Any]]] = {}
    for turn, state in _game_positions(players):
        turns.setdefault(turn, []).append(state)
    order = list(turns)
    random.Random(players).shuffle(order)
    picked: set[tuple[int, int, int]] = set()
    seen: set[str] = set()
    for cat in CATEGORIES:  # first a turn for each category not covered yet
        if cat in seen:
            continue
        turn = next(t for t in order if any(_category(s) == cat for s in turns[t]))
        picked.add(turn)
        seen |= {_category(s) for s in turns[turn]}
    for turn in order:
        if sum(len(turns[t]) for t in picked) >= count:
            break
        picked.add(turn)
    return [s for t in sorted(picked) for s in turns[t]]


def _cases() -> list[Any]:
    names = sorted(bots.available())
    cases = []
    for name in names:
        for n in (2, 3, 4):
            if n in bots.table_sizes(name):
                cases.append(pytest.param(SPECS.get(name, name), n, id=f"{name}-{n}p"))
    for spec, sizes in EXTRA_SPECS.items():
        for n in sizes:
            cases.append(pytest.param(spec, n, id=f"{spec.split('/')[-1]}-{n}p"))
    return cases


def _build(spec: str) -> Any:
    name = parse_spec(spec)[0]
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    return build_bot(spec)


def _fresh_maker(spec: str, players: int) -> Callable[[], Any]:
    """Fresh bots of ``spec``: copies of one that has loaded its model for ``players`` and decided nothing."""
    prototype = _build(spec)
    for load in ("model_for", "base"):  # the shipped models' wrappers and the levels load by table size
        if callable(getattr(prototype, load, None)):
            getattr(prototype, load)(players)
    return lambda: copy.deepcopy(prototype)


def _count(spec: str) -> int:
    name = parse_spec(spec)[0]
    default = LEVEL_POSITIONS if name.startswith("level-") else DEFAULT_POSITIONS
    return POSITIONS.get(spec, POSITIONS.get(name, default))


def _states(spec: str, players: int) -> list[dict[str, Any]]:
    if parse_spec(spec)[0] in LATE:
        return _late_positions(players)
    return _positions(players, _count(spec))


@functools.cache
def _fresh_answers(spec: str, players: int) -> tuple[int | str, ...]:
    """(a): a fresh bot's answer to each of :func:`_states`."""
    fresh = _fresh_maker(spec, players)
    return tuple(_answer(lambda s=s: fresh().act(s)) for s in _states(spec, players))


def _answer(ask: Callable[[], int]) -> int | str:
    """The action ``ask`` returns, or the error it raises, as text."""
    try:
        return int(ask())
    except Exception as exc:  # compared and reported with the answers
        return f"raises {type(exc).__name__}: {exc}"


def _describe(state: dict[str, Any]) -> str:
    return (
        f"seat {state['current_player']} round {state['round']} {_category(state)} "
        f"dice {state['dice']} spent {state['spent']}"
    )


def test_the_positions_cover_every_phase() -> None:
    for n in (2, 3, 4):
        assert {_category(s) for s in _late_positions(n)} == set(LATE_CATEGORIES)
        for count in (4, DEFAULT_POSITIONS):
            assert {_category(s) for s in _positions(n, count)} == set(CATEGORIES)


@pytest.mark.parametrize(("spec", "players"), _cases())
def test_act_is_a_function_of_the_state(spec: str, players: int) -> None:
    name = parse_spec(spec)[0]
    states = _states(spec, players)
    legal = [set(Game.from_dict(s).legal_actions()) for s in states]
    fresh = _fresh_answers(spec, players)
    bot = _build(spec)
    live: list[int | str] = []
    for s in states:
        game = Game.from_dict(s)
        live.append(_answer(lambda game=game: bots.act_on_game(bot, game)))
        if isinstance(live[-1], int) and live[-1] in game.legal_actions():
            game.step(live[-1])  # the game moves on, as in an environment
    problems = [
        f"{how}: {_describe(s)}: illegal {a}"
        for how, got in (("fresh", fresh), ("game order", live))
        for s, a, ok in zip(states, got, legal)
        if a not in ok
    ]
    same: dict[str, Sequence[int | str]] = {}
    if name in STREAM:  # a fresh bot answers the same (see the module doc)
        again = _fresh_maker(spec, players)
        same["fresh again"] = [_answer(lambda s=s: again().act(s)) for s in states]
    else:
        same["game order"] = live
        for k in (1, 2):
            order = list(range(len(states)))
            random.Random(k).shuffle(order)
            got = {i: _answer(lambda i=i: bot.act(states[i])) for i in order}
            same[f"shuffle {k}"] = [got[i] for i in range(len(states))]
    for how, answers in same.items():
        problems += [
            f"{how}: {_describe(s)}: {b} (fresh {a})" for s, a, b in zip(states, fresh, answers) if a != b
        ]
    assert not problems, f"{spec}, {players} players, {len(states)} positions:\n" + "\n".join(problems)


def test_a_reused_rollout_bot_answers_as_a_fresh_one() -> None:
    """A bot that answered the position before answers the next one as a fresh bot does (``z=0``: the
    rollouts' best is played whenever it leads, so the answer follows the tapes), at the games' ends."""
    spec = "rollout:rollouts=2,width=2,time=60,z=0"
    positions = _game_positions(2)
    ends = [i for i in range(len(positions) - 1) if positions[i][0][0] == positions[i + 1][0][0]][-40:]
    for i in reversed(ends):
        before, state = positions[i][1], positions[i + 1][1]
        bot = _build(spec)
        bot.act(before)
        assert bot.act(state) == _build(spec).act(state), _describe(state)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_td_answers_a_later_turn_after_an_earlier_one(players: int) -> None:
    """A context built at one turn's start is not used for a later turn of the same seat whose
    shelf only gained circles (a position mid-turn, after a circle)."""
    states = [s for _, s in _game_positions(players)]
    for later in [s for s in states if s["circles_this_turn"] == 1][:12]:
        p = later["current_player"]
        earlier = next(
            (
                s
                for s in states
                if s["phase"] == "reroll"
                and s["current_player"] == p
                and s["round"] < later["round"]
                and s.get("tape_seed") == later.get("tape_seed")
            ),
            None,
        )
        if earlier is None:
            continue
        bot = bots.make("td")
        bot.act(earlier)
        assert bot.act(later) == bots.make("td").act(later)
