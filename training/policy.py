"""``KeepHeadPolicy``: a MaskablePPO actor-critic whose reroll logits come from the kept dice.

The policy MLP is the usual one (``net_arch``). Its output head differs from
SB3's single ``Linear(hidden, 120)``:

* ids 0..63 (stop and rerolls): every id is described by the multiset of dice it
  keeps (:func:`shelfie_env.keep_head.keep_features`, 42 numbers) and rated by one
  shared scorer, ``Linear(1) . tanh . Linear(score) . tanh(embed(h) + keep(features))``;
* ids 64..119 (circle, end turn, cross out): a linear layer of the hidden state ``h``.

The sorted-dice one-hot reaches the head because the actor latent is ``h``
followed by that block of the observation and the reroll-phase flag
(:class:`DiceLatentExtractor`); the scorer runs only on reroll-phase rows (the
others cannot reroll, so their ids 0..63 stay 0 and are masked anyway). The
critic is unchanged. ``shelfie_env.checkpoint.NumpyPolicy.from_sb3`` copies the
head through :meth:`KeepHead.numpy_head`, so frozen snapshots and the ``ppo`` bot
play it without torch. ``scripts/keep_head_probe.py`` measured why: on the
planner's reroll decisions this head chose the planner's best move 69.5% of the
time against 58.4% for a flat head with the same data.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from shelfie_env import expect_head as eh
from shelfie_env.actions import NUM_ACTIONS
from shelfie_env.keep_head import DICE_SIZE, KEEP_FEATURES, KEPT, NUM_REROLL_IDS, REROLL_FLAG
from shelfie_env.planner.dice import SUB_KEEPS

TAIL = REROLL_FLAG + 4  # the observation must reach the phase one-hot


def _numpy(x: torch.Tensor) -> np.ndarray:
    """A parameter as a float32 numpy array (for the numpy copies of the heads)."""
    return x.detach().cpu().numpy().astype(np.float32)


class DiceLatentExtractor(MlpExtractor):
    """:class:`MlpExtractor` whose actor latent is ``policy_net(obs)``, the 36 dice numbers, the
    reroll flag."""

    def __init__(
        self, feature_dim: int, net_arch: Any, activation_fn: type[nn.Module], device: Any, dice_start: int
    ):
        super().__init__(feature_dim, net_arch, activation_fn, device)
        if not 0 <= dice_start <= feature_dim - TAIL:
            raise ValueError(f"dice_start {dice_start} does not fit observations of size {feature_dim}")
        self.dice_start = dice_start
        self.hidden_dim_pi = self.latent_dim_pi
        self.latent_dim_pi = self.hidden_dim_pi + DICE_SIZE + 1

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        s = self.dice_start
        tail = [features[:, s : s + DICE_SIZE], features[:, s + REROLL_FLAG : s + REROLL_FLAG + 1]]
        return torch.cat([self.policy_net(features), *tail], dim=1)


class KeepHead(nn.Module):
    """Maps the actor latent (hidden state, the 36 dice numbers, the reroll flag) to 120 logits."""

    def __init__(self, hidden: int, dice_start: int, embed: int = 256, score: int = 128) -> None:
        super().__init__()
        self.dice_start = dice_start  # recorded for the numpy copy
        self.other = nn.Linear(hidden, NUM_ACTIONS - NUM_REROLL_IDS)
        self.embed = nn.Linear(hidden, embed)
        self.keep = nn.Linear(KEEP_FEATURES, embed, bias=False)
        self.score = nn.Linear(embed, score)
        self.out = nn.Linear(score, 1)
        self.register_buffer("kept", torch.as_tensor(np.array(KEPT)), persistent=False)
        self.register_buffer("counts", torch.arange(7, dtype=torch.float32), persistent=False)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        h = latent[:, : -DICE_SIZE - 1]
        rows = torch.nonzero(latent[:, -1] > 0.5).squeeze(1)  # reroll-phase rows
        dice = latent[rows, -DICE_SIZE - 1 : -1].reshape(-1, 6, 6)
        kept = torch.einsum("ai,bif->baf", self.kept, dice)  # (b, 64, 6) kept dice per face
        feats = (kept.round().unsqueeze(-1) == self.counts).float().flatten(2)  # (b, 64, 42)
        z = torch.tanh(self.embed(h[rows]).unsqueeze(1) + self.keep(feats))
        scores = self.out(torch.tanh(self.score(z))).squeeze(-1)
        reroll = torch.zeros(len(h), NUM_REROLL_IDS, dtype=h.dtype, device=h.device).index_copy(
            0, rows, scores
        )
        return torch.cat([reroll, self.other(h)], dim=1)

    def numpy_head(self) -> dict[str, np.ndarray]:
        """Weights as ``(in, out)`` float32 arrays for :class:`~shelfie_env.checkpoint.NumpyPolicy`."""

        out = {"dice_start": np.array(self.dice_start)}
        for name in ("other", "embed", "score", "out"):
            layer = getattr(self, name)
            out[f"{name}_w"], out[f"{name}_b"] = _numpy(layer.weight).T.copy(), _numpy(layer.bias)
        out["keep_w"] = _numpy(self.keep.weight).T.copy()
        return out


class KeepHeadPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the :class:`KeepHead` output (``policy="keep"`` in ``shelfie train``).

    Extra keyword arguments: ``dice_start`` (offset of the sorted-dice one-hot in
    the observation, ``observation.layout``), ``keep_embed`` and ``keep_score``
    (widths of the shared scorer).
    """

    def __init__(
        self, *args: Any, dice_start: int, keep_embed: int = 256, keep_score: int = 128, **kwargs: Any
    ):
        self.dice_start = dice_start
        self.keep_embed = keep_embed
        self.keep_score = keep_score
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = DiceLatentExtractor(
            self.features_dim, self.net_arch, self.activation_fn, self.device, self.dice_start
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = KeepHead(
            self.mlp_extractor.hidden_dim_pi, self.dice_start, self.keep_embed, self.keep_score
        )
        if self.ortho_init:
            self.action_net.apply(partial(self.init_weights, gain=np.sqrt(2)))
            for layer in (self.action_net.other, self.action_net.out):
                self.init_weights(layer, gain=0.01)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(dice_start=self.dice_start, keep_embed=self.keep_embed, keep_score=self.keep_score)
        return data


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
    per circle set and cross-out (:mod:`shelfie_env.expect_head`); on reroll-phase
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

    def numpy_head(self) -> dict[str, np.ndarray]:
        """Weights as ``(in, out)`` float32 arrays for :class:`~shelfie_env.checkpoint.NumpyPolicy`."""

        out = {
            "players": np.array(self.players),
            "log_temp": _numpy(self.log_temp),
            "other_w": _numpy(self.other.weight).T.copy(),
            "other_b": _numpy(self.other.bias),
        }
        linears = [m for m in self.sets if isinstance(m, nn.Linear)]
        for i, layer in enumerate(linears):
            out[f"sets_w{i}"], out[f"sets_b{i}"] = _numpy(layer.weight).T.copy(), _numpy(layer.bias)
        return out


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
