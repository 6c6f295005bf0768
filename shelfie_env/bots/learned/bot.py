"""``ppo``: plays from a trained network (an ``.npz`` of weights + its JSON card).

``make("ppo")`` plays the shipped model of each table's player count
(:func:`shipped_model`, loaded on first use); ``make("ppo", num_players=1)``
loads the solo one at once; ``make("ppo", path="runs/x/best.zip")`` any other
model: an exported ``.npz`` or, with the ``train`` extra installed, a
Stable-Baselines3 checkpoint. The card is checked first (env id, observation
layout version and size, action layout, players): a mismatch raises
:class:`~shelfie_env.bots.learned.card.CheckpointMismatchError`. Moves come from
a numpy copy of the actor, so playing needs no torch: ``deterministic=True``
takes the most likely legal action, ``False`` samples from the masked policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card, shipped_file, shipped_sizes
from shelfie_env.bots.learned.policy import NumpyPolicy, read_weights
from shelfie_env.game.engine import Game
from shelfie_env.game.reroll_keep import reroll_mask, spec_actions
from shelfie_env.observation.features import encode_features
from shelfie_env.observation.vector import encode

SHIPPED = {1: "ppo_solo", 2: "ppo_2p"}
SHIPPED_FLAT = {2: "ppo_flat_2p"}
"""The flat-head PPO trained from random weights with no teacher (``shelfie train --algo ppo_flat``)."""
"""Shipped model names by player count (files ``shelfie_env/models/<name>.npz`` + ``.json``)."""


def shipped_model(num_players: int = 2) -> Path:
    """Path of the shipped model for ``num_players``; ``FileNotFoundError`` names the counts that have one."""
    return shipped_file("ppo", SHIPPED, num_players, "shelfie train --players N")


def load_policy(path: str | Path, num_players: int | None = None) -> tuple[NumpyPolicy, dict[str, Any]]:
    """The numpy actor and checked card of the model at ``path`` (``.npz``, or an SB3 ``.zip``)."""
    p = Path(path)
    if p.suffix == "":
        p = next(
            (p.with_suffix(s) for s in (".npz", ".zip") if p.with_suffix(s).is_file()), p.with_suffix(".npz")
        )
    if not p.is_file():
        raise FileNotFoundError(f"no model file at {p}")
    card = load_card(p, num_players)
    activation = str(card.get("config", {}).get("activation", "tanh"))
    if p.suffix == ".zip":
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                f"{p} is a Stable-Baselines3 checkpoint: reading it needs the train extra "
                "(pip install 'shelfie-env[train]'), or export it to .npz with `shelfie train --export`"
            ) from exc
        from shelfie_env.bots.learned.sb3_zip import read_zip_weights

        arrays = read_zip_weights(p)
        _check_input_size(p, arrays, int(card["observation_size"]))
    else:
        arrays = read_weights(p)
    try:
        return NumpyPolicy.from_state_dict(arrays, activation), card
    except (KeyError, ValueError) as exc:
        raise CheckpointMismatchError(
            f"{p}: the weights do not form a policy this package can play ({exc})"
        ) from None


def _check_input_size(path: Path, arrays: dict[str, np.ndarray], size: int) -> None:
    """Refuse weights whose first policy layer does not take the card's ``observation_size``."""
    first = arrays.get("mlp_extractor.policy_net.0.weight")
    if first is not None and (first.ndim != 2 or first.shape[1] != size):
        raise CheckpointMismatchError(
            f"{path}: the network takes observations of shape ({first.shape[-1]},), the card says ({size},)"
        )


class PPOBot:
    """A bot backed by a policy network; plays the seat on turn in games of ``num_players``."""

    name = "ppo"

    def __init__(
        self,
        policy: NumpyPolicy,
        num_players: int,
        deterministic: bool = True,
        seed: int | None = None,
        card: dict[str, Any] | None = None,
    ) -> None:
        self.policy = policy
        self.num_players = num_players
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self.card = card or {}
        self.encode = encode_features if self.card.get("obs", "default") == "features" else encode
        self.reroll = self.card.get("reroll", "ids")

    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        num_players: int | None = None,
    ) -> PPOBot:
        """Load ``path`` (default: the shipped model for ``num_players``, 2 if not given)."""
        source = shipped_model(num_players or 2) if path is None else path
        policy, card = load_policy(source, num_players)
        return cls(policy, card["num_players"], deterministic, seed, card)

    def act_game(self, game: Game) -> int:
        if game.num_players != self.num_players:
            raise ValueError(
                f"this PPO model plays {self.num_players}-player games, the game has {game.num_players}"
            )
        if game.over:
            raise ValueError("no legal action: the game is over")
        obs = self.encode(game, game.current)
        if self.reroll == "ids":
            return self.policy.act(obs, game.legal_mask(), self.deterministic, self.rng)
        dice = np.asarray(game.dice)
        action = self.policy.act(obs, reroll_mask(self.reroll, game.legal_mask(), dice), self.deterministic, self.rng)
        return int(spec_actions(self.reroll, action, dice))

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


class ShippedPPOBot:
    """``make("ppo")`` with no model named: the shipped model of whatever table it is seated at."""

    name = "ppo"

    def __init__(self, deterministic: bool = True, seed: int | None = None) -> None:
        self.deterministic, self.seed = deterministic, seed
        self.rng = np.random.default_rng(seed)
        self._by_players: dict[int, PPOBot] = {}

    def model_for(self, num_players: int) -> PPOBot:
        """The shipped model's bot for ``num_players`` (``FileNotFoundError`` names the sizes that have one)."""
        bot = self._by_players.get(num_players)
        if bot is None:
            bot = self._by_players[num_players] = PPOBot.load(
                None, self.deterministic, self.seed, num_players=num_players
            )
        bot.rng = self.rng  # one stream, so an arena's per-game reseeding reaches every model
        return bot

    def act_game(self, game: Game) -> int:
        return self.model_for(game.num_players).act_game(game)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def make_ppo(
    path: str | Path | None = None,
    deterministic: bool = True,
    seed: int | None = None,
    num_players: int | None = None,
) -> PPOBot | ShippedPPOBot:
    """``bots.make("ppo", ...)``: a model file, the shipped model for ``num_players``, or (neither
    given) the shipped model of each table's size. An ``.npz`` of an after-state policy
    (``python -m shelfie_env.train.ppo_afterstate``) plays as an
    :class:`~shelfie_env.bots.learned.afterstate_policy.AfterstatePolicyBot`."""
    if path is None and num_players is None:
        return ShippedPPOBot(deterministic, seed)
    if path is not None and Path(path).suffix == ".npz" and Path(path).is_file():
        from shelfie_env.bots.learned.afterstate_policy import is_afterstate_policy, load_afterstate_policy

        if is_afterstate_policy(read_weights(path)):  # an after-state policy (train.ppo_afterstate)
            return load_afterstate_policy(path, num_players, deterministic, seed)  # type: ignore[return-value]
    return PPOBot.load(path, deterministic=deterministic, seed=seed, num_players=num_players)


make_ppo.table_sizes = lambda: shipped_sizes(SHIPPED)  # type: ignore[attr-defined]


def make_ppo_flat(deterministic: bool = True, seed: int | None = None, num_players: int | None = None) -> PPOBot:
    """``bots.make("ppo-flat")``: the shipped flat-head PPO (``ppo_flat``: an MLP over the legal ids,
    no teacher, the env options ``obs="features"``, ``reroll="keep"`` its card names)."""
    path = shipped_file("ppo-flat", SHIPPED_FLAT, num_players or 2, "shelfie train --algo ppo_flat")
    return PPOBot.load(path, deterministic=deterministic, seed=seed, num_players=num_players)


make_ppo_flat.table_sizes = lambda: shipped_sizes(SHIPPED_FLAT)  # type: ignore[attr-defined]
