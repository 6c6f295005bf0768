"""The solo table: board indices, which boards arise, the file's checks, the solver's resume, the CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from shelfie_env.bots.planner.placements import FEASIBLE, SETS
from shelfie_env.cli import main
from shelfie_env.game.engine import Game
from shelfie_env.game.scoring import DEFAULT_POINTS, ScoreTable
from shelfie_env.solo import board_value, optimum
from shelfie_env.solo import boards as B
from shelfie_env.solo.bot import SoloOptimalBot
from shelfie_env.solo.table import SoloTable, TableError, read_table, shipped_table, write_table
from shelfie_env.solo.turn import SoloTurn


def grid(*rows: str) -> list[list[int]]:
    return [[".OX".index(ch) for ch in row] for row in rows]


# --------------------------------------------------------------------------- indices
def test_symmetric_boards_are_numbered_one_to_one() -> None:
    boards = B.symmetric_boards().astype(np.int64)
    assert boards.shape == (1_808_664, 5)
    assert (B.board_indices(boards, True) == np.arange(len(boards))).all()
    rng = np.random.default_rng(0)
    for i in rng.integers(0, len(boards), 200):
        states = tuple(int(x) for x in boards[i])
        assert B.board_index(states, True) == i
        perm = tuple(states[j] for j in rng.permutation(5))
        assert B.board_index(perm, True) == i  # any order of the rows, the same board


def test_full_indices_agree_with_the_compiled_ones() -> None:
    K = pytest.importorskip("shelfie_env.solo._kernels")
    rng = np.random.default_rng(1)
    st = np.empty(5, dtype=np.int64)
    for i in rng.integers(0, B.FULL_BOARDS, 300):
        K.unrank_full(int(i), st)
        states = tuple(int(x) for x in st)
        assert B.board_index(states, False) == i
        assert B.board_indices(st[None], False)[0] == i
        assert K.board_index(st, False, B.BINOM) == i
        assert K.board_index(st, True, B.BINOM) == B.board_index(states, True)


# --------------------------------------------------------------------------- which boards arise
def _blocked_rolls(prefixes: tuple[int, ...]) -> bool:
    """Brute force: some final roll circles no free cell of rows with these taken prefixes."""
    free = 0
    for r, p in enumerate(prefixes):
        free |= (31 & ~((1 << p) - 1)) << (5 * r)
    singles = [
        s for s, cells in enumerate(SETS) if len(cells) == 1 and (1 << (5 * cells[0][0] + cells[0][1])) & free
    ]
    return bool((~FEASIBLE[:, singles].any(axis=1)).any())


def test_cross_possible_matches_every_roll() -> None:
    for prefixes in np.ndindex(5, 5, 5, 5, 5):
        states = tuple((1 << p) - 1 for p in prefixes)  # row r: its first p cells circled
        assert B.cross_possible(states) == _blocked_rolls(tuple(prefixes)), prefixes


def test_board_value_refuses_what_is_not_a_solo_board() -> None:
    with pytest.raises(ValueError, match="5x5"):
        board_value([[0] * 5] * 4)
    with pytest.raises(ValueError, match="0 \\(free\\), 1 \\(circled\\) or 2 \\(crossed\\), got 3"):
        board_value([[3] + [0] * 4] + [[0] * 5] * 4)
    with pytest.raises(ValueError, match="integers"):
        board_value([["a"] * 5] * 5)
    with pytest.raises(ValueError, match="crossed out whole"):
        board_value(grid("XX...", ".....", ".....", ".....", "....."))
    with pytest.raises(ValueError, match="no roll could have left nothing to circle"):
        board_value(grid("XXXXX", ".....", ".....", ".....", "....."))
    with pytest.raises(ValueError, match="three rows are crossed out"):
        board_value(grid("XXXXX", "XXXXX", "XXXXX", "OO...", "....."))


def test_a_finished_board_is_worth_its_score() -> None:
    done = grid("OOOOO", "OOOOO", "OOO..", ".....", ".....")
    assert board_value(done) == ScoreTable(DEFAULT_POINTS).score(sum(1 << b for b in range(13)))
    with pytest.raises(ValueError, match="cannot arise"):  # five full rows: the game ends before
        board_value([[1] * 5] * 5)


def test_a_crossed_row_arises_when_some_roll_circles_nothing() -> None:
    # two taken cells in one row: one die of that row and five jokers circle nothing
    assert np.isfinite(board_value(grid("XXXXX", ".....", ".....", "OO...", ".....")))
    assert np.isfinite(board_value(grid("OXXXX", "OO...", "O....", "OO...", ".....")))


# --------------------------------------------------------------------------- the table
def test_the_shipped_table_and_its_optimum() -> None:
    table = shipped_table()
    assert table.symmetric and table.points == DEFAULT_POINTS
    assert table.values.shape == (B.SYM_BOARDS,)
    assert np.isfinite(table.values).all()
    assert optimum() == pytest.approx(175.2611, abs=5e-5)
    assert optimum() == board_value([[0] * 5] * 5)
    # a board is worth no more than the best any finished board scores, and no less than what it holds
    assert table.values.max() <= 2 * sum(DEFAULT_POINTS[0]) * 5


def test_board_value_follows_the_bellman_equation_on_random_boards() -> None:
    table = shipped_table()
    boards = B.symmetric_boards()
    rng = np.random.default_rng(7)
    checked = 0
    for i in rng.integers(0, len(boards), 400):
        states = tuple(int(x) for x in boards[i])
        if B.start_board_arises(states) is not None:
            continue
        game = Game.new(1, rng=0)
        circled = sum(B.circled_of(s) << (5 * r) for r, s in enumerate(states))
        crossed = sum((31 & ~B.circled_of(s)) << (5 * r) for r, s in enumerate(states) if s >= B.CLOSED_BASE)
        game.circled, game.crossed = [circled], [crossed]
        assert SoloTurn(table, game).turn_start_value() == pytest.approx(table.values[i], abs=1e-9)
        checked += 1
    assert checked >= 100


def _small_table(tmp_path: Path) -> Path:
    values = np.arange(B.SYM_BOARDS, dtype=np.float64)
    values[0] = 1.5
    return write_table(SoloTable(DEFAULT_POINTS, True, values, 1.5), tmp_path / "t.npz")


def test_a_table_file_round_trips_and_damage_is_refused(tmp_path: Path) -> None:
    path = _small_table(tmp_path)
    assert read_table(path).optimum == 1.5
    with pytest.raises(TableError, match="not the ones asked for"):
        read_table(path, tuple((1, 2, 3, 5, 9) for _ in range(5)))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(TableError, match="not a readable solo table"):
        read_table(cut)
    short = SoloTable(DEFAULT_POINTS, True, np.zeros(10), 0.0)
    with pytest.raises(TableError, match="truncated or damaged"):
        read_table(write_table(short, tmp_path / "short.npz"))
    data = dict(np.load(path))
    data["values"] = data["values"].copy()
    data["values"][5] += 1
    np.savez(tmp_path / "edited.npz", **data)
    with pytest.raises(TableError, match="checksum"):
        read_table(tmp_path / "edited.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(TableError, match="not a readable solo table"):
        read_table(tmp_path / "text.npz")
    with pytest.raises(TableError, match="no such table file"):
        read_table(tmp_path / "absent.npz")


# --------------------------------------------------------------------------- the solver
def test_the_solver_resumes_and_reproduces_the_shipped_layers(tmp_path: Path) -> None:
    solve_mod = pytest.importorskip("shelfie_env.solo.solve")
    out = tmp_path / "run"
    said: list[str] = []
    assert solve_mod.solve(DEFAULT_POINTS, out, say=said.append, stop_after=2) is None
    progress = json.loads((out / "progress.json").read_text())
    assert progress["layers_done"] == [21, 20]
    assert solve_mod.solve(DEFAULT_POINTS, out, say=said.append, stop_after=1) is None
    assert any(line.startswith("resuming") for line in said)
    values = np.memmap(out / "values.f64", dtype=np.float64, mode="r")
    filled = np.array([B.filled_cells(tuple(b)) for b in B.symmetric_boards()])
    top = filled >= 19
    assert np.allclose(values[top], shipped_table().values[top], rtol=0, atol=1e-9)
    assert np.isnan(values[~top]).all()
    with pytest.raises(ValueError, match="other points"):
        solve_mod.solve(tuple((1, 2, 3, 5, 9) for _ in range(5)), out, say=said.append, stop_after=1)


def test_the_estimate_says_how_long_without_symmetry() -> None:
    solve_mod = pytest.importorskip("shelfie_env.solo.solve")
    sym = solve_mod.estimate_seconds(DEFAULT_POINTS, sample=300)
    full = solve_mod.estimate_seconds(tuple((1, 2, 3, 5, 8 + r) for r in range(5)), sample=300)
    assert full > 20 * sym > 0


# --------------------------------------------------------------------------- the command
def test_solo_info_prints_the_optimum(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solo", "info"]) == 0
    out = capsys.readouterr().out
    assert f"E* = {optimum():.6f}" in out and "1,808,664" in out and "shelfie solo solve" in out


def test_solo_solve_refuses_bad_input_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "p.json"
    bad.write_text("[[1, 2, 3]]")
    assert main(["solo", "solve", "--points", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--points" in err and "5x5" in err
    bad.write_text("{not json")
    assert main(["solo", "solve", "--points", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "not JSON" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["solo", "solve", "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the run folder" in err
    assert main(["solo", "info", "--table", str(bad)]) == 2
    assert "not a readable solo table" in capsys.readouterr().err


# --------------------------------------------------------------------------- the bot
def test_solo_optimal_is_a_fast_pure_function_of_the_state() -> None:
    bot = SoloOptimalBot()
    game = Game.new(1, rng=3)
    times, states = [], []
    while not game.over:
        state = game.to_dict()
        t0 = time.perf_counter()
        a = bot.act(state)
        times.append(time.perf_counter() - t0)
        assert a in game.legal_actions()
        states.append((state, a))
        game.step(a)
    assert float(np.median(times)) < 0.05
    fresh = SoloOptimalBot()
    for state, a in states[::-1]:  # asked in another order, the same moves
        assert fresh.act(state) == a


def test_solo_optimal_plays_one_seat_only() -> None:
    from shelfie_env.bots import make, table_sizes

    assert table_sizes("solo-optimal") == (1,)
    with pytest.raises(ValueError, match="one seat"):
        make("solo-optimal", num_players=2)
    with pytest.raises(ValueError, match="one seat"):
        SoloOptimalBot().act(Game.new(2, rng=0).to_dict())


def test_solo_optimal_scores_the_optimum_on_average() -> None:
    bot = SoloOptimalBot()
    scores = []
    for seed in range(150):
        game = Game.new(1, rng=10_000 + seed)
        while not game.over:
            game.step(bot.act_game(game))
        scores.append(game.table.score(game.circled[0]))
    mean, se = float(np.mean(scores)), float(np.std(scores, ddof=1) / np.sqrt(len(scores)))
    assert abs(mean - optimum()) < 4 * se, (mean, se)


def test_the_table_is_package_data() -> None:
    from importlib import resources

    ref = resources.files("shelfie_env.data").joinpath("solo").joinpath("solo_table.npz")
    with resources.as_file(ref) as path:
        assert read_table(path, DEFAULT_POINTS).optimum == optimum()


def test_the_compiled_twin_plays_to_the_optimum() -> None:
    simulate = pytest.importorskip("shelfie_env.solo.simulate")
    scores = simulate.optimal_scores(4000, seed=11)
    assert (scores == simulate.optimal_scores(4000, seed=11)).all()  # a seed gives the same games
    se = scores.std(ddof=1) / np.sqrt(len(scores))
    assert abs(scores.mean() - optimum()) < 4 * se, (scores.mean(), se)
    assert scores.min() >= 0 and scores.max() <= 190
