"""``ExpectHeadPolicy``: a MaskablePPO actor-critic with the expectimax output head.

The network values every placement a turn can end with (one value per circle
set and cross-out, :mod:`shelfie_env.bots.learned.expect_head`); reroll logits
are the exact expected placement values of stopping and of every keep, divided
by a learned temperature; ids 64..119 come from a linear layer of the hidden
state. ``NumpyPolicy.from_state_dict`` reads the same weights for play without torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from shelfie_env.bots.learned import expect_head as eh
from shelfie_env.bots.learned.expect_head import DICE_SIZE, KEPT, NUM_REROLL_IDS
from shelfie_env.bots.planner.dice import SUB_KEEPS
from shelfie_env.game.actions import NUM_ACTIONS


class ObsLatentExtractor(MlpExtractor):
    """:class:`MlpExtractor` whose actor latent is ``policy_net(obs)`` followed by the observation itself."""

    def __init__(self, feature_dim: int, net_arch: Any, activation_fn: type[nn.Module], device: Any):
        super().__init__(feature_dim, net_arch, activation_fn, device)
        self.hidden_dim_pi = self.latent_dim_pi
        self.latent_dim_pi = self.hidden_dim_pi + feature_dim

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.policy_net(features), features], dim=1)


class ExpectHead(nn.Module):
    """Maps the actor latent (hidden state, observation) to 120 logits; rerolls by exact expectimax.

    ``sets`` (an MLP of the observation with its dice blocks zeroed) gives one value
    per circle set and cross-out (:mod:`shelfie_env.bots.learned.expect_head`); on reroll-phase
    rows ids 0..63 get the exact expected placement value of stopping / of each
    keep, divided by the learned temperature ``exp(log_temp)``. Ids 64..119 come
    from a linear layer of the hidden state.
    """

    def __init__(
        self, hidden: int, obs_size: int, players: int, set_arch: list[int], temperature: float = 0.05
    ) -> None:
        super().__init__()
        self.hidden, self.players = hidden, players
        layout = eh.Layout(players)
        self.other = nn.Linear(hidden, NUM_ACTIONS - NUM_REROLL_IDS)
        layers: list[nn.Module] = []
        width = obs_size
        for w in set_arch:
            layers += [nn.Linear(width, w), nn.Tanh()]
            width = w
        layers.append(nn.Linear(width, eh.NUM_SET_VALUES))
        self.sets = nn.Sequential(*layers)
        self.log_temp = nn.Parameter(torch.tensor(float(np.log(temperature))))
        keep = np.ones(obs_size, np.float32)
        for a, b in layout.turn_blocks:
            keep[a:b] = 0.0
        self.dice, self.two_rolls, self.reroll = layout.dice, layout.two_rolls, layout.reroll
        for name, value in (
            ("position_mask", keep),
            ("cells_t", eh.CELL_BITS.T.astype(np.float32)),
            ("feasible_sets", eh.FEASIBLE_SETS),
            ("trans_t", eh.TRANSITION_T),
            ("sub_keeps", SUB_KEEPS),
            ("keep_of_code", eh.KEEP_OF_CODE),
            ("final_of_code", eh.FINAL_OF_CODE),
            ("kept", np.array(KEPT)),
            ("powers", 7 ** np.arange(6)),
        ):
            self.register_buffer(name, torch.as_tensor(np.array(value)), persistent=False)

    def set_values(self, obs: torch.Tensor) -> torch.Tensor:
        """``(m, NUM_SET_VALUES)``: the network's value of every circle set and cross-out."""
        return self.sets(obs * self.position_mask)

    def reroll_values(self, obs: torch.Tensor) -> torch.Tensor:
        """``(m, 64)``: expected placement value of stop and of every reroll id (reroll-phase rows)."""
        NEG, NUM_SETS = eh.NEG, eh.NUM_SETS
        sv = self.set_values(obs)
        free = (obs[:, :25] + obs[:, 25:50]) < 0.5
        ok = (~free).float() @ self.cells_t < 0.5
        neg = sv.new_full((len(sv), 1), NEG)
        circ = torch.cat([torch.where(ok, sv[:, :NUM_SETS], neg), neg], dim=1)
        v0 = circ[:, self.feasible_sets].max(dim=2).values
        cross = torch.where(free.view(-1, 5, 5).any(dim=2), sv[:, NUM_SETS:], neg).max(dim=1).values
        v0 = torch.where(v0 <= NEG / 2, cross[:, None], v0)
        ev = v0 @ self.trans_t
        two = torch.nonzero(obs[:, self.two_rolls] > 0.5).squeeze(1)
        if len(two):
            padded = torch.cat([ev[two], neg[two]], dim=1)
            ev = ev.index_copy(0, two, padded[:, self.sub_keeps].max(dim=2).values @ self.trans_t)
        dice = obs[:, self.dice : self.dice + DICE_SIZE].reshape(-1, 6, 6)
        kept = torch.einsum("ai,bif->baf", self.kept, dice).round().long()
        codes = (kept * self.powers).sum(dim=2)  # (m, 64)
        values = ev.gather(1, self.keep_of_code[codes])
        stop = v0.gather(1, self.final_of_code[codes[:, :1]])
        return torch.cat([stop, values[:, 1:]], dim=1)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        h, obs = latent[:, : self.hidden], latent[:, self.hidden :]
        rows = torch.nonzero(obs[:, self.reroll] > 0.5).squeeze(1)
        scores = self.reroll_values(obs[rows]) / self.log_temp.exp()
        reroll = torch.zeros(len(h), NUM_REROLL_IDS, dtype=h.dtype, device=h.device).index_copy(
            0, rows, scores
        )
        return torch.cat([reroll, self.other(h)], dim=1)


class ExpectHeadPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the :class:`ExpectHead` output (``--policy-head expect``).

    Extra keyword arguments: ``players`` (the observation layout), ``set_arch``
    (hidden widths of the placement-value MLP) and ``temperature`` (initial value
    of the learned reroll temperature).
    """

    def __init__(
        self, *args: Any, players: int, set_arch: list[int], temperature: float = 0.05, **kwargs: Any
    ):
        self.players = players
        self.set_arch = list(set_arch)
        self.temperature = temperature
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = ObsLatentExtractor(
            self.features_dim, self.net_arch, self.activation_fn, self.device
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = ExpectHead(
            self.mlp_extractor.hidden_dim_pi, self.features_dim, self.players, self.set_arch, self.temperature
        )
        if self.ortho_init:
            for layer in self.action_net.sets:
                if isinstance(layer, nn.Linear):
                    self.init_weights(layer, gain=np.sqrt(2))
            self.init_weights(self.action_net.other, gain=0.01)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(players=self.players, set_arch=self.set_arch, temperature=self.temperature)
        return data
