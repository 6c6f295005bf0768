"""The after-state policy in torch: placement values -> exact action values -> logits.

A turn's placement values ``v`` (``NUM_SET_VALUES`` per turn: one per circle set,
one per cross-out, ``NEG`` where impossible) come from one MLP forward over the
after-state features of every placement (game-ending ones take their exact
reward). Every decision of the turn is then scored from ``v`` alone, as
:func:`shelfie_env.bots.planner.search.action_values` does in numpy:

* reroll phase: ``V0[m]`` = best placement final dice ``m`` allow; a keep is
  worth its expected ``V0`` (one roll left) or expected best keep value (two);
  stop is ``V0`` of the dice now;
* circle phase and cross-outs: the best placement each action can still end
  in, given as ``(decision, action, placement)`` triples (a segment max).

Logits are ``beta * value``; gradients reach the MLP through the maxima and
the expectations.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from shelfie_env.bots.learned.afterstate import feature_size
from shelfie_env.bots.learned.expect_head import FEASIBLE_SETS, NEG, NUM_SET_VALUES, NUM_SETS, TRANSITION_T
from shelfie_env.bots.planner.dice import SUB_KEEPS
from shelfie_env.game.actions import NUM_ACTIONS

MASKED = -1e8
"""Logit of an illegal action (finite, so entropies stay defined)."""

_FEAS = torch.as_tensor(FEASIBLE_SETS.copy())  # (462, w), NUM_SETS = padding slot
_TRANS = torch.as_tensor(TRANSITION_T.copy())  # (462, 924)
_SUB = torch.as_tensor(SUB_KEEPS.copy())  # (462, s), 924 = padding keep
_FEAS_FLAT = _FEAS.flatten()
_SUB_FLAT = _SUB.flatten()


class AfterstatePolicyNet(nn.Module):
    """A ``tanh`` MLP valuing after-states, and the inverse temperature ``beta`` of the policy."""

    def __init__(self, players: int, net_arch: list[int], beta: float) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = feature_size(players)
        for w in net_arch:
            layers += [nn.Linear(width, w), nn.Tanh()]
            width = w
        last = nn.Linear(width, 1)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.values = nn.Sequential(*layers, last)
        self.log_beta = nn.Parameter(torch.tensor(math.log(beta), dtype=torch.float32))

    @property
    def beta(self) -> torch.Tensor:
        return self.log_beta.exp()

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """``(k,)`` values of ``(k, feature_size)`` after-states."""
        return self.values(features)[:, 0]

    def flops_per_afterstate(self) -> int:
        """Multiply-adds x 2 of one forward through the MLP."""
        return 2 * sum(m.in_features * m.out_features for m in self.values if isinstance(m, nn.Linear))

    def numpy_state(self, margin_coef: float) -> dict[str, np.ndarray]:
        """Arrays of the play-time copy (:class:`~shelfie_env.bots.learned.afterstate_policy.AfterstatePolicyBot`)."""
        out = {k: v.detach().cpu().numpy() for k, v in self.values.state_dict().items()}
        out = {f"values.{k}": v for k, v in out.items()}
        out["margin_coef"] = np.array(margin_coef)
        out["beta"] = np.array(float(self.beta.detach()))
        return out


def turn_values(
    net_out: torch.Tensor,
    over: torch.Tensor,
    exact: torch.Tensor,
    cand_turn: torch.Tensor,
    cand_slot: torch.Tensor,
    n_turns: int,
) -> torch.Tensor:
    """``(n_turns, NUM_SET_VALUES)`` placement values: the net's, exact where the game ends, ``NEG`` elsewhere."""
    vals = torch.where(over, exact, net_out)
    v = torch.full((n_turns, NUM_SET_VALUES), NEG, dtype=vals.dtype)
    return v.index_put((cand_turn, cand_slot), vals)


def _max_over(x: torch.Tensor, table: torch.Tensor, flat: torch.Tensor) -> torch.Tensor:
    """``max_j x[:, table[i, j]]`` for every row ``i`` of ``table``: ``(T, len(table))``.

    The maximising entry is found without gradient, then gathered alone, so the
    backward pass touches ``len(table)`` entries per row instead of all of ``table``.
    """
    t, (rows, width) = len(x), table.shape
    with torch.no_grad():
        arg = x.index_select(1, flat).view(t, rows, width).argmax(2)
    cols = flat[(torch.arange(rows) * width)[None, :] + arg]
    return x.gather(1, cols)


def keep_values(v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``V0`` (T, 462), keep values with one roll left (T, 924) and with two (T, 924)."""
    t = len(v)
    circ = torch.cat([v[:, :NUM_SETS], torch.full((t, 1), NEG, dtype=v.dtype)], 1)
    v0 = _max_over(circ, _FEAS, _FEAS_FLAT)
    cross = v[:, NUM_SETS:].amax(1, keepdim=True)
    v0 = torch.where(v0 <= NEG / 2, cross, v0)
    ev1 = v0 @ _TRANS
    padded = torch.cat([ev1, torch.full((t, 1), NEG, dtype=v.dtype)], 1)
    ev2 = _max_over(padded, _SUB, _SUB_FLAT) @ _TRANS
    return v0, ev1, ev2


def action_values(
    v: torch.Tensor,
    keeps: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    turn: torch.Tensor,
    reroll: torch.Tensor,
    keep_idx: torch.Tensor,
    final_idx: torch.Tensor,
    two_rolls: torch.Tensor,
    pair_dec: torch.Tensor,
    pair_act: torch.Tensor,
    pair_slot: torch.Tensor,
) -> torch.Tensor:
    """``(D, 120)`` action values of ``D`` decisions (``NEG`` for actions with none).

    ``turn[d]``: row of ``v`` (and of ``keeps = keep_values(v)``) of decision ``d``'s
    turn. Reroll decisions (``reroll``, indices into the decisions) value id ``a`` as
    keep ``keep_idx[:, a]`` and stop as final multiset ``final_idx``, with one or
    (``two_rolls``) two rolls left; the other decisions take, per action, the best of
    the placements ``pair_slot`` listed for it by the triples ``(pair_dec, pair_act,
    pair_slot)``.
    """
    d = len(turn)
    out = torch.full((d * NUM_ACTIONS,), NEG, dtype=v.dtype)
    if len(pair_dec):
        vals = v[turn[pair_dec], pair_slot]
        out = out.scatter_reduce(0, pair_dec * NUM_ACTIONS + pair_act, vals, "amax", include_self=False)
    out = out.view(d, NUM_ACTIONS)
    if len(reroll):
        v0, ev1, ev2 = keeps
        rows = turn[reroll]
        ev = torch.where(two_rolls[:, None], ev2[rows], ev1[rows])
        q = torch.gather(ev, 1, keep_idx)
        stop = v0[rows, final_idx]
        q = torch.cat([stop[:, None], q[:, 1:]], 1)
        out = out.index_put((reroll,), torch.cat([q, out[reroll, 64:]], 1))
    return out


def policy_logits(q: torch.Tensor, legal: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """``beta * q`` on the legal actions, ``MASKED`` elsewhere."""
    return torch.where(legal, beta * q, torch.full_like(q, MASKED))


def state_values(q: torch.Tensor, legal: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
    """The critic: the policy's expected action value ``sum_a pi(a) q(a)`` (``pi`` not differentiated)."""
    return (probs.detach() * torch.where(legal, q, torch.zeros_like(q))).sum(1)
