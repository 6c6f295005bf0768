"""Hypothesis properties over random legal play (1-4 players), checked against ``tests/reference.py``.

Every decision of every game is diffed against the plain SPEC reading in
``reference``: the legal set, the next state (replaying the very faces the
engine rolled) and the scores; the state also round-trips through
``Game.from_dict`` at every step.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shelfie_env.game.engine import Game
from shelfie_env.game.errors import InvalidStateError

from . import reference as ref
from .conftest import SPEC_KEYS, RecordingDice

MAX_DECISIONS = 3000
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

points_tables = st.one_of(
    st.none(),
    st.lists(st.lists(st.integers(0, 20), min_size=5, max_size=5), min_size=5, max_size=5),
)


def _choose(rnd: random.Random, legal: tuple[int, ...], style: int) -> int:
    """Random legal action; ``style`` biases play so all phases and endings get visited."""
    if style == 1:  # prefer stopping and circling at once, rarely end a turn early
        pref = [a for a in legal if a == 0 or 64 <= a <= 113]
        if pref and rnd.random() < 0.8:
            return rnd.choice(pref)
    elif style == 2:  # prefer ending turns and crossing: reaches cross phases and lockouts less, ends faster
        pref = [a for a in legal if a >= 114 or a == 0]
        if pref and rnd.random() < 0.7:
            return rnd.choice(pref)
    elif style == 3:  # circle big items first: fills rows and columns, so lockouts and circle triggers happen
        circles = [a for a in legal if 64 <= a <= 113]
        if circles and rnd.random() < 0.9:
            return max(circles, key=lambda a: ((a - 64) // 2 % 5, rnd.random()))
        if 0 in legal and rnd.random() < 0.3:
            return 0
    return rnd.choice(legal)


def _replay(rolls: Iterator[list[int]]) -> Callable[[int], list[int]]:
    """A ``roll(k)`` for the reference that hands back the engine's recorded rolls in order."""

    def roll(k: int) -> list[int]:
        faces = next(rolls, None)
        assert faces is not None, f"the rules roll {k} dice here but the engine rolled nothing"
        assert len(faces) == k, f"the rules roll {k} dice here, the engine rolled {len(faces)}"
        return faces

    return roll


def _cells(state: dict) -> list[tuple[int, int, int, int]]:
    return [
        (p, r, c, state["boards"][p][r][c])
        for p in range(state["num_players"])
        for r in range(5)
        for c in range(5)
    ]


def _canonical_spent(state: dict) -> dict:
    """The state with spent flags moved to the lowest positions of each face (positions do not matter)."""
    s = dict(state)
    used = [0] * 6
    for f, u in zip(state["dice"], state["spent"]):
        used[f] += u
    spent = []
    for f in state["dice"]:
        spent.append(used[f] > 0)
        used[f] -= 1
    s["spent"] = spent
    s.pop("scores", None)
    s.setdefault("round", 0)  # optional on input; the engine always writes it
    return s


@PROPS
@given(
    num_players=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    rnd=st.randoms(use_true_random=False),
    style=st.integers(0, 3),
    points=points_tables,
)
def test_random_play_matches_the_spec_reference(
    num_players: int, seed: int, rnd: random.Random, style: int, points: list[list[int]] | None
) -> None:
    dice = RecordingDice(seed)
    g = Game.new(num_players, points=points, rng=dice)
    state = g.to_dict()
    assert len(dice.calls) == 1 and sorted(dice.calls[0]) == state["dice"]
    pts = state["points"]
    decisions = 0
    while not g.over:
        # the state round-trips through from_dict and JSON
        assert json.loads(json.dumps(state)) == state
        back = Game.from_dict(json.loads(json.dumps(state)))
        assert back.to_dict() == state
        assert set(back.legal_actions()) == set(g.legal_actions())

        legal = g.legal_actions()
        assert set(legal) == ref.legal(state), state
        assert len(legal) == len(set(legal))
        mask = g.legal_mask()
        assert mask.dtype == np.int8 and mask.shape == (120,)
        assert mask.sum() > 0 and set(np.flatnonzero(mask).tolist()) == set(legal)
        b = state["boards"][state["current_player"]]
        assert any(0 in row for row in b)  # a player on turn always has a free cell

        action = _choose(rnd, legal, style)
        n_calls = len(dice.calls)
        g.step(action)
        decisions += 1
        assert decisions < MAX_DECISIONS, "game did not end"
        new_rolls = iter(dice.calls[n_calls:])
        expected = ref.step(state, action, _replay(new_rolls))
        assert next(new_rolls, None) is None, "engine rolled more dice than the rules call for"
        new = g.to_dict()

        # circled/crossed cells never change back, and only free cells change
        for (p, r, c, before), (_, _, _, after) in zip(_cells(state), _cells(new)):
            if before:
                assert after == before, (p, r, c)
        assert _canonical_spent(new) == _canonical_spent(expected), (state, action)
        assert new["scores"] == [ref.score(bd, pts) for bd in new["boards"]]
        assert new["scores"] == g.scores() == [g.score(p) for p in range(num_players)]
        for p in range(num_players):  # the engine's masks match the board: a cell is never both
            assert g.circled[p] & g.crossed[p] == 0
            assert g.board(p) == new["boards"][p]
        state = new

    assert state["phase"] == "over" and state["end_triggered"]
    assert any(ref.rows_without_free(bd) >= 2 for bd in state["boards"])
    assert g.legal_actions() == () and g.legal_mask().sum() == 0


@PROPS
@given(seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=False), num_players=st.integers(1, 4))
def test_clone_is_independent_and_replays_identically(
    seed: int, rnd: random.Random, num_players: int
) -> None:
    g = Game.new(num_players, rng=np.random.default_rng(seed))
    for _ in range(rnd.randrange(0, 40)):
        if g.over:
            break
        g.step(rnd.choice(g.legal_actions()))
    before = g.to_dict()
    c = g.clone(rng=np.random.default_rng(seed + 1))
    c2 = g.clone(rng=np.random.default_rng(seed + 1))
    for _ in range(30):
        if c.over:
            break
        a = rnd.choice(c.legal_actions())
        c.step(a)
        c2.step(a)
        assert c.to_dict() == c2.to_dict()
    assert g.to_dict() == before  # playing the clone did not touch the original


FIELDS = {"state", *SPEC_KEYS}  # what an InvalidStateError may name


@st.composite
def positions(draw: st.DrawFn) -> dict:
    """Random hand-built states: many are impossible (and must be refused), many are fine."""
    n = draw(st.integers(1, 4))
    cell = st.sampled_from([0, 0, 0, 1, 1, 2])
    boards = [[[draw(cell) for _ in range(5)] for _ in range(5)] for _ in range(n)]
    phase = draw(st.sampled_from(["reroll", "circle", "circle", "cross", "over"]))
    circles = draw(st.sampled_from([0, 0, 0, 1, 2, 3])) if phase == "circle" else 0
    dice = sorted(draw(st.lists(st.integers(0, 5), min_size=6, max_size=6)))
    spent = [False] * 6
    if circles:
        spent = [draw(st.booleans()) for _ in range(6)]
    current = draw(st.integers(0, n - 1))
    if phase == "cross" and draw(st.booleans()):  # six equal dice on a dead row: nothing to circle
        face = draw(st.integers(0, 4))
        dice = [face] * 6
        boards[current][face] = [draw(st.sampled_from([1, 2])) for _ in range(5)]
    if phase == "over" and draw(st.booleans()):
        boards[draw(st.integers(0, n - 1))][:2] = [[2] * 5, [2] * 5]
    triggered = any(ref.rows_without_free(b) >= 2 for b in boards)
    return {
        "num_players": n,
        "points": [[1, 2, 3, 5, 8]] * 5,
        "boards": boards,
        "current_player": current,
        "phase": phase,
        "dice": dice,
        "spent": spent,
        "rolls_left": draw(st.integers(1, 2)) if phase == "reroll" else draw(st.integers(0, 2)),
        "circles_this_turn": circles,
        "end_triggered": triggered if draw(st.integers(0, 9)) else not triggered,
    }


@settings(max_examples=300, deadline=None)
@given(state=positions(), seed=st.integers(0, 2**16), rnd=st.randoms(use_true_random=False))
def test_hand_built_positions_behave_like_the_reference(state: dict, seed: int, rnd: random.Random) -> None:
    """Accepted positions follow the SPEC reference; refused ones raise InvalidStateError naming a field."""
    try:
        g = Game.from_dict(state, rng=RecordingDice(seed))
    except InvalidStateError as exc:
        assert exc.field.split("[")[0] in FIELDS
        return
    assert {k: v for k, v in g.to_dict().items() if k != "scores"} == {"round": 0, **state}
    assert set(g.legal_actions()) == ref.legal(state)
    if g.over:
        return
    assert g.legal_actions(), "a live position must offer a move"
    a = rnd.choice(g.legal_actions())
    g.step(a)
    expected = ref.step(state, a, _replay(iter(g.rng.calls)))  # type: ignore[attr-defined]
    assert _canonical_spent(g.to_dict()) == _canonical_spent(expected)
