"""The bracket against greedy: the tape-reading clairvoyant and the best response to greedy."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env import bots
from shelfie_env.arena.protocol import play_game
from shelfie_env.bots.bracket.best_response import (
    GreedyBestResponse,
    placement_options,
    play_placement,
    rival_reply,
)
from shelfie_env.bots.bracket.clairvoyant import ClairvoyantBot, TurnChooser, outcome, roll_out
from shelfie_env.bots.bracket.turn import play_plan, reachable
from shelfie_env.bots.greedy import GreedyBot
from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.planner.placements import SET_MASKS
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import CIRCLE, CROSS, REROLL, Game
from shelfie_env.game.scoring import ROW_MASKS


def _turn_starts(seed: int, count: int) -> list[Game]:
    """Positions at a turn's first decision of a greedy-vs-greedy game on tape ``seed``."""
    game, greedy, out = Game.new(2, rng=DiceTape(seed)), GreedyBot(), []
    while not game.over and len(out) < count:
        if game.phase == REROLL and game.rolls_left == 2:
            out.append(game.clone())
        game.step(greedy.act_game(game))
    return out


def _placement_of(before: Game, after: Game, seat: int) -> int:
    """The placement (``NUM_SET_VALUES`` index) ``seat``'s turn ended with, read from the shelves."""
    circled = after.circled[seat] & ~before.circled[seat]
    if circled:
        return int(np.flatnonzero(SET_MASKS == circled)[0])
    crossed = after.crossed[seat] & ~before.crossed[seat]
    return NUM_SETS + next(r for r in range(5) if crossed & ROW_MASKS[r])


def _all_turn_endings(game: Game) -> set[int]:
    """Brute force: every placement reachable by playing every legal action sequence of the turn."""
    seat, turn, out = game.current, game.round, set()
    stack, seen = [game], set()
    while stack:
        g = stack.pop()
        key = (g.phase, g.rolls_left, tuple(g.dice))
        if key in seen:  # the same dice at the same point of the turn: the same futures
            continue
        seen.add(key)
        if g.phase == REROLL:
            for a in g.legal_actions():
                child = g.clone()
                child.step(a)
                stack.append(child)
        elif g.phase in (CIRCLE, CROSS):
            for placement in placement_options(g):
                end = g.clone()
                play_placement(end, placement)
                assert end.over or (end.current, end.round) != (seat, turn)
                out.add(_placement_of(game, end, seat))
    return out


def test_bots_are_registered_and_play_only_two_player_tables() -> None:
    assert isinstance(bots.make("clairvoyant", width=2), ClairvoyantBot)
    assert isinstance(bots.make("greedy-br", top=2, samples=4), GreedyBestResponse)
    for name in ("clairvoyant", "greedy-br"):
        assert name in bots.available()
        assert bots.table_sizes(name) == (2,)
        with pytest.raises(ValueError, match="2-player"):
            bots.check_table(name, 3, tape=True)


def test_clairvoyant_refuses_a_game_without_a_tape() -> None:
    bot = bots.make("clairvoyant")
    with pytest.raises(ValueError, match="DiceTape"):
        bot.act_game(Game.new(2, rng=np.random.default_rng(0)))
    with pytest.raises(ValueError, match="DiceTape"):
        bot.act(Game.new(2, rng=3).to_dict())


@pytest.mark.parametrize("seed", [10_000_000, 10_000_001])
def test_reachable_plans_are_exactly_the_turns_possible_endings_and_each_plan_gets_there(seed: int) -> None:
    for start in _turn_starts(seed, 6)[::2]:
        plans = reachable(start)
        assert {p.placement for p in plans} == _all_turn_endings(start)
        for plan in plans:
            g = start.clone()
            play_plan(g, plan)
            assert _placement_of(start, g, start.current) == plan.placement


@pytest.mark.parametrize("seat", [0, 1])
def test_a_rollout_on_a_copy_sees_the_dice_the_real_game_gets(seat: int) -> None:
    """The base policy (width 0) played for real and the rollout of a copy from the start are the same game."""
    seed = 10_000_003
    chooser = ClairvoyantBot(width=0).chooser
    simulated = roll_out(Game.new(2, rng=DiceTape(seed)), seat, chooser.best, GreedyBot())
    players: list = [GreedyBot(), GreedyBot()]
    players[seat] = ClairvoyantBot(width=0)
    assert play_game(players, seed) == simulated


@pytest.mark.parametrize("seat", [0, 1])
def test_the_search_never_finishes_below_its_base_policy(seat: int) -> None:
    """A rollout algorithm on a deterministic game: each turn's choice ends at least as well as its rollout."""
    seed = 10_000_004
    base = outcome(roll_out(Game.new(2, rng=DiceTape(seed)), seat, TurnChooser(_net()).best, GreedyBot()), seat)
    players: list = [GreedyBot(), GreedyBot()]
    players[seat] = ClairvoyantBot(width=3, net=_net())
    assert outcome(play_game(players, seed), seat) >= base


def _net():  # type: ignore[no-untyped-def]
    return ClairvoyantBot().chooser.net


def test_the_best_responses_model_of_greedy_is_greedy_as_it_plays() -> None:
    """Simulating greedy's reply on the tape's own dice gives the shelves the real game reaches."""
    greedy = GreedyBot()
    checked = 0
    for seed in (10_000_005, 10_000_006):
        tape = DiceTape(seed)
        game = Game.new(2, rng=tape)
        while not game.over:
            if game.phase == CIRCLE and game.circles == 0 and game.num_players == 2:
                me = game.current
                real = game.clone()
                while not real.over and real.current == me:
                    real.step(greedy.act_game(real))
                placement = _placement_of(game, real, me)
                rival = 1 - me
                turn = game.round + (1 if rival < me else 0)
                sim, _ = rival_reply(game, placement, tape.faces(rival, turn), greedy)
                while not real.over and real.current != me:
                    real.step(greedy.act_game(real))
                assert (sim.circled, sim.crossed, sim.over) == (real.circled, real.crossed, real.over)
                checked += 1
            game.step(greedy.act_game(game))
    assert checked > 20


def test_best_response_plays_legally_and_never_draws_on_the_games_dice() -> None:
    bot = bots.make("greedy-br", top=3, samples=4)
    game = Game.new(2, rng=np.random.default_rng(11))
    greedy = GreedyBot()
    while not game.over:
        player = bot if game.current == 0 else greedy
        state = game.rng.bit_generator.state
        action = player.act_game(game)
        assert game.rng.bit_generator.state == state
        assert action in game.legal_actions()
        game.step(action)


def test_the_clairvoyant_is_never_offered_as_an_opponent() -> None:
    from shelfie_env.play.web.service import GameService

    assert bots.needs_tape("clairvoyant") and not bots.needs_tape("greedy-br")
    assert "clairvoyant" not in GameService.bot_tables() and "clairvoyant" not in GameService.bot_names()
    from shelfie_env.play.terminal import _load_bot

    with pytest.raises(ValueError, match="reads the dice ahead"):
        _load_bot("clairvoyant", 0, 2)
