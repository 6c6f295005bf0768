"""An after-state policy: every legal action scored by the positions it can lead to. Numpy only.

The network is an :class:`~shelfie_env.bots.learned.afterstate.AfterstateNet`:
one value for each position a turn can end in (a circle set or a cross-out;
game-ending ones exactly). Every legal action then gets the value of what it
leads to, by the planner's exact recursion over the dice
(:func:`~shelfie_env.bots.planner.search.action_values`): a reroll its expected
best placement, a circle its best completion, a cross-out its own position.
The policy is ``softmax(beta * value)`` over the legal actions; ``beta`` is
learned with the network (``shelfie_env.train.ppo_afterstate``).
``deterministic=True`` plays the best action, ``False`` samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.bots.learned.afterstate import AfterstateNet
from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card
from shelfie_env.bots.learned.policy import read_weights
from shelfie_env.bots.learned.value import ValueBot
from shelfie_env.bots.planner.search import action_values, best_action
from shelfie_env.game.engine import Game


def is_afterstate_policy(weights: dict[str, np.ndarray]) -> bool:
    """Whether a model's arrays are an after-state policy (value layers plus ``beta``)."""
    return "beta" in weights and "values.0.weight" in weights


class AfterstatePolicyBot(ValueBot):
    """Plays ``softmax(beta * action value)``: the best action, or a sample when not deterministic."""

    name = "ppo"

    def __init__(
        self,
        net: AfterstateNet,
        beta: float,
        card: dict[str, Any] | None = None,
        deterministic: bool = True,
        seed: int | None = None,
    ) -> None:
        super().__init__(net, card)
        if not np.isfinite(beta) or beta <= 0:
            raise ValueError(f"beta must be a positive number, got {beta!r}")
        self.beta = float(beta)
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    def probabilities(self, game: Game) -> dict[int, float]:
        """The policy over the legal actions of the player on turn."""
        values = action_values(game, ctx=self.context(game))  # type: ignore[arg-type]
        ids = list(values)
        logits = self.beta * np.array([values[a] for a in ids], dtype=np.float64)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return dict(zip(ids, p.tolist()))

    def act_game(self, game: Game) -> int:
        if game.num_players != self.num_players:
            raise ValueError(
                f"this model plays {self.num_players}-player games, the game has {game.num_players}"
            )
        if game.over:
            raise ValueError("no legal action: the game is over")
        if self.deterministic:
            return best_action(action_values(game, ctx=self.context(game)))  # type: ignore[arg-type]
        probs = self.probabilities(game)
        ids = list(probs)
        return int(ids[self.rng.choice(len(ids), p=np.array([probs[a] for a in ids]))])

    def state(self) -> dict[str, np.ndarray]:
        """Arrays for ``np.savez``: the value layers, ``margin_coef`` and ``beta``."""
        return {**self.net.state(), "beta": np.array(self.beta)}


def policy_from_weights(
    weights: dict[str, np.ndarray],
    card: dict[str, Any],
    deterministic: bool = True,
    seed: int | None = None,
) -> AfterstatePolicyBot:
    """The bot of an after-state policy's arrays and its (checked) card."""
    net = AfterstateNet.from_state(weights, card["num_players"])
    return AfterstatePolicyBot(net, float(weights["beta"]), card, deterministic, seed)


def load_afterstate_policy(
    path: str | Path, num_players: int | None = None, deterministic: bool = True, seed: int | None = None
) -> AfterstatePolicyBot:
    """An :class:`AfterstatePolicyBot` from an ``.npz`` and its card."""
    card = load_card(path, num_players)
    weights = read_weights(path)
    if not is_afterstate_policy(weights):
        raise CheckpointMismatchError(f"{path}: not an after-state policy (no beta / values.0.weight arrays)")
    try:
        return policy_from_weights(weights, card, deterministic, seed)
    except (KeyError, ValueError) as exc:
        raise CheckpointMismatchError(f"{path}: not an after-state policy ({exc})") from None
