"""The batched engine against the scalar engine: same actions, same dice, same everything."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.batched import BatchedGame
from shelfie_env.game.actions import CROSS_BASE, END_TURN, circle_action
from shelfie_env.game.engine import Game
from shelfie_env.game.errors import IllegalActionError
from shelfie_env.observation.vector import encode


class ScriptedDice:
    """A dice source for ``Game`` that hands out a preset row of faces, once per step."""

    def __init__(self) -> None:
        self.row: np.ndarray = np.zeros(6, dtype=np.int64)
        self.draws = 0

    def load(self, row: np.ndarray) -> None:
        self.row = row
        self.draws = 0

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        assert (low, high) == (0, 6)
        assert self.draws == 0, "the scalar engine drew dice twice in one step"
        self.draws += 1
        return self.row[:size]


def _compare(batch: BatchedGame, games: list[Game], obs_by_seat: list[np.ndarray]) -> None:
    mask = batch.legal_mask()
    n = batch.num_players
    for i, g in enumerate(games):
        assert batch.to_dict(i) == g.to_dict(), f"state of game {i}"
        assert np.array_equal(mask[i], g.legal_mask().astype(bool)), f"mask of game {i}"
        assert list(batch.scores[i]) == g.scores()
        for seat in range(n):
            assert np.array_equal(obs_by_seat[seat][i], encode(g, seat)), (
                f"observation of game {i} seat {seat}"
            )


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_batched_matches_scalar(num_players: int) -> None:
    n_games, min_decisions = 24, 10_000
    rng = np.random.default_rng(100 + num_players)
    batch = BatchedGame(n_games, num_players)
    sources = [ScriptedDice() for _ in range(n_games)]
    faces = rng.integers(0, 6, size=(n_games, 6))
    for i, src in enumerate(sources):
        src.load(faces[i])
    games = [Game.new(num_players, rng=src) for src in sources]
    batch.reset(faces=faces)
    decisions = finished = 0
    while decisions < min_decisions:
        obs = [batch.observe(seat) for seat in range(num_players)]
        _compare(batch, games, obs)
        actions = batch.random_actions(rng=batch.rng)
        faces = rng.integers(0, 6, size=(n_games, 6))
        for i, src in enumerate(sources):
            src.load(faces[i])
            before = games[i].scores()
            games[i].step(int(actions[i]))
            gained = np.array(games[i].scores()) - before
            assert (gained >= 0).all()
        before_b = batch.scores.copy()
        batch.step(actions, faces=faces)
        assert np.array_equal(batch.scores - before_b, np.array([g.scores() for g in games]) - before_b)
        decisions += n_games
        done = batch.done
        assert list(done) == [g.over for g in games]
        if done.any():
            _compare(batch, games, [batch.observe(seat) for seat in range(num_players)])
            finished += int(done.sum())
            faces = rng.integers(0, 6, size=(n_games, 6))
            for i in np.flatnonzero(done):
                sources[i].load(faces[i])
                games[i] = Game.new(num_players, rng=sources[i])
            batch.reset(which=done, faces=faces)
    assert finished > 0


def test_special_positions_match() -> None:
    """Six jokers, lockout and a cross-out, loaded into the batch and stepped on both engines."""
    state = Game.new(2, rng=0).to_dict()
    state["boards"][0][4] = [1, 1, 1, 1, 0]  # player 0 is one cat away from a full row
    state["phase"] = "circle"
    state["dice"] = [5, 5, 5, 5, 5, 5]
    state["rolls_left"] = 0
    batch = BatchedGame(3, 2)
    scalar = []
    for i in range(3):
        batch.load(i, state)
        scalar.append(Game.from_dict(state, rng=np.random.default_rng(i)))
    actions = np.array([circle_action(4, 4, 1), circle_action(0, 3, 1), circle_action(2, 0, 1)])
    faces = np.array([[0, 1, 2, 3, 4, 5]] * 3)
    src = [ScriptedDice() for _ in range(3)]
    for i, g in enumerate(scalar):
        src[i].load(faces[i])
        g.rng = src[i]
        g.step(int(actions[i]))
    batch.step(actions, faces=faces)
    for i, g in enumerate(scalar):
        assert batch.to_dict(i) == g.to_dict()
    # Lockout: player 1's cat row is crossed in game 0 and it is now player 1's turn.
    assert batch.to_dict(0)["boards"][1][4] == [2, 2, 2, 2, 2]
    assert int(batch.current[0]) == 1


def test_cross_phase_then_next_turn() -> None:
    state = Game.new(2, rng=0).to_dict()
    state["boards"][0][0] = [1, 1, 0, 0, 0]
    state["phase"] = "cross"
    state["dice"] = [0, 0, 0, 0, 0, 0]
    state["rolls_left"] = 0
    batch = BatchedGame(1, 2)
    with pytest.raises(ValueError, match="phase"):
        batch.load(0, state)  # three plants make a circle possible: no cross phase
    state["boards"][0][0] = [1, 1, 1, 1, 1]
    state["boards"][1][0] = [2, 2, 2, 2, 2]  # locked out by player 0's full plant row
    batch.load(0, state)
    mask = batch.legal_mask()[0]
    assert not mask[CROSS_BASE] and mask[CROSS_BASE + 1 : CROSS_BASE + 5].all()
    assert not mask[:CROSS_BASE].any()
    batch.step(np.array([CROSS_BASE + 2]), faces=np.array([[5, 4, 3, 2, 1, 0]]))
    d = batch.to_dict(0)
    assert d["boards"][0][2] == [2] * 5 and d["end_triggered"]
    assert (d["current_player"], d["phase"], d["dice"]) == (1, "reroll", [0, 1, 2, 3, 4, 5])
    assert not batch.legal_mask()[0][END_TURN] and batch.legal_mask()[0][0]


def test_illegal_action_moves_nothing() -> None:
    batch = BatchedGame(4, 2, seed=3)
    before = batch.S.copy()
    actions = np.zeros(4, dtype=np.int64)
    actions[2] = END_TURN  # not legal in the reroll phase
    with pytest.raises(IllegalActionError, match="game 2"):
        batch.step(actions)
    assert np.array_equal(batch.S, before)
    with pytest.raises(ValueError, match="shape"):
        batch.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="faces"):
        batch.step(actions * 0, faces=np.full((4, 6), 6))


def test_seeded_streams_are_reproducible() -> None:
    a, b = BatchedGame(8, 3, seed=11), BatchedGame(8, 3, seed=11)
    for _ in range(200):
        acts = a.random_actions()
        assert np.array_equal(acts, b.random_actions())
        live = ~a.done
        acts[~live] = 0
        a.step(acts, active=live)
        b.step(acts, active=live)
    assert np.array_equal(a.S, b.S)
    assert not np.array_equal(a.S, BatchedGame(8, 3, seed=12).S)


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_batched_greedy_picks_the_scalar_greedy_action(num_players: int) -> None:
    from shelfie_env.bots.greedy.batched import BatchedGreedy
    from shelfie_env.bots.greedy.scalar import GreedyBot

    bot = GreedyBot()
    batch = BatchedGame(32, num_players, seed=40 + num_players)
    greedy = BatchedGreedy(batch.table, num_players)
    compared = 0
    phases = set()
    for _ in range(120):
        actions = greedy.actions(batch)
        for i in np.flatnonzero(~batch.done):
            game = batch.to_game(i)
            assert actions[i] == bot.act_game(game), batch.to_dict(i)
            phases.add(game.phase_name)
            compared += 1
        assert (actions[batch.done] == -1).all()
        moves = batch.random_actions()
        live = ~batch.done
        batch.step(np.where(live, moves, 0), active=live)
        if batch.done.any():
            batch.reset(which=batch.done)
    assert compared >= 2000 and phases == {"reroll", "circle", "cross"}


def test_core_package_imports_without_numba() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import shelfie_env, shelfie_env.shelfie_v0, shelfie_env.envs.gym_envs\n"
        "try:\n    import shelfie_env.batched\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "shelfie-env[fast]" in out


def test_custom_points_table_scores() -> None:
    points = [[1, 2, 4, 7, 11], [2, 3, 5, 8, 13], [0, 1, 1, 2, 3], [5, 5, 5, 5, 5], [1, 1, 2, 3, 20]]
    batch = BatchedGame(16, 3, points=points, seed=2)
    checked = 0
    for _ in range(300):
        for i in np.flatnonzero(batch.circled.any(axis=1)):
            game = batch.to_game(i)
            assert game.table.points == tuple(map(tuple, points))
            assert list(batch.scores[i]) == game.scores()
            checked += 1
        moves = batch.random_actions()
        live = ~batch.done
        batch.step(np.where(live, moves, 0), active=live)
    assert checked > 1000 and batch.scores.max() > 0
