"""The PettingZoo AEC env ``shelfie_v0``: PettingZoo's own checkers plus the SPEC §6 contract."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from shelfie_env import shelfie_v0
from shelfie_env.game.actions import CROSS_BASE, NUM_ACTIONS, STOP, circle_action
from shelfie_env.game.errors import IllegalActionError, InvalidStateError
from shelfie_env.observation.vector import encode, observation_size

from .conftest import board, make_state

CAT_ROW = 4


def random_legal(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(len(legal))])


def play_out(env, rng: np.random.Generator, check=None) -> None:
    """Random legal play until every agent is removed; ``check(env, agent, obs)`` runs before each move."""
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if check is not None:
            check(env, agent, obs)
        env.step(random_legal(obs, rng))


# ----------------------------------------------------------------- PettingZoo's own checkers
@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_api_test(num_players: int) -> None:
    with warnings.catch_warnings():
        # Dict observations are PettingZoo's documented form for action masks (as in connect_four).
        warnings.simplefilter("ignore", UserWarning)
        api_test(shelfie_v0.env(num_players=num_players), num_cycles=1000)


@pytest.mark.parametrize("num_players", [2, 3])
def test_seed_test(num_players: int) -> None:
    seed_test(lambda: shelfie_v0.env(num_players=num_players), num_cycles=300)


def test_render_test(capsys: pytest.CaptureFixture[str]) -> None:
    render_test(shelfie_v0.env, custom_tests={"ansi": lambda text: "Dice:" in text and "plants" in text})
    assert "Dice:" in capsys.readouterr().out  # "human" printed the table


def test_metadata_spaces_and_agents() -> None:
    env = shelfie_v0.env(num_players=3)
    env.reset(seed=0)
    assert env.metadata == {
        "render_modes": ["ansi", "human"], "name": "shelfie_v0", "is_parallelizable": False, "render_fps": 2
    }
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    space = env.observation_space("player_1")
    assert space["observation"].shape == (observation_size(3),) == (63 * 3 + 60,)
    assert space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
    assert env.action_space("player_2").n == 120
    assert str(env) == "shelfie_v0"


def test_registered_in_pettingzoo_registry() -> None:
    env = pettingzoo.make("aec", "shelfie/shelfie_v0", num_players=3)
    env.reset(seed=1)
    assert env.unwrapped.metadata["name"] == "shelfie_v0" and env.num_agents == 3


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_players": 5}, "num_players"),
        ({"num_players": 0}, "num_players"),
        ({"reward_mode": "win"}, "reward_mode"),
        ({"render_mode": "rgb_array"}, "render_mode"),
        ({"points": [[1, 2, 3]]}, "points"),
    ],
)
def test_bad_constructor_arguments(kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        shelfie_v0.env(**kwargs)


# ----------------------------------------------------------------- observations and masks
def test_masks_zero_off_turn_and_never_empty_on_turn() -> None:
    env = shelfie_v0.env(num_players=3)
    seen = {"checked": 0}

    def check(env, agent, obs) -> None:
        game = env.unwrapped.game
        assert env.agent_selection == f"player_{game.current}"
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].sum() > 0
        assert set(np.flatnonzero(obs["action_mask"])) == set(game.legal_actions())
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any(), other
        seen["checked"] += 1

    for seed in range(3):
        env.reset(seed=seed)
        play_out(env, np.random.default_rng(seed), check)
    assert seen["checked"] > 100


def test_observation_matches_reference_encoder_for_every_agent() -> None:
    env = shelfie_v0.env(num_players=4)

    def check(env, agent, obs) -> None:
        game = env.unwrapped.game
        for seat, name in enumerate(env.possible_agents):
            o = env.observe(name)["observation"]
            np.testing.assert_array_equal(o, encode(game, seat))

    for seed in range(2):
        env.reset(seed=seed)
        play_out(env, np.random.default_rng(seed), check)


def test_memoised_encoder_keeps_player_counts_apart() -> None:
    # The memo is shared by all envs of a process: the same dice/turn in games of
    # different sizes must still give each its own (correctly sized) vector.
    from shelfie_env.game.engine import Game
    from shelfie_env.observation.vector import ObservationEncoder

    for n in (1, 2, 3, 4, 3, 2, 1):
        game = Game.from_dict(make_state(num_players=n, boards=[board()] * n, phase="reroll", rolls_left=2,
                                         dice=[0, 1, 1, 3, 4, 5]))
        for seat in range(n):
            got = ObservationEncoder(n).encode(game, seat)
            np.testing.assert_array_equal(got, encode(game, seat))


def test_seat_block_is_the_observers_absolute_seat() -> None:
    # Layout v2: everything is written from the observer's seat except the last
    # block, a one-hot of the observer's own seat (who moves last in a round).
    from shelfie_env.game.engine import Game
    from shelfie_env.observation.vector import OBS_VERSION, layout

    assert OBS_VERSION == 2
    n = 3
    name, start, stop = layout(n)[-1]
    assert (name, stop - start, stop) == ("seat", n, observation_size(n))
    game = Game.from_dict(make_state(num_players=n, boards=[board()] * n, current=0,
                                     phase="reroll", rolls_left=2, dice=[0, 1, 1, 3, 4, 5]))
    on_turn = {b: a for b, a, _ in layout(n)}["on_turn"]
    for seat in range(n):
        obs = encode(game, seat)
        assert obs[start:].tolist() == [float(s == seat) for s in range(n)]
        assert obs[on_turn + (0 - seat) % n] == 1.0  # the mover, relative to the observer
    # the shelves are all empty: seats 1 and 2 differ only in the two seat-dependent blocks
    a, b = encode(game, 1), encode(game, 2)
    differ = set(np.flatnonzero(a != b).tolist())
    assert differ == {on_turn + 2, on_turn + 1, start + 1, start + 2}


def test_observations_are_fresh_arrays() -> None:
    env = shelfie_v0.env()
    env.reset(seed=0)
    a = env.observe("player_0")
    a["observation"][:] = 7
    a["action_mask"][:] = 7
    b = env.observe("player_0")
    assert b["observation"].max() <= 1.0 and b["action_mask"].max() == 1


def test_active_agent_keeps_selection_for_its_whole_turn() -> None:
    env = shelfie_v0.env()
    env.reset(seed=3)
    game = env.unwrapped.game
    assert env.agent_selection == "player_0" and game.phase_name == "reroll"
    env.step(STOP)  # stop rolling: still player_0, now circling or crossing
    assert env.agent_selection == "player_0"
    assert game.phase_name in ("circle", "cross")
    while game.current == 0:
        obs = env.observe("player_0")
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.agent_selection == "player_1"


# ----------------------------------------------------------------- errors
def test_illegal_action_raises_and_changes_nothing() -> None:
    env = shelfie_v0.env()
    env.reset(seed=0)
    before = env.unwrapped.state_dict()
    with pytest.raises(IllegalActionError, match="cross"):
        env.step(CROSS_BASE)  # crossing a row is never legal in the reroll phase
    assert env.unwrapped.state_dict() == before
    assert env.agent_selection == "player_0"
    with pytest.raises(AssertionError, match="action 120 of player_0 is not in the action space"):
        env.step(NUM_ACTIONS)  # out of range: PettingZoo's AssertOutOfBoundsWrapper
    with pytest.raises(AssertionError, match="None is only for terminated agents"):
        env.step(None)
    with pytest.raises(IllegalActionError, match="0..119"):
        env.unwrapped.step(NUM_ACTIONS)  # the raw env names the problem too
    with pytest.raises(ValueError, match="must act"):
        env.unwrapped.step(None)
    env.step(STOP)  # the env is still usable
    assert env.unwrapped.game.phase_name in ("circle", "cross")


def test_numpy_integer_actions_are_accepted() -> None:
    env = shelfie_v0.env()
    env.reset(seed=0)
    env.step(np.int32(STOP))
    assert env.unwrapped.game.phase_name in ("circle", "cross")


# ----------------------------------------------------------------- state dict and reset options
def test_state_round_trip_through_reset() -> None:
    env = shelfie_v0.env(num_players=3)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(25):
        env.step(random_legal(env.observe(env.agent_selection), rng))
    state = json.loads(json.dumps(env.unwrapped.state_dict()))
    other = shelfie_v0.env(num_players=3)
    other.reset(seed=99, options={"state": state})
    assert other.unwrapped.state_dict() == env.unwrapped.state_dict()
    assert other.agent_selection == env.agent_selection
    for agent in env.agents:
        a, b = env.observe(agent), other.observe(agent)
        np.testing.assert_array_equal(a["observation"], b["observation"])
        np.testing.assert_array_equal(a["action_mask"], b["action_mask"])


def test_seed_controls_the_dice() -> None:
    def first_rolls(seeds) -> list[list[int]]:
        env = shelfie_v0.env()
        out = []
        for s in seeds:
            env.reset(seed=s)
            out.append(list(env.unwrapped.game.dice))
        return out

    assert first_rolls(range(5, 25)) == first_rolls(range(5, 25))
    assert first_rolls(range(5, 25)) != first_rolls(range(6, 26))

    def continued(seed: int) -> list[list[int]]:
        env = shelfie_v0.env()
        env.reset(seed=seed)
        out = []
        for _ in range(10):
            env.reset()  # no seed: the same generator continues
            out.append(list(env.unwrapped.game.dice))
        return out

    assert continued(5) == continued(5)
    assert len({tuple(d) for d in continued(5)}) > 1


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda s: s.update(dice=[5, 4, 3, 2, 1, 0]), "dice"),
        (lambda s: s.update(phase="thinking"), "phase"),
        (lambda s: s.update(boards=s["boards"][:1]), "boards"),
        (lambda s: s.update(rolls_left=7), "rolls_left"),
        (lambda s: s.pop("spent"), "spent"),
    ],
)
def test_malformed_state_raises_value_error_naming_the_field(mutate, field: str) -> None:
    env = shelfie_v0.env()
    env.reset(seed=0)
    state = env.unwrapped.state_dict()
    mutate(state)
    with pytest.raises(ValueError, match=field) as info:
        env.reset(options={"state": state})
    assert isinstance(info.value, InvalidStateError)


def test_state_with_other_player_count_is_refused() -> None:
    env = shelfie_v0.env(num_players=2)
    state = make_state(num_players=3, boards=[board()] * 3, phase="reroll", rolls_left=2)
    with pytest.raises(ValueError, match="num_players"):
        env.reset(options={"state": state})


def test_unknown_reset_option_warns() -> None:
    env = shelfie_v0.env()
    with pytest.warns(UserWarning, match="stat"):
        env.reset(seed=0, options={"stat": {}})
    assert env.agents == ["player_0", "player_1"]


def test_state_dict_before_reset_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        shelfie_v0.raw_env().state_dict()


# ----------------------------------------------------------------- game end: rewards and infos
def near_end_state(last_seat_rows: list[str], num_players: int = 2) -> dict:
    """Seat 0 finished 19 points (plants row complete, games crossed): the end is triggered.

    The last seat is in a cross phase (six plants; its plants row is locked out), so any
    cross ends its turn and the game. Other seats (3+ players) score 6 (three books).
    """
    boards = [board("OOOOO", "XXXXX")]
    for _ in range(num_players - 2):
        boards.append(board("XXXXX", ".....", "OOO.."))
    boards.append(board("XXXXX", *last_seat_rows))
    return make_state(boards=boards, current=num_players - 1, phase="cross", dice=[0] * 6, rolls_left=0)


def finish(env) -> tuple[dict[str, float], dict[str, dict], dict[str, float]]:
    """Play the last cross; return step rewards, infos and the rewards ``last()`` reports."""
    env.step(CROSS_BASE + CAT_ROW)
    rewards, infos = dict(env.rewards), {a: dict(i) for a, i in env.infos.items()}
    assert all(env.terminations.values()) and len(env.terminations) == env.num_agents
    from_last = {}
    for agent in env.agent_iter():
        _, reward, term, _, _ = env.last()
        assert term
        from_last[agent] = reward
        env.step(None)
    assert env.agents == []
    return rewards, infos, from_last


@pytest.mark.parametrize(
    "rows, mode, expected",
    [
        # last seat scores 6 (three books) and loses to 19
        ([".....", "OOO.."], "rank", [1.0, -1.0]),
        ([".....", "OOO.."], "score", [19.0, 6.0]),
        ([".....", "OOO.."], "margin", [13.0, -13.0]),
        # last seat scores 11 + 8 = 19: a tie
        ([".....", "OO..O", "OO.O."], "rank", [0.0, 0.0]),
        ([".....", "OO..O", "OO.O."], "margin", [0.0, 0.0]),
    ],
)
def test_two_player_final_rewards(rows: list[str], mode: str, expected: list[float]) -> None:
    env = shelfie_v0.env(reward_mode=mode)
    env.reset(options={"state": near_end_state(rows)})
    assert env.agent_selection == "player_1"
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    rewards, infos, from_last = finish(env)
    assert [rewards["player_0"], rewards["player_1"]] == expected
    assert [from_last["player_0"], from_last["player_1"]] == expected
    assert infos["player_0"]["score"] == 19
    assert infos["player_1"]["score"] == (6 if rows[1] == "OOO.." else 19)


@pytest.mark.parametrize(
    "mode, expected",
    [("rank", [1.0, -1.0, 0.0]), ("score", [19.0, 6.0, 11.0]), ("margin", [8.0, -13.0, -8.0])],
)
def test_three_player_final_rewards(mode: str, expected: list[float]) -> None:
    env = shelfie_v0.env(num_players=3, reward_mode=mode)
    env.reset(options={"state": near_end_state([".....", ".....", "OOOO."], num_players=3)})
    rewards, infos, _ = finish(env)
    assert [rewards[f"player_{i}"] for i in range(3)] == expected
    assert [infos[f"player_{i}"]["score"] for i in range(3)] == [19, 6, 11]
    assert infos["player_2"]["scores"] == [19, 6, 11]


@pytest.mark.parametrize("mode, expected", [("rank", 0.0), ("score", 19.0), ("margin", 19.0)])
def test_solo_final_reward(mode: str, expected: float) -> None:
    # Solo: plants complete (19 points), games crossed; a crossed books row ends the game.
    state = make_state(boards=[board("OOOOO", "XXXXX", ".....", ".OO..")], phase="cross",
                       dice=[0] * 6, rolls_left=0)
    env = shelfie_v0.env(num_players=1, reward_mode=mode)
    env.reset(options={"state": state})
    env.step(CROSS_BASE + 2)
    assert env.rewards == {"player_0": expected}
    assert env.infos["player_0"]["score"] == 19


def test_rewards_are_zero_until_the_final_step() -> None:
    env = shelfie_v0.env(num_players=2, reward_mode="score")
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    finals = None
    for agent in env.agent_iter():
        obs, reward, term, _, info = env.last()
        if term:
            finals = finals or {a: env.infos[a]["score"] for a in env.agents}
            assert reward == finals[agent] and info["score"] == finals[agent]
            env.step(None)
            continue
        assert reward == 0 and all(r == 0 for r in env.rewards.values()) and info == {}
        env.step(random_legal(obs, rng))
    assert finals is not None and len(finals) == 2


def test_reset_into_finished_game_terminates_everyone() -> None:
    env = shelfie_v0.env()
    env.reset(options={"state": near_end_state([".....", "OOO.."])})
    env.step(CROSS_BASE + CAT_ROW)
    over = env.unwrapped.state_dict()
    assert over["phase"] == "over"
    env.reset(options={"state": over})
    assert all(env.terminations.values())
    assert {a: i["score"] for a, i in env.infos.items()} == {"player_0": 19, "player_1": 6}
    assert all(r == 0 for r in env.rewards.values())
    assert not env.observe(env.agent_selection)["action_mask"].any()


def test_near_end_position_offers_only_crosses() -> None:
    # Sanity of the hand-built position helpers: the cross phase really has nothing to circle.
    env = shelfie_v0.env()
    env.reset(options={"state": near_end_state([".....", "OOO.."])})
    mask = env.observe("player_1")["action_mask"]
    assert list(np.flatnonzero(mask)) == [CROSS_BASE + r for r in (1, 2, 3, 4)]
    with pytest.raises(IllegalActionError):
        env.step(circle_action(0, 0))


# ----------------------------------------------------------------- rendering
def test_render_modes() -> None:
    env = shelfie_v0.env(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "Dice:" in text and "\033[" not in text
    silent = shelfie_v0.env()
    silent.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert silent.render() is None


def test_human_render_prints_each_step(capsys: pytest.CaptureFixture[str]) -> None:
    env = shelfie_v0.env(render_mode="human")
    env.reset(seed=0)
    env.step(STOP)
    out = capsys.readouterr().out
    assert out.count("Dice:") == 1 and "\033[" not in out  # captured stdout is not a terminal


def test_custom_points_table() -> None:
    points = [[2, 4, 6, 10, 16] for _ in range(5)]
    env = shelfie_v0.env(points=points, reward_mode="score")
    env.reset(seed=0)
    assert env.unwrapped.state_dict()["points"] == points
    # The plants row of seat 0 is complete: 2+4+6+10+16 = 38 with this table.
    state = near_end_state([".....", "OOO.."])
    state["points"] = points
    env.reset(options={"state": state})
    rewards, infos, _ = finish(env)
    assert infos["player_0"]["score"] == 38 and rewards == {"player_0": 38.0, "player_1": 12.0}


def test_score_features_stay_inside_the_space_with_a_big_points_table() -> None:
    points = [[10, 20, 30, 50, 80] for _ in range(5)]  # the best shelf scores 1900 (vs 190 by default)
    env = shelfie_v0.env(points=points)
    box = env.observation_space("player_0")["observation"]
    start = 51 * 2 + 60
    assert box.high[start] == box.high[start + 1] == pytest.approx(9.5)
    assert box.high[:start].max() == box.high[start + 2 :].max() == 1.0
    assert shelfie_v0.env().observation_space("player_0")["observation"].high.max() == 1.0
    state = near_end_state([".....", "OOO.."])
    state["points"] = points
    env.reset(options={"state": state})
    obs = env.observe("player_0")
    assert obs["observation"][start] == pytest.approx(190 / 200)
    assert env.observation_space("player_0").contains(obs)
    with pytest.raises(ValueError, match="points"):
        # the default env's bound is too small for this table
        shelfie_v0.env().reset(options={"state": state})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(shelfie_v0.env(points=points), num_cycles=200)
