"""The after-state PPO's config (``shelfie train``, the default ``--algo ppo_afterstate``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PPOAfterstateConfig:
    """Hyper-parameters of one PPO run of the after-state policy (``shelfie train``, the default
    ``--algo ppo_afterstate``); the defaults are its default run."""

    players: int = 2
    """Players per game (2-4)."""
    total_steps: int = 250_000
    """Learner decisions to train for (opponents' moves are not counted); training stops after
    the first iteration that reaches it."""
    games: int = 128
    """Games played (in lockstep, to the end) per iteration."""
    opp_greedy: float = 0.2
    """Chance that a seat is ``greedy`` (at least one seat is always the learner)."""
    margin_coef: float = 0.1
    """Final reward: rank reward + ``margin_coef`` x (own - best rival score) / 50."""
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    """Hidden widths of the after-state MLP (``tanh``)."""
    beta: float = 10.0
    """Initial inverse temperature of the policy (learned)."""
    learning_rate: float = 1e-3
    """Adam step size."""
    gamma: float = 1.0
    """Discount per decision."""
    gae_lambda: float = 0.9
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio."""
    epochs: int = 2
    """Passes over each iteration's decisions."""
    turns_per_batch: int = 256
    """Turns per minibatch (with all their decisions)."""
    vf_coef: float = 1.0
    """Weight of the critic's squared error."""
    ent_coef: float = 0.0
    """Entropy bonus."""
    max_grad_norm: float = 1.0
    """Gradient clipping (0: none)."""
    threads: int = 1
    """Torch threads of the update (and of the rollout when played in this process)."""
    rollout_worker: bool = True
    """Play each iteration's games in a worker process while the update of the previous ones runs
    (both cores busy; the games are played by the network of one update earlier, their
    probabilities recorded, so the PPO ratio stays exact). ``false``: play, then update, in turn."""
    seed: int = 0
    """Seed of the weights, the dice, the seats and the sampling."""
    eval_every: int = 100_000
    """Learner steps between evaluations (0: only at the end)."""
    eval_games: int = 200
    """Arena games against ``greedy`` per evaluation (0: none)."""
    run_dir: str = "runs/train"
    """Checkpoints, logs and exported models."""

    def __post_init__(self) -> None:
        from shelfie_env.train.fields import check_net_arch, check_ranges, check_types

        check_types(self)
        if not 2 <= self.players <= 4:
            raise ValueError(f"players must be 2..4, got {self.players} (a solo policy: --algo maskable_ppo)")
        if not 0.0 <= self.opp_greedy < 1.0:
            raise ValueError(f"opp_greedy must be in [0, 1), got {self.opp_greedy}")
        check_ranges(
            self,
            positive=(
                "total_steps",
                "games",
                "epochs",
                "turns_per_batch",
                "threads",
                "beta",
                "learning_rate",
                "clip_range",
            ),
            nonnegative=(
                "seed",
                "eval_every",
                "eval_games",
                "vf_coef",
                "ent_coef",
                "max_grad_norm",
                "margin_coef",
            ),
            unit=("gamma", "gae_lambda"),
        )
        check_net_arch(self.net_arch)
