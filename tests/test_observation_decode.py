"""``observation.decode`` gives back the position an observation shows."""

from __future__ import annotations

import numpy as np
import pytest

from shelfie_env.bots import make
from shelfie_env.game.engine import Game
from shelfie_env.observation.vector import decode, encode


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_decode_inverts_encode_from_every_seat(players):
    bot = make("random", seed=players)
    for seed in range(3):
        game = Game.new(players, rng=seed)
        while True:
            for seat in range(players):
                x = encode(game, seat)
                back = decode(x, players)
                np.testing.assert_array_equal(encode(back, seat), x)
                if not game.over:
                    assert back.legal_actions() == game.legal_actions()
            if game.over:
                break
            game.step(bot.act_game(game))


def test_decode_refuses_what_is_not_an_observation():
    with pytest.raises(ValueError, match="186 entries"):
        decode(np.zeros(10), 2)
    with pytest.raises(ValueError, match="legal position"):
        decode(np.ones(186), 2)
