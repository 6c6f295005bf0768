"""The rollout bot: registered with its options, legal and reproducible moves, the base policy's
move unless the rollouts show a better one."""

from __future__ import annotations

import pytest

from shelfie_env.bots import act_on_game, available, make
from shelfie_env.bots.rollout.bot import RolloutBot
from shelfie_env.bots.spec import build_bot, parse_spec
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import Game


def _late_positions(seed: int) -> list[Game]:
    bot = make("td")
    g = Game.new(2, rng=DiceTape(seed))
    out = []
    while not g.over:
        out.append(g.clone())
        g.step(act_on_game(bot, g))
    return [p for p in out[-12:] if len(p.legal_actions()) > 1]


def test_registered_with_options() -> None:
    assert "rollout" in available()
    name, options = parse_spec("rollout:rollouts=4,time=0.5,width=3,z=0.5,seed=2,policy=td")
    assert name == "rollout" and options == {
        "rollouts": 4,
        "time": 0.5,
        "width": 3,
        "z": 0.5,
        "seed": 2,
        "policy": "td",
    }
    bot = build_bot("rollout:rollouts=4,width=3")
    assert isinstance(bot, RolloutBot) and bot.rollouts == 4 and bot.width == 3
    with pytest.raises(ValueError, match="rollouts must be an integer"):
        parse_spec("rollout:rollouts=many")
    with pytest.raises(ValueError, match="width must be at least 1"):
        build_bot("rollout:width=0")


def test_legal_reproducible_and_improves_on_base_only_when_clear() -> None:
    positions = _late_positions(21)
    a = [make("rollout", rollouts=8, time=30.0, seed=1).act_game(p) for p in positions]
    b = [make("rollout", rollouts=8, time=30.0, seed=1).act_game(p) for p in positions]
    assert a == b
    assert all(x in p.legal_actions() for x, p in zip(a, positions))
    stubborn = make("rollout", rollouts=8, time=30.0, z=1e9)
    td = [make("td").act_game(p) for p in positions]
    assert [stubborn.act_game(p) for p in positions] == td


def test_plays_a_whole_game() -> None:
    g = Game.new(2, rng=DiceTape(4))
    bots = [make("rollout", rollouts=2, time=0.05, width=2), make("greedy")]
    while not g.over:
        g.step(act_on_game(bots[g.current], g))
    bot = bots[0]
    assert isinstance(bot, RolloutBot) and bot.last["rollouts"] >= 2
