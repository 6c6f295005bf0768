"""Masked PPO with a flat policy head, on the batched engine, in one process.

A generic learner, as a library's PPO would be: an MLP actor with one logit per action
id (``Discrete(120)``, illegal ids masked out) and an MLP critic, both reading the
observation vector (``obs="features"`` by default: the SPEC vector plus
:mod:`shelfie_env.observation.features`). No after-state values, dice search or bot
calls inside the policy. The file reads top to bottom like CleanRL's ``ppo.py``:

1. :class:`PPOFlatConfig` - every setting, with its meaning;
2. :class:`Agent` - the actor and the critic;
3. :class:`Opponents` - who sits in the other seats: the compiled ``random`` and
   ``greedy`` bots and frozen snapshots of the learner (valued in one batched forward
   per snapshot for all games where it is on turn);
4. :class:`Trainer` - ``num_envs`` games in lockstep on the batched engine
   (:class:`~shelfie_env.envs.vector.BatchedSeats`: the learner's seat is drawn per game,
   opponents move inside ``step``), ``num_steps`` decisions per game per iteration, GAE,
   then ``epochs`` passes of clipped PPO over minibatches; a checkpoint after every
   iteration holds the whole run (weights, optimiser, games in flight, every random
   stream), so a resumed run continues exactly as if it had not stopped.

Rewards are the learner's: at game end the rank reward plus ``margin_coef`` x (own score
- best rival score) / 50 (the benchmark's reward); with ``score_reward > 0`` every
decision also earns that much per point it added to the learner's score. At ``players=1``
(solo, ``shelfie/Solo-v0``) the learner is the only seat and a decision's reward is only
``score_reward`` x the points it added, ``score_reward=0`` meaning :data:`SOLO_SCORE_REWARD`
(0.02 a point); the curve then records the mean final score instead of the rate against greedy.

``shelfie train --algo ppo_flat`` runs it; ``python -m shelfie_env.train.ppo_flat`` too.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from shelfie_env.envs.vector import BatchedSeats
from shelfie_env.game.actions import NUM_ACTIONS
from shelfie_env.game.reroll_keep import check_reroll_mode, reroll_mask, spec_actions
from shelfie_env.observation.features import check_obs_mode, obs_size
from shelfie_env.train.checkpoint import load_run_state

REROLL_IDS = slice(0, 64)
ALGO = "ppo_flat"
SOLO_SCORE_REWARD = 0.02
"""Reward per point of a solo run (``players=1``) whose ``score_reward`` is 0."""


# ---------------------------------------------------------------------------------------- config
@dataclass
class PPOFlatConfig:
    """Settings of a flat masked PPO run (``shelfie train --algo ppo_flat --FIELD VALUE``)."""

    players: int = 2
    """Players at the table (1-4); the learner takes one seat, drawn per game (1: solo, the only seat)."""
    total_steps: int = 10_000_000
    """Learner decisions to train for."""
    obs: str = "features"
    """Observation: ``default`` (the SPEC vector) or ``features`` (plus the features block)."""
    reroll: str = "ids"
    """Reroll choices: ``ids`` (the SPEC's, by dice position), or ``keep`` (by the faces kept)."""
    num_envs: int = 256
    """Games played in lockstep."""
    num_steps: int = 32
    """Learner decisions per game per iteration (batch = num_envs x num_steps)."""
    epochs: int = 4
    """PPO passes over each batch."""
    minibatch_size: int = 2048
    """Decisions per gradient step."""
    learning_rate: float = 3e-4
    """Adam step size (linearly annealed to 0 over total_steps when anneal_lr)."""
    anneal_lr: bool = True
    """Anneal the learning rate linearly to 0."""
    gamma: float = 0.995
    """Discount per learner decision."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_coef: float = 0.2
    """PPO ratio clip."""
    ent_coef: float = 0.01
    """Entropy bonus of circle and cross decisions."""
    ent_coef_reroll: float = 0.01
    """Entropy bonus of reroll decisions (their own coefficient)."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layers of the actor and of the critic (each its own MLP, tanh)."""
    stop_bias: float = 0.0
    """Initial logit bias of action 0 (stop rolling); log(60) ~ 4.1 makes stopping as likely as all rerolls."""
    margin_coef: float = 0.1
    """Weight of (own - best rival score) / 50 in the end-of-game reward (unused solo)."""
    score_reward: float = 0.0
    """Reward per point each decision adds to the learner's score (0: none; solo, 0 is SOLO_SCORE_REWARD)."""
    opp_random: float = 0.5
    """Share of opponent seats played by ``random``."""
    opp_greedy: float = 0.5
    """Share played by ``greedy``; the rest by frozen snapshots of the learner."""
    snapshot_every: int = 500_000
    """Learner decisions between snapshots added to the pool (when snapshots play)."""
    pool_size: int = 10
    """Snapshots kept (the newest)."""
    eval_every: int = 500_000
    """Learner decisions between curve points (0: none)."""
    eval_games: int = 400
    """Games per curve point: against greedy, seats alternating, or solo (fixed dice streams)."""
    seed: int = 0
    """Seed of the network, the dice, the seats and the opponents."""
    run_dir: str = "runs/ppo_flat"
    """Where the checkpoint, the model and the curve go."""

    def check(self) -> None:
        """``ValueError`` naming the first field out of range."""
        check_obs_mode(self.obs)
        check_reroll_mode(self.reroll)
        if isinstance(self.players, bool) or not isinstance(self.players, int) or not 1 <= self.players <= 4:
            raise ValueError(f"players must be 2..4 (a table) or 1 (solo), got {self.players!r}")
        for name in ("total_steps", "num_envs", "num_steps", "epochs", "minibatch_size", "learning_rate"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("gamma", "gae_lambda", "opp_random", "opp_greedy"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.opp_random + self.opp_greedy > 1.0 + 1e-9:
            raise ValueError("opp_random + opp_greedy must be at most 1 (the rest are snapshots)")
        if not self.net_arch or min(self.net_arch) <= 0:
            raise ValueError(f"net_arch needs positive layer sizes, got {self.net_arch}")
        if (self.num_envs * self.num_steps) % self.minibatch_size:
            raise ValueError("num_envs x num_steps must be a multiple of minibatch_size")
        for name in ("snapshot_every", "pool_size", "eval_every", "eval_games"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def point_reward(self) -> float:
        """Reward per point a decision adds to the learner's score (solo: ``SOLO_SCORE_REWARD`` when 0)."""
        if self.players == 1 and not self.score_reward:
            return SOLO_SCORE_REWARD
        return self.score_reward


# ------------------------------------------------------------------------------------- network
def mlp(sizes: list[int], out: int, std: float) -> nn.Sequential:
    """Linear-tanh layers of ``sizes``, then a linear output of ``out`` (orthogonal init, CleanRL's)."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        linear = nn.Linear(a, b)
        nn.init.orthogonal_(linear.weight, np.sqrt(2))
        nn.init.zeros_(linear.bias)
        layers += [linear, nn.Tanh()]
    head = nn.Linear(sizes[-1], out)
    nn.init.orthogonal_(head.weight, std)
    nn.init.zeros_(head.bias)
    return nn.Sequential(*layers, head)


class Agent(nn.Module):
    """Actor (flat logits over the 120 ids) and critic, each its own MLP over the observation."""

    def __init__(self, obs_dim: int, net_arch: list[int], stop_bias: float = 0.0) -> None:
        super().__init__()
        self.actor = mlp([obs_dim, *net_arch], NUM_ACTIONS, 0.01)
        self.critic = mlp([obs_dim, *net_arch], 1, 1.0)
        with torch.no_grad():
            self.actor[-1].bias[0] = stop_bias

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def log_probs(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of the 120 ids, illegal ones at about -1e9."""
        return torch.log_softmax(torch.where(mask, self.actor(x), -1e9), dim=-1)

    @torch.inference_mode()
    def act(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(sampled actions, their log-probabilities, values) of a batch of decisions."""
        logp = self.log_probs(x, mask)
        a = sample(logp)
        return a, logp.gather(1, a[:, None]).squeeze(1), self.value(x)

    def evaluate(
        self, x: torch.Tensor, mask: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(log-probabilities of ``actions``, entropies, values) of a minibatch, for the PPO loss.

        The functions of :meth:`log_probs` and :meth:`value`, evaluated for training: ``tanh`` in
        place, the log-probability and the entropy by :class:`MaskedPolicy`.
        """
        logp, entropy = MaskedPolicy.apply(train_forward(self.actor, x), mask, actions)
        return logp, entropy, train_forward(self.critic, x).squeeze(-1)


def train_forward(net: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """``net(x)`` of an :func:`mlp` (linear-tanh layers, a linear output), for a backward pass."""
    first, *hidden, head = (m for m in net if isinstance(m, nn.Linear))
    h = first(x).tanh_()
    for linear in hidden:
        h = linear(h).tanh_()
    return head(h)


class MaskedPolicy(torch.autograd.Function):
    """(log-probability of ``actions``, entropy) per row of ``logits`` with the ids outside ``mask`` at
    -1e9. The backward takes the logits' gradient in closed form, d log p_a / dz = onehot(a) - p and
    dH / dz = -p (log p + H): two passes over the logits instead of autograd's chain of five backwards."""

    @staticmethod
    def forward(
        ctx: Any, logits: torch.Tensor, mask: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        masked = torch.where(mask, logits, -1e9)
        logp = torch.log_softmax(masked, dim=-1)
        p = torch.softmax(masked, dim=-1)  # not exp(logp): torch's exp takes a slow path at -1e9
        entropy = -(p * logp).sum(dim=-1)
        ctx.save_for_backward(p, logp, entropy, actions)
        return logp.gather(1, actions[:, None]).squeeze(1), entropy

    @staticmethod
    def backward(ctx: Any, g_logp: torch.Tensor, g_entropy: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        p, logp, entropy, actions = ctx.saved_tensors
        per_row = -(g_logp + g_entropy * entropy)[:, None]
        grad = torch.addcmul(per_row, logp, -g_entropy[:, None]).mul_(p)  # p = 0 at the masked ids
        return grad.scatter_add_(1, actions[:, None], g_logp[:, None]), None, None


def sample(logp: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One draw per row of the categorical distributions ``logp`` (Gumbel-max, one uniform per id)."""
    u = torch.rand(logp.shape, generator=generator).clamp_(min=1e-20)
    return (logp - torch.log(-torch.log(u))).argmax(dim=-1)


# ------------------------------------------------------------------------------------ opponents
class Snapshot:
    """A frozen copy of the actor; plays every game where it is on turn in one forward."""

    def __init__(self, actor: nn.Module, obs: str, generator: torch.Generator, reroll: str = "ids") -> None:
        self.actor = actor
        self.obs = obs
        self.generator = generator
        self.reroll = reroll

    @torch.inference_mode()
    def act_batch(self, batch: Any, rows: np.ndarray) -> np.ndarray:
        x = torch.from_numpy(batch.observe(None, obs=self.obs)[rows])
        legal = batch.legal_mask()[rows]
        legal = reroll_mask(self.reroll, legal, batch.dice[rows])
        logp = torch.log_softmax(self.actor(x).masked_fill(~torch.from_numpy(legal), -1e9), dim=-1)
        a = sample(logp, self.generator).numpy()
        return spec_actions(self.reroll, a, batch.dice[rows])


class Opponents:
    """The opponent pool under :class:`BatchedSeats`' ``draw()`` protocol: ``random``, ``greedy`` or a
    snapshot, drawn per seat and game; snapshots enter every ``snapshot_every`` learner decisions."""

    def __init__(self, config: PPOFlatConfig, seed: int) -> None:
        from shelfie_env.bots import make

        self.config = config
        self.rng = np.random.default_rng(seed)
        self.random = make("random", seed=seed)
        self.greedy = make("greedy")
        self.generator = torch.Generator().manual_seed(seed)
        self.snapshots: list[Snapshot] = []

    def add(self, actor: nn.Module) -> None:
        frozen = copy.deepcopy(actor).requires_grad_(False)
        self.snapshots.append(Snapshot(frozen, self.config.obs, self.generator, self.config.reroll))
        del self.snapshots[: -max(self.config.pool_size, 1)]

    def draw(self) -> Any:
        u = self.rng.random()
        if u < self.config.opp_random:
            return self.random
        if u < self.config.opp_random + self.config.opp_greedy or not self.snapshots:
            return self.greedy
        return self.snapshots[int(self.rng.integers(len(self.snapshots)))]

    # Seat codes of a checkpoint: -1 the learner, 0 random, 1 greedy, 2 + k snapshot k.
    def code(self, bot: Any) -> int:
        if bot is None:
            return -1
        if bot is self.random:
            return 0
        if bot is self.greedy:
            return 1
        return 2 + next(k for k, s in enumerate(self.snapshots) if s is bot)

    def bot(self, code: int) -> Any:
        return None if code < 0 else (self.random, self.greedy, *self.snapshots)[code]

    def state(self) -> dict[str, Any]:
        return {
            "rng": self.rng.bit_generator.state,
            "generator": self.generator.get_state(),
            "snapshots": [s.actor.state_dict() for s in self.snapshots],
        }

    def load_state(self, state: dict[str, Any], actor: nn.Module) -> None:
        """Restore :meth:`state`; ``actor`` is a network of the snapshots' shape."""
        self.rng.bit_generator.state = state["rng"]
        self.generator.set_state(state["generator"])
        self.snapshots = []
        for weights in state["snapshots"]:
            self.add(actor)
            self.snapshots[-1].actor.load_state_dict(weights)


# -------------------------------------------------------------------------------------- trainer
class Trainer:
    """One run: :meth:`train` until ``total_steps``, checkpointing after each iteration."""

    def __init__(self, config: PPOFlatConfig) -> None:
        config.check()
        self.config = c = config
        torch.manual_seed(c.seed)
        self.obs_dim = obs_size(c.players, c.obs)
        self.agent = Agent(self.obs_dim, c.net_arch, c.stop_bias)
        self.optimizer = torch.optim.Adam(self.agent.parameters(), lr=c.learning_rate, eps=1e-5, fused=True)
        self.opponents = Opponents(c, c.seed + 1)
        self.seats = BatchedSeats(
            c.num_envs, c.players, None, [self.opponents] * (c.players - 1), "rank", seed=c.seed, reroll=c.reroll
        )
        self.global_step = 0
        self.iteration = 0
        self.train_s = 0.0
        snapshots = c.players > 1 and c.opp_random + c.opp_greedy < 1.0
        self.next_snapshot = c.snapshot_every if snapshots else None
        if self.next_snapshot is not None:
            self.opponents.add(self.agent.actor)
        self.next_eval = c.eval_every if c.eval_every else None
        self.curve: list[dict[str, Any]] = []
        self.stats: dict[str, float] = {}

    # ---------------------------------------------------------------- rollout
    def _observe(
        self, x: torch.Tensor | None = None, m: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Observations and legal masks of the learner in every game, written into ``x``, ``m`` when given."""
        c, s = self.config, self.seats
        x = torch.empty((c.num_envs, self.obs_dim)) if x is None else x
        m = torch.empty((c.num_envs, NUM_ACTIONS), dtype=torch.bool) if m is None else m
        s.batch.observe(s.learner, out=x.numpy(), obs=c.obs)
        m.numpy()[:] = s.legal_masks()
        return x, m

    def _step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The learner's actions in every game; returns (rewards, done) and starts new games where done."""
        c, s = self.config, self.seats
        rows = np.arange(c.num_envs)
        before = s.batch.scores[rows, s.learner].astype(np.float64)
        rank, ended = s.step(actions)
        scores = s.batch.scores.astype(np.float64)
        own = scores[rows, s.learner]
        scale = c.point_reward
        reward = scale * (own - before) if scale else np.zeros(c.num_envs)
        if ended.any():
            if c.players > 1:  # solo: ``rank`` is the score change, and there is no rival
                rivals = scores.copy()
                rivals[rows, s.learner] = -np.inf
                margin = (own - rivals.max(axis=1)) / 50.0
                reward = reward + np.where(ended, rank + c.margin_coef * margin, 0.0)
                won = ended & (rank > 0)
                self.stats["wins"] = self.stats.get("wins", 0) + int(won.sum())
            self.stats["games"] = self.stats.get("games", 0) + int(ended.sum())
            self.stats["score"] = self.stats.get("score", 0) + float(own[ended].sum())
            s.reset_games(ended)
        return reward.astype(np.float32), ended

    def rollout(self) -> dict[str, torch.Tensor]:
        c = self.config
        T, N = c.num_steps, c.num_envs
        obs = torch.zeros((T, N, self.obs_dim))
        masks = torch.zeros((T, N, NUM_ACTIONS), dtype=torch.bool)
        actions = torch.zeros((T, N), dtype=torch.long)
        logprobs = torch.zeros((T, N))
        values = torch.zeros((T + 1, N))
        rewards = torch.zeros((T, N))
        dones = torch.zeros((T, N))
        for t in range(T):
            x, m = self._observe(obs[t], masks[t])
            a, logprobs[t], values[t] = self.agent.act(x, m)
            actions[t] = a
            r, d = self._step(a.numpy())
            rewards[t], dones[t] = torch.from_numpy(r), torch.from_numpy(d.astype(np.float32))
        with torch.inference_mode():
            values[T] = self.agent.value(self._observe()[0])
        # GAE: a finished game's last decision does not bootstrap from the next game's first.
        adv = torch.zeros((T, N))
        last = torch.zeros(N)
        for t in reversed(range(T)):
            live = 1.0 - dones[t]
            delta = rewards[t] + c.gamma * values[t + 1] * live - values[t]
            last = delta + c.gamma * c.gae_lambda * live * last
            adv[t] = last
        flat = {"obs": obs, "masks": masks, "actions": actions, "logprobs": logprobs, "adv": adv}
        out = {k: v.reshape(T * N, *v.shape[2:]) for k, v in flat.items()}
        out["returns"] = (adv + values[:T]).reshape(-1)
        out["values"] = values[:T].reshape(-1)
        return out

    # ----------------------------------------------------------------- update
    def update(self, b: dict[str, torch.Tensor], generator: torch.Generator) -> dict[str, float]:
        c = self.config
        reroll = b["masks"][:, REROLL_IDS].any(dim=1)
        ent_weight = torch.where(reroll, c.ent_coef_reroll, c.ent_coef)
        per_decision = torch.stack([b["logprobs"], b["adv"], b["returns"], ent_weight])
        obs, masks, actions = (torch.empty_like(b[k]) for k in ("obs", "masks", "actions"))
        scalars = torch.empty_like(per_decision)
        log: dict[str, float] = {}
        for _ in range(c.epochs):
            order = torch.randperm(c.batch_size, generator=generator)
            # The epoch's minibatches are consecutive slices of the batch gathered once in its order.
            torch.index_select(b["obs"], 0, order, out=obs)
            torch.index_select(b["masks"], 0, order, out=masks)
            torch.index_select(b["actions"], 0, order, out=actions)
            torch.index_select(per_decision, 1, order, out=scalars)
            for start in range(0, c.batch_size, c.minibatch_size):
                i = slice(start, start + c.minibatch_size)
                old_logp, adv, returns, weight = scalars[:, i]
                new_logp, entropy, value = self.agent.evaluate(obs[i], masks[i], actions[i])
                logratio = new_logp - old_logp
                ratio = logratio.exp()
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef)).mean()
                v_loss = 0.5 * ((value - returns) ** 2).mean()
                loss = pg_loss + c.vf_coef * v_loss - (weight * entropy).mean()
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.agent.parameters(), c.max_grad_norm)
                self.optimizer.step()
        last_reroll = reroll[order[i]]
        with torch.no_grad():
            log["losses/policy"] = float(pg_loss)
            log["losses/value"] = float(v_loss)
            log["losses/entropy_reroll"] = float(entropy[last_reroll].mean()) if last_reroll.any() else 0.0
            log["losses/approx_kl"] = float(((ratio - 1) - logratio).mean())
            stops = (b["actions"] == 0) & reroll
            log["charts/stop_share"] = float(stops.sum() / reroll.sum().clamp(min=1))
        return log

    # ------------------------------------------------------------------- loop
    @property
    def iterations(self) -> int:
        return -(-self.config.total_steps // self.config.batch_size)

    @property
    def finished(self) -> bool:
        return self.iteration >= self.iterations

    def train(self, log_every: int = 1, out: Any = print, stop_after: int | None = None) -> Path | None:
        """Train to ``total_steps`` and export the model (its path); with ``stop_after``, stop after that
        many iterations of this call, checkpointed (``None`` unless the run finished)."""
        c = self.config
        run_dir = Path(c.run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        iterations = self.iterations
        budget = iterations if stop_after is None else min(iterations, self.iteration + stop_after)
        while self.iteration < budget:
            t0 = time.perf_counter()
            if c.anneal_lr:
                self.optimizer.param_groups[0]["lr"] = c.learning_rate * (1.0 - self.iteration / iterations)
            batch = self.rollout()
            generator = torch.Generator().manual_seed(c.seed * 1_000_003 + self.iteration)
            log = self.update(batch, generator)
            self.iteration += 1
            self.global_step += c.batch_size
            self.train_s += time.perf_counter() - t0
            if self.next_snapshot is not None and self.global_step >= self.next_snapshot:
                self.opponents.add(self.agent.actor)
                self.next_snapshot += max(c.snapshot_every, c.batch_size)
            if self.next_eval is not None and (self.global_step >= self.next_eval or self.iteration == iterations):
                self.curve.append(self.curve_point())
                self.next_eval += c.eval_every
                write_jsonl(run_dir / "curve.jsonl", self.curve[-1])
            if self.iteration % log_every == 0 or self.iteration == iterations:
                out(self.progress_line(log))
            self.save(run_dir / "latest.pt")
        return self.export(run_dir / "model") if self.finished else None

    def progress_line(self, log: dict[str, float]) -> str:
        g = max(self.stats.get("games", 0), 1)
        line: dict[str, Any] = {
            "steps": self.global_step,
            "sps": round(self.global_step / max(self.train_s, 1e-9)),
        }
        if self.config.players > 1:
            line["win_rate"] = round(self.stats.get("wins", 0) / g, 3)
        line["mean_score"] = round(self.stats.get("score", 0) / g, 1)
        line.update({k: round(v, 4) for k, v in log.items()})
        if self.curve:
            last = self.curve[-1]
            if "score_rate" in last:
                line["vs_greedy"] = last["score_rate"]
            else:
                line["eval_score"] = last["mean_score"]
        self.stats = {}
        return json.dumps(line)

    def curve_point(self) -> dict[str, Any]:
        """Score rate of the greedy-playing actor against ``greedy`` over ``eval_games`` games; solo, its
        mean final score (``mean_score``)."""
        point: dict[str, Any] = {"steps": self.global_step, "train_s": round(self.train_s, 1)}
        if self.config.players == 1:
            point["mean_score"] = round(play_solo(self.agent.actor, self.config, self.config.eval_games), 2)
        else:
            point["score_rate"] = round(play_greedy(self.agent.actor, self.config, self.config.eval_games), 4)
        return point

    # ------------------------------------------------------------- checkpoint
    def state(self) -> dict[str, Any]:
        return {
            "config": dataclasses.asdict(self.config),
            "agent": self.agent.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "opponents": self.opponents.state(),
            "games": self.seats.state(self.opponents.code),
            "progress": {
                "global_step": self.global_step,
                "iteration": self.iteration,
                "train_s": self.train_s,
                "next_snapshot": self.next_snapshot,
                "next_eval": self.next_eval,
                "curve": self.curve,
                "stats": self.stats,
            },
        }

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        torch.save(self.state(), tmp)
        tmp.replace(path)

    @classmethod
    def resume(cls, path: str | Path, **changes: Any) -> Trainer:
        """The run saved at ``path``; ``changes`` may set ``total_steps`` (train further) or ``run_dir``."""
        path = Path(path)
        state = load_run_state(path, "ppo_flat checkpoint")
        try:
            config = PPOFlatConfig(**state["config"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a ppo_flat checkpoint ({exc})") from None
        unknown = set(changes) - {"total_steps", "run_dir"}
        if unknown:
            raise ValueError(f"a resumed run can change only total_steps and run_dir, not {sorted(unknown)}")
        trainer = cls(dataclasses.replace(config, **changes))
        try:
            trainer.load_state(state)
        except ValueError as exc:
            raise ValueError(f"{path}: cannot resume this ppo_flat checkpoint ({exc})") from None
        return trainer

    def load_state(self, state: dict[str, Any]) -> None:
        self.agent.load_state_dict(state["agent"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.opponents.load_state(state["opponents"], self.agent.actor)
        torch.set_rng_state(state["torch_rng"])
        self.seats.load_state(state["games"], self.opponents.bot)
        p = state["progress"]
        self.global_step, self.iteration, self.train_s = p["global_step"], p["iteration"], p["train_s"]
        self.next_snapshot, self.next_eval = p["next_snapshot"], p["next_eval"]
        self.curve, self.stats = list(p["curve"]), dict(p["stats"])

    # ------------------------------------------------------------------ export
    def export(self, path: Path) -> Path:
        """The actor and critic as ``path.npz`` (SB3's parameter names) with its card; the ``ppo`` bot plays it."""
        return export_agent(self.agent, self.config, path, self.global_step, self.train_s, self.curve)


# --------------------------------------------------------------------------------------- helpers
def play_greedy(actor: nn.Module, config: PPOFlatConfig, games: int, seed: int = 123_456) -> float:
    """Score rate (wins + half the ties) of ``actor``, choosing its most likely legal action, against
    ``greedy`` in every other seat: ``games`` games on fixed dice streams, the learner's seat cycling."""
    n = config.players
    if n < 2:
        raise ValueError("play_greedy needs 2..4 players; a solo actor is scored by play_solo")
    per_seat = max(games // n, 1)
    points = 0.0
    with torch.no_grad():
        for seat in range(n):
            seats = BatchedSeats(
                per_seat, n, seat, ["greedy"] * (n - 1), "rank", seed=seed + seat, obs=config.obs, reroll=config.reroll
            )
            done = np.zeros(per_seat, dtype=bool)
            while not done.all():
                x = torch.from_numpy(seats.observe())
                mask = torch.from_numpy(seats.legal_masks())
                a = actor(x).masked_fill(~mask, -1e9).argmax(dim=-1).numpy()
                seats.step(np.where(done, 0, a), active=~done)
                done |= seats.batch.done
            points += float(((seats.final_rewards() + 1.0) / 2.0).sum())
    return points / (per_seat * n)


def play_solo(actor: nn.Module, config: PPOFlatConfig, games: int, seed: int = 123_456) -> float:
    """Mean final score of ``actor``, choosing its most likely legal action, alone in ``games`` 1-player
    games on fixed dice streams."""
    games = max(games, 1)
    seats = BatchedSeats(games, 1, 0, [], "rank", seed=seed, obs=config.obs, reroll=config.reroll)
    done = np.zeros(games, dtype=bool)
    with torch.no_grad():
        while not done.all():
            x = torch.from_numpy(seats.observe())
            mask = torch.from_numpy(seats.legal_masks())
            a = actor(x).masked_fill(~mask, -1e9).argmax(dim=-1).numpy()
            seats.step(np.where(done, 0, a), active=~done)
            done |= seats.batch.done
    return float(seats.batch.scores[:, 0].astype(np.float64).mean())


def write_jsonl(path: Path, row: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")


def export_agent(
    agent: Agent, config: PPOFlatConfig, path: Path, steps: int, train_s: float, curve: list[dict[str, Any]]
) -> Path:
    from shelfie_env.bots.learned.card import make_card, write_card

    arrays: dict[str, np.ndarray] = {}
    for net, prefix in ((agent.actor, "mlp_extractor.policy_net"), (agent.critic, "mlp_extractor.value_net")):
        linears = [m for m in net if isinstance(m, nn.Linear)]
        for k, lin in enumerate(linears[:-1]):
            arrays[f"{prefix}.{2 * k}.weight"] = lin.weight.detach().numpy().copy()
            arrays[f"{prefix}.{2 * k}.bias"] = lin.bias.detach().numpy().copy()
        head = "action_net" if net is agent.actor else "value_net"
        arrays[f"{head}.weight"] = linears[-1].weight.detach().numpy().copy()
        arrays[f"{head}.bias"] = linears[-1].bias.detach().numpy().copy()
    path = path.with_suffix(".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    card = make_card(
        config.players,
        algo=ALGO,
        config={k: v for k, v in dataclasses.asdict(config).items() if k != "run_dir"} | {"activation": "tanh"},
        steps=steps,
        wall_time_s=train_s,
        obs=config.obs,
        extra={"policy_head": "flat", "teacher": "none", "reroll": config.reroll, "curve": curve},
    )
    write_card(path, card)
    return path
