"""Checkpoints of the batched games: ``state()`` / ``load_state()`` round trips and refusals of bad states."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from shelfie_env.batched import BatchedGame, random_legal_actions, seed_streams  # noqa: E402
from shelfie_env.batched import _kernels as K  # noqa: E402
from shelfie_env.bots import make  # noqa: E402
from shelfie_env.envs.vector import BatchedSeats  # noqa: E402


def _played(batch: BatchedGame, steps: int, seed: int = 0) -> BatchedGame:
    """``batch`` after ``steps`` random moves (finished games restarted)."""
    streams = seed_streams(seed, batch.num_envs)
    for _ in range(steps):
        if batch.step(batch.random_actions(rng=streams)):
            batch.reset(which=batch.done)
    return batch


def _trace(batch: BatchedGame, steps: int) -> list[np.ndarray]:
    """The state rows after each of ``steps`` random moves (dice and moves from the batch's own streams)."""
    out = []
    for _ in range(steps):
        if batch.step(batch.random_actions()):
            batch.reset(which=batch.done)
        out.append(batch.S.copy())
    return out


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two ``state()`` dicts hold the same values."""
    if a.keys() != b.keys():
        return False
    for k in a:
        if isinstance(a[k], np.ndarray):
            if a[k].dtype != b[k].dtype or not np.array_equal(a[k], b[k]):
                return False
        elif a[k] != b[k]:
            return False
    return True


# ------------------------------------------------------------------ BatchedGame
@pytest.mark.parametrize("players", [1, 2, 4])
def test_a_batch_loaded_from_a_state_plays_on_exactly_as_the_original(players: int) -> None:
    batch = _played(BatchedGame(16, players, seed=1), 40)
    saved = batch.state()
    assert saved.keys() == {"num_players", "S", "M", "dice"}
    copy = BatchedGame(16, players, seed=99)
    copy.load_state(saved)
    assert _same(copy.state(), saved)
    for a, b in zip(_trace(batch, 60), _trace(copy, 60)):
        np.testing.assert_array_equal(a, b)
    assert not _same(batch.state(), saved)  # the saved state is a copy, not a view


def _batch_refusal_cases() -> list[tuple[str, Any, str]]:
    n = 6
    base = _played(BatchedGame(n, 2, seed=2), 30).state()
    other_points = _played(BatchedGame(n, 2, points=[[10, 20, 30, 40, 50]] * 5, seed=2), 400)
    assert other_points.scores.any()
    circled = _played(BatchedGame(n, 3, seed=2), 30).state()

    def edit(**changes: Any) -> dict[str, Any]:
        return {**base, **changes}

    masks = base["M"].copy()
    masks[3, 0] = ~masks[3, 0]
    more_seats = base["S"].copy()
    more_seats[0, K.CIRC + 2] = 1
    bad_phase = base["S"].copy()
    bad_phase[1, K.PHASE] = 7
    bad_dice = base["S"].copy()
    bad_dice[2, K.DICE] = 6
    no_dice = dict(base)
    del no_dice["dice"]
    return [
        ("missing key", no_dice, "missing key 'dice'"),
        ("not a mapping", [1, 2], "expected a mapping"),
        ("other players", {**circled}, "num_players: the state holds games of 3 players, this batch 2"),
        ("fewer games", edit(S=base["S"][:4], M=base["M"][:4]), "S: the state holds 4 games, this batch 6"),
        ("more games in dice", edit(dice=np.zeros(7, np.uint64)), "dice: the state holds 7 games"),
        ("S of another width", edit(S=base["S"][:, :20]), r"S: expected an integer array of shape \(6, 36\)"),
        ("S of floats", edit(S=base["S"].astype(float)), "S: expected integers"),
        ("dice of int64", edit(dice=base["dice"].astype(np.int64)), "dice: expected uint64"),
        ("M of ints", edit(M=base["M"].astype(int)), "M: expected bool"),
        ("masks of other moves", edit(M=masks), "M: the legal masks of game 3"),
        ("columns of a third seat", edit(S=more_seats), "S: columns of seats 2.. are in use"),
        ("a phase that is none", edit(S=bad_phase), "S: phase out of 0..3"),
        ("a seventh face", edit(S=bad_dice), "S: dice out of 0..5"),
        ("another points table", edit(S=other_points.S.copy(), M=other_points.M.copy()), "points table"),
    ]


@pytest.mark.parametrize(("case", "state", "message"), _batch_refusal_cases(), ids=lambda x: str(x)[:24])
def test_a_bad_batch_state_is_refused_by_name_and_changes_nothing(
    case: str, state: Any, message: str
) -> None:
    batch = _played(BatchedGame(6, 2, seed=5), 10)
    before = batch.state()
    with pytest.raises(ValueError, match=message):
        batch.load_state(state)
    assert _same(batch.state(), before), case


def test_a_state_of_fewer_players_is_refused() -> None:
    batch = BatchedGame(4, 3, seed=1)
    before = batch.state()
    with pytest.raises(ValueError, match="num_players: the state holds games of 2 players, this batch 3"):
        batch.load_state(BatchedGame(4, 2, seed=1).state())
    assert _same(batch.state(), before)


# ----------------------------------------------------------------- BatchedSeats
def _learner_steps(core: BatchedSeats, steps: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    """Random learner moves through ``core`` (finished games restarted): what each step returned."""
    streams = seed_streams(seed, core.num_envs)
    out = []
    for _ in range(steps):
        rewards, ended = core.step(random_legal_actions(core.legal_masks(), streams))
        if ended.any():
            core.reset_games(ended)
        out.append((rewards, ended, core.observe(), core.learner.copy(), core.ep_return.copy()))
    return out


class _Pool:
    """A pool of the built-in bots drawn per game, with codes for checkpoints."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.bots = [make("random", seed=seed), make("greedy")]

    def draw(self) -> Any:
        return self.bots[int(self.rng.integers(2))]

    def code(self, bot: Any) -> int:
        return self.bots.index(bot)

    def bot(self, code: int) -> Any:
        return self.bots[code]


@pytest.mark.parametrize(
    ("players", "opponents", "seat"),
    [(1, (), 0), (2, "random", None), (3, ["greedy", "random"], None), (2, "greedy", 1)],
)
def test_seats_loaded_from_a_state_play_on_exactly_as_the_original(players, opponents, seat) -> None:
    core = BatchedSeats(8, players, seat=seat, opponents=opponents, seed=3)
    _learner_steps(core, 25, seed=0)
    saved = core.state()
    copy = BatchedSeats(8, players, seat=seat, opponents=opponents, seed=77)
    copy.load_state(saved)
    assert _same(copy.state(), saved)
    for a, b in zip(_learner_steps(core, 80, seed=1), _learner_steps(copy, 80, seed=1)):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_seats_whose_opponents_are_a_pool_round_trip_with_the_pools_codes() -> None:
    pool = _Pool(4)
    core = BatchedSeats(8, 2, opponents=[pool], seed=4)
    _learner_steps(core, 25, seed=0)
    with pytest.raises(ValueError, match="encode_bot"):
        core.state()
    saved = core.state(pool.code)
    with pytest.raises(ValueError, match="decode_bot"):
        BatchedSeats(8, 2, opponents=[_Pool(4)], seed=4).load_state(saved)
    twin_pool = _Pool(4)
    copy = BatchedSeats(8, 2, opponents=[twin_pool], seed=9)
    copy.load_state(saved, twin_pool.bot)
    twin_pool.rng.bit_generator.state = pool.rng.bit_generator.state
    assert _same(copy.state(twin_pool.code), saved)
    for a, b in zip(_learner_steps(core, 80, seed=1), _learner_steps(copy, 80, seed=1)):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def _seats_refusal_cases() -> list[tuple[str, Any, str]]:
    core = BatchedSeats(6, 2, opponents="greedy", seed=6)
    _learner_steps(core, 10, seed=0)
    base = core.state()
    three = BatchedSeats(6, 3, opponents=["greedy", "greedy"], seed=6).state()

    def edit(**changes: Any) -> dict[str, Any]:
        return {**base, **changes}

    swapped = base["seat_bots"][:, ::-1].copy()
    wrong_kind = base["kinds"].copy()
    wrong_kind[base["seat_bots"] == 0] = 0
    no_learner = dict(base)
    del no_learner["learner"], no_learner["kinds"]
    return [
        ("missing keys", no_learner, "missing keys 'learner', 'kinds'"),
        (
            "other players",
            {**three, "num_players": 2},
            "seat_bots: the state holds games of 3 players, these games 2",
        ),
        ("fewer games", edit(learner=base["learner"][:5]), "learner: the state holds 5 games, this batch 6"),
        ("a seat that is none", edit(learner=np.full(6, 2)), r"learner: seats must be 0\.\.1"),
        ("learner code elsewhere", edit(seat_bots=swapped, kinds=base["kinds"][:, ::-1].copy()), "seat_bots"),
        ("a code of no bot", edit(seat_bots=np.where(base["seat_bots"] < 0, -1, 5)), "code 5"),
        ("kinds of other bots", edit(kinds=wrong_kind), "kinds: not the compiled kinds"),
        ("a seat_rng of nothing", edit(seat_rng={"bit_generator": "MT19937"}), "seat_rng"),
        ("bot_rng of floats", edit(bot_rng=base["bot_rng"].astype(float)), "bot_rng: expected uint64"),
        ("ep_length of floats", edit(ep_length=base["ep_length"] + 0.5), "ep_length: expected integers"),
        ("bad games", edit(M=~base["M"]), "M: the legal masks"),
    ]


@pytest.mark.parametrize(("case", "state", "message"), _seats_refusal_cases(), ids=lambda x: str(x)[:24])
def test_a_bad_seats_state_is_refused_by_name_and_changes_nothing(
    case: str, state: Any, message: str
) -> None:
    core = BatchedSeats(6, 2, opponents="greedy", seed=8)
    _learner_steps(core, 5, seed=3)
    before = core.state()
    with pytest.raises(ValueError, match=message):
        core.load_state(state)
    assert _same(core.state(), before), case


def test_a_fixed_learner_seat_refuses_a_state_of_other_seats() -> None:
    saved = BatchedSeats(4, 2, seat=None, opponents="random", seed=11).state()
    saved["learner"] = np.array([0, 1, 1, 0])
    fixed = BatchedSeats(4, 2, seat=0, opponents="random", seed=11)
    with pytest.raises(ValueError, match="learner: these games seat the learner in seat 0"):
        fixed.load_state(saved)


def test_the_benchmark_env_state_refuses_a_missing_pool_stream_and_changes_nothing() -> None:
    tasks = pytest.importorskip("shelfie_env.benchmark.tasks")
    pool = tasks.MixPool(0.5, seed=1)
    core = BatchedSeats(4, 2, opponents=[pool], seed=1)
    saved = tasks.seats_state(core, pool)
    _learner_steps(core, 5, seed=2)
    before, pool_before = core.state(pool.code), pool.rng.bit_generator.state
    broken = dict(saved)
    del broken["pool_rng"]
    with pytest.raises(ValueError, match="pool_rng"):
        tasks.load_seats_state(core, pool, broken)
    with pytest.raises(ValueError, match="ep_return"):
        tasks.load_seats_state(core, pool, {**saved, "ep_return": np.zeros(3)})
    assert _same(core.state(pool.code), before) and pool.rng.bit_generator.state == pool_before
    tasks.load_seats_state(core, pool, saved)
    assert _same(tasks.seats_state(core, pool), saved)
