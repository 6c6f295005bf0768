"""MaskablePPO's config (``shelfie train --algo maskable_ppo``): every field documented and a flag."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

POLICY_HEADS = ("flat", "expect")


@dataclass
class TrainConfig:
    """Hyper-parameters and bookkeeping of one MaskablePPO self-play run."""

    players: int = 2
    """Players per game (1 = solo score maximisation, 2-4 = play to win against the opponent pool)."""

    total_steps: int = 1_000_000
    """Learner decisions to train for (opponents' moves are not counted), rounded up to whole
    rollouts of ``n_envs * n_steps``: PPO updates after each whole rollout."""

    seed: int = 0
    """Seed of the network initialisation, the envs' dice and the opponent sampling."""

    n_envs: int = 64
    """Parallel games per rollout (all in one process; one policy forward serves them all)."""

    batched: bool = True
    """Play the training games on the batched engine (one ``ShelfieVecEnv`` of ``n_envs`` games,
    compiled ``random``/``greedy`` opponents, snapshots in one forward pass; needs numba) instead
    of ``n_envs`` scalar envs. Same games, rewards and opponent schedule, about 3x the speed."""

    n_steps: int = 256
    """Rollout length per env before each update (batch = ``n_envs * n_steps``)."""

    batch_size: int = 1024
    """Minibatch size of the PPO update."""

    n_epochs: int = 4
    """Passes over each rollout."""

    learning_rate: float = 2e-5
    """Adam step size of PPO (constant; small, so PPO refines the warm start instead of
    overwriting it)."""

    gamma: float = 0.995
    """Discount factor; games last ~30 learner decisions, so close to 1."""

    gae_lambda: float = 0.95
    """GAE lambda."""

    clip_range: float = 0.1
    """PPO clipping of the probability ratio."""

    ent_coef: float = 0.0
    """Entropy bonus (small: the warm-started policy is already sensible)."""

    vf_coef: float = 0.5
    """Weight of the value loss."""

    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the separate policy and value MLPs."""

    activation: str = "tanh"
    """Hidden activation: ``tanh`` or ``relu``."""

    policy_head: str = "flat"
    """Actor output (:mod:`shelfie_env.train.maskable_ppo.policy`): ``flat`` (SB3's one linear layer, a logit
    per action id) or ``expect`` (an MLP of width ``net_arch`` values every placement the turn
    can end with, and the reroll ids get the exact expected value over the dice, as the planner
    computes it; with ``bc_teacher planner`` it is fitted to the planner's placement values)."""

    margin_coef: float = 0.1
    """Reward shaping (multiplayer): at the end of a game the learner gets, on top of the
    rank reward (+1 win, -1 loss, 0 tie for 2 players), ``margin_coef * (own score - best
    rival score) / 50``. 0 disables it. Evaluation always uses the true win rate."""

    solo_reward_scale: float = 0.02
    """Solo: the reward of each step is the change of the own score times this (the sum over
    a game is the final score times it)."""

    opp_random: float = 0.05
    """Probability that an opponent seat is played by ``random`` in a training game."""

    opp_greedy: float = 0.7
    """Probability that an opponent seat is played by ``greedy`` (if that bot exists; else its
    share goes to the snapshots)."""

    opp_latest: float = 0.5
    """Of the remaining (self-play) share, the fraction played by the newest snapshot; the rest
    is uniform over the older snapshots in the pool."""

    bc_games: int = 2000
    """Warm start (:mod:`shelfie_env.train.maskable_ppo.bc`): games of the teacher against itself whose decisions the
    network imitates before PPO starts (0 = start PPO from a random network)."""

    bc_epochs: int = 5
    """Passes of behaviour cloning over the teacher data."""

    bc_dagger_rounds: int = 1
    """DAgger rounds after cloning: the network plays, the teacher labels its positions, fit again."""

    bc_dagger_games: int = 1000
    """Games the network plays against the teacher in each DAgger round."""

    bc_dagger_epochs: int = 2
    """Passes over the grown data after each DAgger round."""

    bc_teacher: str = "greedy"
    """Bot imitated by the warm start, as a bot spec like ``shelfie arena``'s: a name, or a name
    with settings (``planner:threat=0.4`` imitates the planner with that weight changed)."""

    bc_soft_tau: float = 0.0
    """Soft targets (distillation) when > 0 and the teacher reports its action values (the
    ``planner`` does): the actor is fitted to ``softmax(values / bc_soft_tau)`` over the legal
    actions instead of the teacher's single choice, so it also learns which moves are nearly as
    good and which are blunders. A move worse by ``bc_soft_tau`` in the planner's units (about 10 x
    win-minus-loss chance) gets 1/e of the weight. 0 = the teacher's choice only."""

    init_from: str = ""
    """Start from the network of this model (an exported ``.npz`` such as
    ``shelfie_env/models/ppo_2p.npz``, or a run's ``.zip``, e.g. its ``distilled.zip``) instead of a
    fresh one, and skip the warm start; its card must match ``players``, ``policy_head``,
    ``net_arch`` and ``activation``. Empty = a fresh one."""

    snapshot_every: int = 100_000
    """Learner steps between two frozen snapshots added to the opponent pool."""

    pool_size: int = 10
    """Most snapshots kept in the pool (oldest dropped first)."""

    snapshot_deterministic: bool = False
    """Snapshots play their most likely action (True) or sample from their policy (False)."""

    eval_every: int = 100_000
    """Learner steps between two evaluations against ``greedy`` and ``random``."""

    eval_games: int = 200
    """Games per opponent in each periodic evaluation (seat-alternated, fixed seeds)."""

    deals: str = "selection"
    """Deals of the periodic evaluations, which also choose ``best``: ``selection`` (dice seeds
    10,000,000 + i), ``test`` (30,000,000 + i: for reported numbers only) or a first seed."""

    save_every: int = 50_000
    """Learner steps between two resumable checkpoints (``latest.zip`` + pool + eval log)."""

    export_from: str = "best"
    """Which network ``--export`` writes: ``best`` (the best periodic evaluation, ``best.zip``)
    or ``latest`` (the network when training ends, ``latest.zip``)."""

    run_dir: str = "runs/train"
    """Where logs, TensorBoard events and checkpoints of the run go."""

    progress: bool = False
    """Show a progress bar (tqdm/rich)."""

    def __post_init__(self) -> None:
        from shelfie_env.train.fields import check_net_arch, check_ranges, check_types

        check_types(self)
        if not 1 <= self.players <= 4:
            raise ValueError(f"players must be 1..4, got {self.players}")
        from shelfie_env.arena.deals import deal_start

        deal_start(self.deals)
        check_ranges(
            self,
            positive=(
                "total_steps",
                "n_envs",
                "n_steps",
                "batch_size",
                "n_epochs",
                "snapshot_every",
                "eval_every",
                "save_every",
                "pool_size",
                "clip_range",
            ),
            nonnegative=(
                "bc_games",
                "bc_epochs",
                "bc_dagger_rounds",
                "bc_dagger_games",
                "bc_dagger_epochs",
                "bc_soft_tau",
                "eval_games",
                "seed",
                "ent_coef",
                "vf_coef",
                "margin_coef",
                "solo_reward_scale",
                "learning_rate",  # 0 keeps the network as it starts (e.g. an --init-from model)
            ),
            unit=("gae_lambda", "opp_random", "opp_greedy", "opp_latest"),
        )
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")
        from shelfie_env.bots import available
        from shelfie_env.bots.spec import parse_spec

        bots = available()
        try:
            bot = parse_spec(self.bc_teacher)[0]
        except ValueError as e:
            raise ValueError(f"bc_teacher: {e}") from None
        if bot not in bots:
            raise ValueError(f"bc_teacher: unknown bot {bot!r}; available: {', '.join(bots)}")
        if self.opp_random + self.opp_greedy > 1.0 + 1e-9:
            raise ValueError("opp_random + opp_greedy must be <= 1")
        if self.activation not in ("tanh", "relu"):
            raise ValueError(f"activation must be tanh or relu, got {self.activation!r}")
        if self.export_from not in ("best", "latest"):
            raise ValueError(f"export_from must be best or latest, got {self.export_from!r}")
        if self.policy_head not in POLICY_HEADS:
            raise ValueError(
                f"policy_head must be one of {', '.join(POLICY_HEADS)}, got {self.policy_head!r}"
            )
        check_net_arch(self.net_arch)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (stored in the model card)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """Inverse of :meth:`to_dict` (an ``algo`` key, if any, must be ``maskable_ppo``); unknown keys are refused."""
        names = {f.name for f in dataclasses.fields(cls)}
        if data.get("algo", "maskable_ppo") != "maskable_ppo":
            raise ValueError(f"a config of --algo {data['algo']}, not of maskable_ppo")
        data = {k: v for k, v in data.items() if k != "algo"}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown config field(s): {', '.join(unknown)}")
        return cls(**data)
