"""``MaskedPPOModule``: an RLlib (new API stack) torch RLModule with masked logits and a value head.

Its layers carry the names of a Stable-Baselines3 ``MlpPolicy`` (separate
``mlp_extractor.policy_net`` / ``value_net`` trunks of ``tanh`` layers,
``action_net``, ``value_net``), so the weights move both ways between RLlib and
the project's model format:

* :func:`export_module` writes ``x.npz`` (the arrays) + ``x.json`` (the model
  card); ``bots.make("ppo", path="x.npz")`` plays it in numpy, in ``shelfie
  arena``, ``shelfie play`` and the web table.
* :func:`load_into_module` starts a module from any such ``.npz`` (the shipped
  ``ppo_2p`` included): ``model_config={"init_from": path}``.

``model_config`` keys: ``hidden`` (widths, default ``[256, 256]``), ``head``
(``flat``: a linear layer over the 120 ids; ``expect``: the expectimax head of
:mod:`shelfie_env.train.maskable_ppo.policy`), ``set_arch`` (the expect head's placement
MLP, default ``hidden``) and ``init_from``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from shelfie_env.bots.learned.card import load_card, make_card, write_card
from shelfie_env.bots.learned.policy import read_weights
from shelfie_env.game.actions import NUM_ACTIONS

MASKED = -1e9
"""Logit of an illegal action (its probability underflows to 0)."""


def _trunk(width: int, hidden: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(width, h), nn.Tanh()]
        width = h
    return nn.Sequential(*layers)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """Masked-logit actor and value critic over ``{"observation", "action_mask"}`` observations."""

    def setup(self) -> None:
        if self.inference_only:
            # Env runners push a few rows at a time through small layers: one thread is
            # fastest, and several processes' thread pools would fight over the cores.
            torch.set_num_threads(1)
        cfg = dict(self.model_config or {})
        hidden = [int(h) for h in cfg.get("hidden", [256, 256])]
        head = cfg.get("head", "flat")
        obs_space = self.observation_space["observation"]  # type: ignore[index]
        size = int(obs_space.shape[0])
        self.players = (size - 60) // 63
        self.mlp_extractor = nn.Module()
        self.mlp_extractor.policy_net = _trunk(size, hidden)
        self.mlp_extractor.value_net = _trunk(size, hidden)
        self.head = head
        if head == "flat":
            self.action_net: nn.Module = nn.Linear(hidden[-1], NUM_ACTIONS)
        elif head == "expect":
            from shelfie_env.train.maskable_ppo.policy import ExpectHead

            set_arch = [int(h) for h in cfg.get("set_arch", hidden)]
            self.action_net = ExpectHead(hidden[-1], size, self.players, set_arch)
        else:
            raise ValueError(f"model_config head must be 'flat' or 'expect', got {head!r}")
        self.value_net = nn.Linear(hidden[-1], 1)
        if cfg.get("init_from"):
            load_into_module(self, cfg["init_from"])

    def _logits(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        x = obs["observation"].float()
        h = self.mlp_extractor.policy_net(x)
        logits = self.action_net(h if self.head == "flat" else torch.cat([h, x], dim=1))
        return logits.masked_fill(obs["action_mask"] < 0.5, MASKED)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._logits(batch[Columns.OBS])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        x = batch[Columns.OBS]["observation"].float()
        return self.value_net(self.mlp_extractor.value_net(x)).squeeze(-1)


def module_arrays(module: MaskedPPOModule) -> dict[str, np.ndarray]:
    """The module's weights as float32 arrays under their (SB3-compatible) names."""
    return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in module.state_dict().items()}


def export_module(
    module: MaskedPPOModule | dict[str, np.ndarray],
    path: str | Path,
    num_players: int,
    *,
    config: dict[str, Any] | None = None,
    steps: int = 0,
    wall_time_s: float = 0.0,
    evaluation: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``path`` (``.npz``) and its card; ``bots.make("ppo", path=...)`` plays the result."""
    arrays = module if isinstance(module, dict) else module_arrays(module)
    out = Path(path).with_suffix(".npz")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.stem + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(out)
    card = make_card(
        num_players,
        algo="RLlib PPO",
        config=config or {},
        steps=steps,
        wall_time_s=wall_time_s,
        evaluation=evaluation or {},
        extra={"backend": "rllib", "bot": "ppo", "activation": "tanh", **(extra or {})},
    )
    write_card(out, card)
    return out


def module_config_from_card(path: str | Path) -> dict[str, Any]:
    """The ``model_config`` that rebuilds the network of an exported ``.npz`` and starts from its weights."""
    card = load_card(path)
    cfg = card.get("config") or {}
    arrays = read_weights(path)
    hidden = [
        int(arrays[f"mlp_extractor.policy_net.{2 * i}.bias"].shape[0])
        for i in range(_count(arrays, "mlp_extractor.policy_net"))
    ]
    out: dict[str, Any] = {"hidden": hidden, "head": "expect" if "action_net.log_temp" in arrays else "flat"}
    if out["head"] == "expect":
        out["set_arch"] = [
            int(arrays[f"action_net.sets.{2 * i}.bias"].shape[0])
            for i in range(_count(arrays, "action_net.sets") - 1)
        ]
    out["init_from"] = str(path)
    del cfg
    return out


def _count(arrays: dict[str, np.ndarray], prefix: str) -> int:
    return sum(1 for k in arrays if k.startswith(prefix + ".") and k.endswith(".weight"))


def load_into_module(module: MaskedPPOModule, path: str | Path) -> None:
    """Copy the weights of an exported ``.npz`` (with a card for this table size) into ``module``.

    Every actor array must fit; critic arrays are taken when present (an
    actor-only file leaves the critic as initialised).
    """
    card = load_card(path, module.players)
    if card.get("activation", "tanh") != "tanh":
        raise ValueError(f"{path}: a {card['activation']} network; the RLlib module is tanh")
    arrays = read_weights(path)
    own = module.state_dict()
    actor = [k for k in own if k.startswith(("mlp_extractor.policy_net", "action_net"))]
    missing = [k for k in actor if k not in arrays]
    if missing:
        raise ValueError(f"{path}: no {missing[0]} array; is it a {module.head}-head policy of this size?")
    take = {k: torch.as_tensor(arrays[k]) for k in own if k in arrays}
    wrong = [k for k, v in take.items() if tuple(v.shape) != tuple(own[k].shape)]
    if wrong:
        raise ValueError(
            f"{path}: {wrong[0]} has shape {tuple(take[wrong[0]].shape)}, the module {tuple(own[wrong[0]].shape)}"
        )
    module.load_state_dict(take, strict=False)
