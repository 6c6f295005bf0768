"""TD(λ)'s config (``shelfie train --algo td``, also ``shelfie train-td``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from shelfie_env.arena.deals import deal_start


@dataclass
class TDConfig:
    """One TD(λ) self-play run."""

    players: int = 2
    """Players per game (2-4)."""
    iterations: int = 320
    """Play-then-fit iterations."""
    games: int = 200
    """Games played per iteration."""
    lam: float = 0.7
    """λ of the λ-returns (0: one-step TD, 1: the final reward)."""
    margin_coef: float = 0.1
    """Weight of the final score margin (per 50 points) in the reward, on top of the rank reward."""
    opp_greedy: float = 0.2
    """Chance that an opponent seat is ``greedy`` in a game (else the learner itself)."""
    opp_random: float = 0.0
    """Chance that an opponent seat is ``random``."""
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    """Hidden widths of the value network (``tanh``)."""
    learning_rate: float = 1e-3
    """Adam step size."""
    lr_late: float = 3e-4
    """Adam step size from iteration ``lr_late_from`` on (0: ``learning_rate`` throughout)."""
    lr_late_from: int = 250
    """First iteration of ``lr_late``."""
    epochs: int = 2
    """Passes over each iteration's positions."""
    batch_size: int = 256
    """Minibatch of the fit."""
    seed: int = 0
    """Seed of the weights, the dice and the opponent draws."""
    workers: int = 1
    """Processes that play each iteration's games (1: in this process)."""
    lockstep: int = 32
    """Games each process plays side by side, their learner turns valued in one forward."""
    eval_every: int = 10
    """Iterations between evaluations (0: none)."""
    eval_games: int = 200
    """Arena games against each evaluation opponent (game i dealt deal i of ``deals``)."""

    deals: str = "selection"
    """Deals of the periodic evaluations: ``selection`` (dice seeds 10,000,000 + i), ``test``
    (30,000,000 + i: for reported numbers only) or a first seed."""
    eval_opponents: list[str] = field(default_factory=lambda: ["greedy", "planner"])
    """Bots the learner is evaluated against."""
    target: str = "lambda"
    """What each position is fitted to: ``lambda`` (λ-returns over the seat's next positions) or
    ``reply`` (2 players: λ-returns in which each position's own search value takes the next
    position's place; the search plays the rival's whole reply exactly over its dice)."""
    play_depth: int = 1
    """Search of the learner's moves: 1 (the network alone) or 2 (2 players: circle and cross
    choices valued by the rival's reply, as ``td:depth=2`` plays)."""
    search_width: int = 8
    """Choices the depth-2 search re-values (the network's best ones)."""
    init: str = ""
    """A ``td`` model file to start from (``""``: random weights; ``shipped``: the shipped model of
    ``players``)."""
    run_dir: str = "runs/td_2p"
    """Where checkpoints, the evaluation log and exported models go."""

    def __post_init__(self) -> None:
        from shelfie_env.train.fields import check_net_arch, check_ranges, check_types

        check_types(self)
        if not 2 <= self.players <= 4:
            raise ValueError(f"players must be 2..4, got {self.players}")
        if not 0.0 <= self.opp_greedy + self.opp_random <= 1.0 or min(self.opp_greedy, self.opp_random) < 0:
            raise ValueError("opp_greedy and opp_random must be >= 0 with a sum <= 1")
        check_ranges(
            self,
            positive=("iterations", "games", "epochs", "batch_size", "workers", "lockstep", "learning_rate"),
            nonnegative=("seed", "eval_every", "eval_games", "lr_late", "lr_late_from"),
            unit=("lam",),
        )
        deal_start(self.deals)
        if self.target not in ("lambda", "reply"):
            raise ValueError(f"target must be 'lambda' or 'reply', got {self.target!r}")
        if self.play_depth not in (1, 2):
            raise ValueError(f"play_depth must be 1 or 2, got {self.play_depth}")
        if (self.target == "reply" or self.play_depth == 2) and self.players != 2:
            raise ValueError("target 'reply' and play_depth 2 search the rival's reply: players must be 2")
        if self.search_width < 1:
            raise ValueError(f"search_width must be at least 1, got {self.search_width}")
        if self.eval_every and not self.eval_games:
            raise ValueError("eval_games must be positive when eval_every is (eval_every 0: no evaluation)")
        check_net_arch(self.net_arch)
        if self.eval_every and not self.eval_opponents:
            raise ValueError("eval_opponents needs at least one bot when eval_every is positive")
        from shelfie_env.bots import available

        unknown = [b for b in self.eval_opponents if b not in available()]
        if unknown:
            raise ValueError(
                f"eval_opponents: unknown bot(s) {', '.join(unknown)}; available: {', '.join(available())}"
            )
