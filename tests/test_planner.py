"""Planner: dice combinatorics, evaluation building blocks, hand-solved positions, legality."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from shelfie_env.bots import make
from shelfie_env.bots.planner import PlannerBot, Weights, action_values
from shelfie_env.bots.planner.dice import (
    FINAL,
    FINAL_INDEX,
    KEEP,
    TRANSITION,
    best_keep_value,
    counts_of,
    expected_after_roll,
    keep_index_of_reroll,
    outcome_distribution,
)
from shelfie_env.bots.planner.evaluation import Context
from shelfie_env.bots.planner.lines import LINE_CELLS, line_points, line_scores, line_tables, shelf_values
from shelfie_env.bots.planner.placements import FEASIBLE, SET_MASKS, can_circle
from shelfie_env.bots.planner.search import placement_values
from shelfie_env.game.actions import CROSS_BASE, circle_action, cross_action, reroll_action
from shelfie_env.game.engine import CIRCLE, Game
from shelfie_env.game.scoring import DEFAULT_POINTS, ScoreTable
from shelfie_env.game.tables import MULTISETS

from .conftest import ScriptedDice, board, make_state


# ------------------------------------------------------------------ dice
@pytest.mark.parametrize("k", range(7))
def test_outcome_probabilities_sum_to_one(k: int) -> None:
    dist = outcome_distribution(k)
    assert len(dist) == comb(k + 5, 5)
    assert sum(dist.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(sum(n) == k and p > 0 for n, p in dist.items())


def test_outcome_probability_examples() -> None:
    assert outcome_distribution(2)[(2, 0, 0, 0, 0, 0)] == pytest.approx(1 / 36)
    assert outcome_distribution(2)[(1, 1, 0, 0, 0, 0)] == pytest.approx(2 / 36)
    assert outcome_distribution(6)[(1, 1, 1, 1, 1, 1)] == pytest.approx(720 / 6**6)
    with pytest.raises(ValueError, match="k must be"):
        outcome_distribution(7)


def test_transition_rows_are_distributions_over_supersets() -> None:
    assert TRANSITION.shape == (924, 462)
    assert np.allclose(TRANSITION.sum(axis=1), 1.0)
    reach = TRANSITION > 0
    # A keep only reaches final multisets that contain it.
    contains = (FINAL[None, :, :] >= KEEP[:, None, :]).all(axis=2)
    assert not (reach & ~contains).any()
    full = KEEP.sum(axis=1) == 6
    assert np.allclose(TRANSITION[full].max(axis=1), 1.0)


def test_keep_index_of_reroll() -> None:
    dice = [0, 4, 4, 4, 4, 4]
    assert tuple(KEEP[keep_index_of_reroll(dice, 1)]) == (0, 0, 0, 0, 5, 0)
    assert tuple(KEEP[keep_index_of_reroll(dice, 63)]) == (0,) * 6


def _sequence_expectation(keep: tuple[int, ...], v0: dict[tuple[int, ...], float]) -> float:
    """One roll, by brute force: average over every ordered roll (6**k sequences)."""
    k = 6 - sum(keep)
    total = 0.0
    for faces in itertools.product(range(6), repeat=k):
        total += v0[tuple(a + b for a, b in zip(keep, counts_of(faces)))]
    return total / 6**k


def _dict_expectimax(
    keep: tuple[int, ...], rolls: int, v0: dict[tuple[int, ...], float], memo: dict
) -> float:
    """Two-level expectimax written with dicts and the multinomial law (no matrices)."""
    key = (keep, rolls)
    if key not in memo:
        total = 0.0
        for rolled, p in outcome_distribution(6 - sum(keep)).items():
            final = tuple(a + b for a, b in zip(keep, rolled))
            if rolls == 1:
                total += p * v0[final]
            else:
                subs = itertools.product(*(range(n + 1) for n in final))
                total += p * max(_dict_expectimax(tuple(s), 1, v0, memo) for s in subs)
        memo[key] = total
    return memo[key]


def test_expectimax_matches_independent_computations() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(size=462)
    v0 = {tuple(int(x) for x in FINAL[m]): float(values[m]) for m in range(462)}
    one = expected_after_roll(values)
    two = expected_after_roll(best_keep_value(one))
    index = {tuple(int(x) for x in k): i for i, k in enumerate(KEEP)}
    memo: dict = {}
    for keep in [(0, 0, 0, 0, 3, 1), (1, 1, 1, 1, 1, 0), (0, 0, 0, 0, 0, 3), (2, 0, 0, 0, 0, 2)]:
        assert one[index[keep]] == pytest.approx(_sequence_expectation(keep, v0), abs=1e-12)
        assert one[index[keep]] == pytest.approx(_dict_expectimax(keep, 1, v0, memo), abs=1e-12)
        assert two[index[keep]] == pytest.approx(_dict_expectimax(keep, 2, v0, memo), abs=1e-12)


def test_exact_keep_value_agrees_with_monte_carlo() -> None:
    game = Game.from_dict(make_state(phase="reroll", rolls_left=1, dice=[0, 2, 3, 4, 4, 4]))
    ctx = Context(game, Weights())
    v0 = placement_values(ctx)
    keep = keep_index_of_reroll(game.dice, reroll_action([0, 1, 2]))
    exact = float(expected_after_roll(v0)[keep])
    rng = np.random.default_rng(11)
    rolls = rng.integers(0, 6, size=(20000, 3))
    samples = np.array([v0[FINAL_INDEX[counts_of([4, 4, 4, *r])]] for r in rolls])
    se = samples.std() / np.sqrt(len(samples))
    assert abs(samples.mean() - exact) < 4 * se


# --------------------------------------------------------------- placements
def _engine_reachable_sets(dice: tuple[int, ...]) -> set[int]:
    """Every set of cells some legal circle sequence (1..3 circles) reaches, on an empty solo shelf."""
    start = Game.from_dict(make_state(num_players=1, boards=[board()], dice=list(dice)))
    out: set[int] = set()

    def walk(game: Game) -> None:
        for a in game.legal_actions():
            if a >= CROSS_BASE - 1:  # end turn / cross
                continue
            g = game.clone()
            g.step(a)
            out.add(g.circled[0])
            if g.phase == CIRCLE and g.current == 0 and g.circles:
                walk(g)

    if start.phase == CIRCLE:
        walk(start)
    return out


def test_feasible_sets_match_the_engine() -> None:
    rng = np.random.default_rng(5)
    picks = list(rng.choice(len(MULTISETS), size=40, replace=False)) + [MULTISETS.index((5,) * 6)]
    for m in picks:
        dice = MULTISETS[m]
        expected = _engine_reachable_sets(dice)
        got = {int(s) for s in SET_MASKS[FEASIBLE[m]]}
        assert got == expected, dice


def test_can_circle_scalar_matches_matrix() -> None:
    m = FINAL_INDEX[(0, 0, 0, 0, 5, 1)]
    assert can_circle(FINAL[m].tolist(), ((4, 4), (4, 0)))  # cat #5 with a joker, then cat #1
    assert not can_circle(FINAL[m].tolist(), ((4, 4), (4, 1)))  # 5 + 2 cats is too many
    assert can_circle((0, 0, 0, 0, 0, 6), ((0, 0),))
    assert not can_circle((0, 0, 0, 0, 0, 6), ((0, 0), (1, 0)))


# ------------------------------------------------------------------- lines
def test_line_tables_exact_cases_and_brute_force() -> None:
    pts = line_points(DEFAULT_POINTS)
    table = ScoreTable(DEFAULT_POINTS)
    rng = np.random.default_rng(0)
    circ = rng.integers(0, 1 << 25, size=300)
    cross = rng.integers(0, 1 << 25, size=300) & ~circ
    zero = shelf_values(line_tables(np.zeros(25), pts), circ, cross)
    one = shelf_values(line_tables(np.ones(25), pts), circ, cross)
    for i in range(300):
        assert zero[i] == table.score(int(circ[i]))
        assert one[i] == table.score(int(((1 << 25) - 1) & ~cross[i]))
    q = rng.random(25)
    tab = line_tables(q, pts)
    scores = line_scores(DEFAULT_POINTS)
    for line in range(10):
        for code in rng.integers(0, 243, size=8):
            digits = [code // 3**i % 3 for i in range(5)]
            free = [i for i in range(5) if digits[i] == 0]
            circled = sum(1 << i for i in range(5) if digits[i] == 1)
            expect = 0.0
            for sub in itertools.product((0, 1), repeat=len(free)):
                p, mask = 1.0, circled
                for i, take in zip(free, sub):
                    qi = q[LINE_CELLS[line][i]]
                    p *= qi if take else 1 - qi
                    mask |= take << i
                expect += p * scores[line][mask]
            assert tab[line][code] == pytest.approx(expect, abs=1e-12)


# ------------------------------------------------------- hand-solved positions
def _act(state: dict) -> int:
    bot = make("planner")
    action = bot.act(state)
    assert action == bot.act_game(Game.from_dict(state))
    return action


def test_five_cats_and_a_joker_circle_cat_five_with_the_joker() -> None:
    # Cat #2 and #3 circled: cat #5 +joker leaves a cat for cat #1 (row = 1+2+3+8).
    state = make_state(
        boards=[board(".....", ".....", ".....", ".....", ".OO.."), board()], dice=[4, 4, 4, 4, 4, 5]
    )
    assert _act(state) == circle_action(4, 4, joker=True)
    game = Game.from_dict(state)
    game.step(circle_action(4, 4, joker=True))
    assert make("planner").act_game(game) == circle_action(4, 0)


def test_six_jokers_take_the_most_valuable_free_cell() -> None:
    state = make_state(
        boards=[board("O....", ".O...", "..O..", ".....", "OOOO."), board()], dice=[5] * 6
    )  # cat #5 completes the cat row (19 points) and column 5 is worth nothing else yet
    assert _act(state) == circle_action(4, 4, joker=True)


def test_forced_cross_picks_the_least_valuable_row() -> None:
    rows = ("XXX..", "OOO..", "OOO..", "OOO..", "OOO..")
    for players in (1, 2):
        boards = [board(*rows)] + [board()] * (players - 1)
        state = make_state(boards=boards, phase="cross", dice=[0, 0, 1, 1, 2, 3])
        assert _act(state) == cross_action(0), players


def test_two_rolls_left_five_cats_keep_the_cats_and_reroll_the_plant() -> None:
    state = make_state(phase="reroll", rolls_left=2, dice=[0, 4, 4, 4, 4, 4])
    assert _act(state) == reroll_action([0])


def test_values_cover_exactly_the_legal_actions() -> None:
    for state in (
        make_state(phase="reroll", rolls_left=2, dice=[0, 1, 1, 3, 4, 5]),
        make_state(phase="reroll", rolls_left=1, dice=[2, 2, 2, 3, 5, 5]),
        make_state(dice=[0, 1, 1, 3, 4, 5]),
    ):
        game = Game.from_dict(state)
        values = action_values(game)
        assert set(values) == set(game.legal_actions())
        assert all(np.isfinite(v) for v in values.values())


# ---------------------------------------------------------------- legality
@pytest.mark.parametrize("players", [1, 2, 3])
def test_never_returns_an_illegal_action(players: int) -> None:
    planner = make("planner")
    other = make("random", seed=players)
    rng = np.random.default_rng(100 + players)
    checked = 0
    for _seed in range(3):
        game = Game.new(players, rng=int(rng.integers(1 << 30)))
        while not game.over:
            if game.current == 0 or rng.random() < 0.3:
                a = planner.act_game(game)
                assert a in game.legal_actions(), (a, game.to_dict())
                checked += 1
            else:
                a = other.act_game(game)
            game.step(a)
    assert checked > 30


def test_registered_deterministic_and_validates_weights() -> None:
    state = make_state(phase="reroll", rolls_left=2, dice=[0, 1, 2, 3, 4, 5])
    assert make("planner").act(state) == make("planner").act(state)
    assert isinstance(make("planner"), PlannerBot)
    assert make("planner", rival_weight=0.5).weights.rival_weight == 0.5
    with pytest.raises(ValueError, match="unknown planner weight"):
        make("planner", nonsense=1)
    assert make("planner", hit=[0.1, 0.1, 0.1, 0.1, 0.1]).weights.hit == (0.1,) * 5  # JSON lists accepted
    with pytest.raises(ValueError, match="hit must be 5"):
        make("planner", hit=[0.1, 0.2])
    with pytest.raises(ValueError, match="threat must be >= 0"):
        Weights(threat=-1)
    with pytest.raises(ValueError):
        make("planner").act({"num_players": 2})
    over = Game.new(1, rng=0)
    bot = make("planner")
    while not over.over:
        over.step(bot.act_game(over))
    with pytest.raises(ValueError, match="game is over"):
        bot.act_game(over)


def test_rounds_estimates_agree_and_shrink_as_shelves_fill() -> None:
    from shelfie_env.bots.planner.evaluation import rounds_left, rounds_left_many

    w = Weights()
    game = Game.new(2, rng=8)
    bot = make("planner")
    seen: dict[int, list[float]] = {0: [], 1: []}
    while not game.over:
        if not game.end_triggered:
            fills = [np.array([game.circled[q] | game.crossed[q]]) for q in range(2)]
            mid = game.current == 0
            assert rounds_left_many(fills, w, mid)[0] == pytest.approx(rounds_left(game, w))
            assert rounds_left_many(fills, w, True)[0] <= rounds_left_many(fills, w, False)[0]
            seen[game.current].append(rounds_left(game, w))
        game.step(bot.act_game(game))
    for xs in seen.values():
        assert xs[0] > 5 and all(b <= a + 1e-12 for a, b in itertools.pairwise(xs))


def test_turn_context_is_reused_only_within_a_turn() -> None:
    from shelfie_env.bots.planner.search import turn_context

    w = Weights()
    game = Game.from_dict(make_state(phase="reroll", rolls_left=2, dice=[1, 1, 2, 3, 4, 4]))
    ctx = turn_context(game, w)
    fresh_values = action_values(game, w)
    assert action_values(game, w, ctx) == fresh_values
    game.step(0)  # stop: circle phase, same shelves
    assert turn_context(game, w, ctx) is ctx
    game.step(game.legal_actions()[0])
    if not game.over and game.current == 0:
        assert turn_context(game, w, ctx) is ctx  # this turn's circles only
    other = Game.from_dict(make_state(phase="reroll", rolls_left=2, dice=[1, 1, 2, 3, 4, 4], current=1))
    assert turn_context(other, w, ctx) is not ctx
    assert turn_context(game, Weights(threat=0.5), ctx) is not ctx


def test_last_turn_value_exact_cases() -> None:
    from shelfie_env.bots.planner.last_turn import last_turn_value
    from shelfie_env.game.scoring import FULL

    pts = tuple(tuple(r) for r in DEFAULT_POINTS)
    # Only plant #1 is free; plants #2, #3 circled: circling it scores 1+2+3. Best play rerolls
    # all six dice; a roll fails unless it shows a plant or six jokers (which circle any cell).
    circled = 0b00110
    crossed = FULL & ~circled & ~1
    fail = (5 / 6) ** 6 - (1 / 6) ** 6
    assert last_turn_value(pts, circled, crossed) == pytest.approx(6 * (1 - fail**3), abs=1e-12)
    # No free cell: the score as it stands.
    assert last_turn_value(pts, 0b11111, FULL & ~0b11111) == 19
    # More circles never lower the expectation.
    assert last_turn_value(pts, 0b111, 0) >= last_turn_value(pts, 0b11, 0) > last_turn_value(pts, 0, 0) > 0


def test_last_turn_edge_exact_cases() -> None:
    from shelfie_env.bots.planner.last_turn import last_turn_edge
    from shelfie_env.game.scoring import FULL

    pts = tuple(tuple(r) for r in DEFAULT_POINTS)
    # As above: the rival ends on 6 points if a plant (or six jokers) comes in three rolls, else 0.
    circled = 0b00110
    crossed = FULL & ~circled & ~1
    fail = (5 / 6) ** 6 - (1 / 6) ** 6
    hit = 1 - fail**3
    assert last_turn_edge(pts, circled, crossed, 7.0) == pytest.approx(1.0)  # it cannot pass 7
    assert last_turn_edge(pts, circled, crossed, 6.0) == pytest.approx(1 - hit)  # ties when it hits
    assert last_turn_edge(pts, circled, crossed, 3.0) == pytest.approx((1 - hit) - hit)
    assert last_turn_edge(pts, circled, crossed, -1.0) == pytest.approx(-1.0)
    # Monotone in our score, and within [-1, 1].
    edges = [last_turn_edge(pts, 0b111, 0, float(t)) for t in range(0, 80, 5)]
    assert all(-1 - 1e-12 <= e <= 1 + 1e-12 for e in edges)
    assert edges == sorted(edges) and edges[0] < 0 < edges[-1]


def test_optional_evaluation_terms_keep_play_legal() -> None:
    variants = [Weights(sigma=6.0), Weights(sigma=0.0), Weights(deep=3)]
    state = make_state(
        boards=[board("OOOX.", "XXXXX", "OO...", "O....", "...O."), board()], dice=[0, 1, 2, 2, 3, 5]
    )
    for w in variants:
        game = Game.new(2, rng=21)
        bot = PlannerBot(w)
        while not game.over:
            a = bot.act_game(game)
            assert a in game.legal_actions()
            game.step(a)
        values = action_values(Game.from_dict(state), w)
        assert values and all(np.isfinite(v) for v in values.values())


def test_next_turn_value() -> None:
    from shelfie_env.bots.planner.search import next_turn_value

    game = Game.from_dict(make_state(boards=[board("OOOO.", "XXXXX"), board()], dice=[0, 0, 0, 0, 1, 5]))
    ctx = Context(game, Weights())
    assert next_turn_value(ctx, 1 << 4) is None  # plant #5 fills a second row: the end, no next turn
    deep = next_turn_value(ctx, 1 << 5 * 2)  # book #1 instead: the game goes on
    assert deep is not None and np.isfinite(deep)
    ended = Game.from_dict(make_state(boards=[board("OOOOX", "XXXXX"), board()], dice=[0, 0, 1, 2, 2, 5]))
    assert next_turn_value(Context(ended, Weights()), 1 << 5 * 2) is None  # already triggered


def _best_final_value(game: Game, me: int) -> float:
    """Best ``50 * sign(margin) + 0.01 * margin`` over every way to finish the last turn (engine DFS)."""
    if game.over:
        s = game.scores()
        m = s[me] - s[1 - me]
        return 50.0 * np.sign(m) + 0.01 * m
    best = -np.inf
    for a in game.legal_actions():
        g = game.clone()
        g.step(a)
        best = max(best, _best_final_value(g, me))
    return best


def test_last_turn_of_the_game_maximises_the_chance_to_win() -> None:
    """Seat 1's turn after the end was triggered: each reroll is valued by the exact
    chance of finishing ahead (win 50, loss -50, the margin / 100 only breaking ties),
    checked against every dice outcome and every way to finish, played by the engine."""
    rival = board("XXXXX", "OOOOX", "OOOXX", "OOX..", "O....")  # two rows without a free cell
    mine = board("OOO..", "OO...", "OOO..", "O....", ".....")
    state = make_state(
        boards=[rival, mine], current=1, phase="reroll", dice=(0, 0, 2, 2, 4, 5), rolls_left=1
    )
    game = Game.from_dict(state)
    assert game.end_triggered
    s = game.scores()
    assert s[1] < s[0]  # behind before the turn: only some rolls win
    values = action_values(game, Weights())
    checked = 0
    for a, v in values.items():
        rerolled = [i for i in range(6) if a >> i & 1]
        if len(rerolled) > 2:
            continue
        total = 0.0
        for faces in itertools.product(range(6), repeat=len(rerolled)):
            g = Game.from_dict(state, rng=ScriptedDice(faces))
            g.step(a)  # the engine rerolls with the scripted faces (stop: no roll)
            total += _best_final_value(g, 1) / 6 ** len(rerolled)
        assert v == pytest.approx(total, abs=1e-6), a
        checked += 1
    assert checked >= 5
    wins = [v for v in values.values() if v > -50 + 1]
    assert wins, "some reroll should give a chance to win"
