"""``ppo``: plays from a trained MaskablePPO checkpoint (``.zip`` + JSON card).

``make("ppo")`` loads the shipped 2-player model ``models/ppo_2p.zip``;
``make("ppo", path="runs/x/best.zip")`` any other. The card is checked first
(env id, observation layout version and size, action layout, players): a
mismatch raises :class:`~shelfie_env.checkpoint.CheckpointMismatchError`.
torch / stable-baselines3 are imported only when a checkpoint is loaded, so
importing :mod:`shelfie_env.bots` never needs them. Moves are computed with a
numpy copy of the actor: ``deterministic=True`` takes the most likely legal
action, ``False`` samples from the masked policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..checkpoint import NumpyPolicy, load_card, load_model, zip_path
from ..engine import Game
from ..observation import encode
from . import register

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
DEFAULT_MODEL = MODELS_DIR / "ppo_2p.zip"


def default_model_path(num_players: int = 2) -> Path:
    """The shipped model for ``num_players`` (``models/ppo_2p.zip`` or ``models/ppo_solo.zip``)."""
    return MODELS_DIR / ("ppo_solo.zip" if num_players == 1 else f"ppo_{num_players}p.zip")


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

    @classmethod
    def load(
        cls, path: str | Path | None = None, deterministic: bool = True, seed: int | None = None
    ) -> PPOBot:
        """Load ``path`` (default: the shipped 2-player model) after checking its card."""
        zp = zip_path(path) if path is not None else DEFAULT_MODEL
        if not zp.is_file():
            hint = " (the shipped model is missing: train one with `shelfie train`)" if path is None else ""
            raise FileNotFoundError(f"no PPO checkpoint at {zp}{hint}")
        card = load_card(zp)
        model, card = load_model(zp)
        return cls(NumpyPolicy.from_sb3(model.policy), card["num_players"], deterministic, seed, card)

    def act_game(self, game: Game) -> int:
        if game.num_players != self.num_players:
            raise ValueError(
                f"this PPO model plays {self.num_players}-player games, the game has {game.num_players}"
            )
        if game.over:
            raise ValueError("no legal action: the game is over")
        obs = encode(game, game.current)
        return self.policy.act(obs, game.legal_mask(), self.deterministic, self.rng)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


def _make(path: str | Path | None = None, deterministic: bool = True, seed: int | None = None) -> PPOBot:
    return PPOBot.load(path, deterministic=deterministic, seed=seed)


register("ppo", _make)
