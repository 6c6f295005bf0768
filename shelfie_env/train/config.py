"""Training configuration: one typed dataclass per ``shelfie train`` algorithm, every field documented.

:class:`PPOAfterstateConfig` is the default algorithm's (``--algo ppo_afterstate``),
:class:`TrainConfig` MaskablePPO's (``--algo maskable_ppo``). Command-line flags of
``shelfie train`` are generated from the fields (``--total-steps``, ``--players`` ...),
and the whole config is stored in the model card, so a run can be reproduced from its
card alone.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


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
    """Actor output (:mod:`shelfie_env.train.policy`): ``flat`` (SB3's one linear layer, a logit
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
    """Warm start (:mod:`shelfie_env.train.bc`): games of the teacher against itself whose decisions the
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
        """Inverse of :meth:`to_dict`; unknown keys are refused."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown config field(s): {', '.join(unknown)}")
        return cls(**data)


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


PRESETS = Path(__file__).with_name("presets")
"""The committed recipes (``<name>.toml``); each shipped model's card names its preset."""

COMMANDS = ("train", "train-td")
"""The training commands; a config file or preset is for one of them."""

ALGOS = ("ppo_afterstate", "maskable_ppo")
"""The algorithms of ``shelfie train --algo``; the first is the default."""

DEFAULT_ALGO = ALGOS[0]


def algo_config(algo: str) -> type:
    """The config dataclass of a ``shelfie train`` algorithm."""
    return {"ppo_afterstate": PPOAfterstateConfig, "maskable_ppo": TrainConfig}[algo]


def algo_fields(algo: str) -> set[str]:
    """The field names of :func:`algo_config` ``(algo)``."""
    return {f.name for f in dataclasses.fields(algo_config(algo))}


def _td_fields() -> set[str]:
    from shelfie_env.train.td import TDConfig

    return {f.name for f in dataclasses.fields(TDConfig)}


def config_algo(data: dict[str, Any], default: str = DEFAULT_ALGO) -> str | None:
    """The algorithm config ``data`` (a file, a preset or a run's ``config.json``) is for.

    Its ``algo`` when it has one (``ppo_afterstate``, ``maskable_ppo`` or ``td``). Otherwise the
    ``shelfie train`` algorithm whose config has every field of ``data``, ``default`` when both
    have them all (a file of shared fields such as ``total_steps`` only); else ``td`` when they
    are all :class:`~shelfie_env.train.td.TDConfig` fields; else ``None``.
    """
    if data.get("algo") is not None:
        return str(data["algo"])
    keys = set(data)
    fitting = [algo for algo in ALGOS if keys <= algo_fields(algo)]
    if fitting:
        return default if default in fitting else fitting[0]
    return "td" if keys <= _td_fields() else None


def fits_command(data: dict[str, Any], command: str) -> bool:
    """Whether config ``data`` is for ``shelfie <command>``: a TD(lambda) config says ``algo = "td"``
    or holds only :class:`~shelfie_env.train.td.TDConfig` fields; a ``shelfie train`` config says
    ``algo = "ppo_afterstate"`` or ``"maskable_ppo"`` and holds only that algorithm's fields, or
    says no ``algo`` and holds only the fields of one of them."""
    algo = data.get("algo")
    keys = set(data) - {"algo"}
    if command == "train-td":
        return algo in (None, "td") and keys <= _td_fields()
    if algo is None:
        return any(keys <= algo_fields(a) for a in ALGOS)
    return algo in ALGOS and keys <= algo_fields(str(algo))


def check_command(source: str | Path, data: dict[str, Any], command: str) -> None:
    """``ValueError`` naming the command to run when config ``data`` (from ``--config source``) is
    for another training command, or naming the algorithms when its ``algo`` is none of them."""
    if fits_command(data, command):
        return
    algo = data.get("algo")
    if algo is not None and algo not in (*ALGOS, "td"):
        raise ValueError(
            f"--config {source}: unknown algo {algo!r}; shelfie train runs {' or '.join(ALGOS)}, "
            "shelfie train-td runs td"
        )
    for other in COMMANDS:
        if other != command and fits_command(data, other):
            raise ValueError(
                f"--config {source} is a config of shelfie {other}, not shelfie {command}; "
                f"run: shelfie {other} --config {source}"
            )


def check_resumed(run_dir: str | Path, data: dict[str, Any], command: str) -> None:
    """``ValueError`` naming the command to run when ``run_dir``'s ``config.json`` (``data``) is a
    run of the other training command."""
    if fits_command(data, command):
        return
    for other in COMMANDS:
        if other != command and fits_command(data, other):
            raise ValueError(
                f"--resume: {run_dir} holds a shelfie {other} run; run: shelfie {other} --resume --run-dir {run_dir}"
            )


def preset_names(command: str | None = None) -> list[str]:
    """Names ``--config`` accepts besides a file path: every preset, or those of ``command``
    (``"train"`` or ``"train-td"``), or those of a ``shelfie train`` algorithm (``"ppo_afterstate"``
    or ``"maskable_ppo"``)."""
    names = sorted(p.stem for p in PRESETS.glob("*.toml"))
    if command is None:
        return names
    if command in ALGOS:
        return [n for n in preset_names("train") if config_algo(_parse(PRESETS / f"{n}.toml")) == command]
    return [n for n in names if fits_command(_parse(PRESETS / f"{n}.toml"), command)]


def read_config(source: str | Path, command: str | None = None) -> dict[str, Any]:
    """Config fields from a preset name, or a ``.toml`` / ``.json`` file; the error names what is wrong.

    With ``command`` (``"train"`` or ``"train-td"``) a config of the other training command is
    refused with a message naming the command it is for.
    """
    path = Path(source)
    if not path.is_file() and str(source) in preset_names():
        path = PRESETS / f"{source}.toml"
    if not path.is_file():
        names = preset_names(command)
        whose = f"of shelfie {command} " if command else ""
        raise FileNotFoundError(
            f"--config {source}: no such file, and not a preset {whose}(presets: {', '.join(names)})"
        )
    data = _parse(path)
    if command is not None:
        check_command(source, data, command)
    return data


def _parse(path: Path) -> dict[str, Any]:
    text = path.read_text()
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"--config {path}: cannot be parsed ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"--config {path}: expected a table of config fields")
    return data


def field_docs(config: type = TrainConfig) -> dict[str, str]:
    """Docstring of each field of dataclass ``config`` (read from the source), for ``--help`` and the docs."""
    import ast
    import inspect
    import itertools
    import textwrap

    tree = ast.parse(textwrap.dedent(inspect.getsource(config)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in itertools.pairwise(body):
        named = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if named and isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant):
            docs[node.target.id] = " ".join(str(nxt.value.value).split())
    return docs
