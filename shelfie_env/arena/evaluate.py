"""``evaluate``: rate any agent under the protocol of every table in the docs, in one call.

>>> from shelfie_env.arena import evaluate
>>> report = evaluate(my_agent, opponents=["greedy", "planner"], games=1000)  # doctest: +SKIP
>>> print(report)  # doctest: +SKIP

``my_agent`` is a bot spec (``"td"``, ``"ppo:path=mine.npz"``), a bot (an object
with ``act(state) -> action``), or a plain function of the state dict returning a
legal action id. It plays ``games`` games against each opponent on the ``test``
deals with common dice, every deal under every seating (duplicate), and its
results are reported raw and luck-corrected (:mod:`shelfie_env.arena.luck`),
each with its 95 % interval. At 3–4 players it sits alone against a field of
copies of each opponent.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shelfie_env.arena.protocol import run_arena
from shelfie_env.arena.report import games_factor, to_markdown
from shelfie_env.arena.results import clipped
from shelfie_env.arena.values import DEFAULT_LUCK
from shelfie_env.bots import Bot, action_id
from shelfie_env.game.engine import Game
from shelfie_env.observation.vector import encode


class FunctionBot:
    """A bot around a plain function ``state dict -> action id``."""

    def __init__(self, fn: Callable[[dict[str, Any]], int], name: str = "agent") -> None:
        self.fn = fn
        self.name = name

    def act(self, state: dict[str, Any]) -> int:
        return action_id(self.fn(state), self.name)


class ObsBot:
    """A bot from ``fn(observation, legal_mask) -> action``: the training env's observation and a boolean
    mask of the legal actions (its ``action_masks()``)."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], int]) -> None:
        self.fn = fn

    def act_game(self, game: Game) -> int:
        return action_id(self.fn(encode(game, game.current), game.legal_mask().astype(bool)), "the agent")

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))


@dataclass
class EvaluationRow:
    """The agent's result against one opponent (rank reward: +1 win, 0 tie, −1 loss)."""

    opponent: str
    games: int
    units: int
    raw: dict[str, Any]
    corrected: dict[str, Any] | None
    variance_ratio: float | None  # the games factor; None when raw or corrected results do not vary

    @property
    def score_rate(self) -> float:
        """Luck-corrected score rate (wins + half the ties) when luck was measured, else the raw one.

        The corrected rate is an unbiased estimate and can leave [0, 1] by a little (``str()`` prints
        it cut to the range)."""
        return (self.corrected or self.raw)["score_rate"]


@dataclass
class Evaluation:
    """What :func:`evaluate` returns: one row per opponent, and the arena results behind them."""

    agent: str
    rows: list[EvaluationRow]
    results: list[dict[str, Any]] = field(repr=False)

    def __str__(self) -> str:
        lines = [f"{self.agent}: score rate (wins + half the ties), 95% interval"]
        for r in self.rows:
            lo, hi = r.raw["score_rate_ci95"]
            text = f"  vs {r.opponent:<10} {r.games} games: raw {100 * r.raw['score_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
            if r.corrected is not None:
                c = clipped(r.corrected)
                lo, hi = c["score_rate_ci95"]
                text += f", luck-corrected {100 * c['score_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
                text += f", games factor {games_factor(r.variance_ratio)}"
            lines.append(text)
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The arena's Markdown report of every opponent, one after the other."""
        return "\n".join(to_markdown(res) for res in self.results)


def _as_bot(policy: str | Bot | Callable[[dict[str, Any]], int], name: str) -> tuple[str, Bot | None]:
    if isinstance(policy, str):
        return policy, None
    if callable(getattr(policy, "act", None)):
        return name, policy  # type: ignore[return-value]
    if callable(policy):
        return name, FunctionBot(policy, name)
    raise TypeError(
        f"policy must be a bot spec, a bot with act(state) or a function of the state, got {policy!r}"
    )


def _picklable(obj: object) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:  # noqa: BLE001 - any failure means: play it in this process
        return False
    return True


def evaluate(
    policy: str | Bot | Callable[[dict[str, Any]], int],
    opponents: Sequence[str] = ("greedy",),
    players: int = 2,
    games: int = 1000,
    deals: str | int = "test",
    duplicate: bool = True,
    luck: str | None = DEFAULT_LUCK,
    workers: int | None = None,
    name: str = "agent",
) -> Evaluation:
    """Play ``policy`` against each of ``opponents`` under the arena's protocol (module doc).

    ``luck=None`` skips the luck-corrected results (faster); ``luck="td"`` or ``"planner"``
    measures luck with one value function instead of the mean of both (the default). ``games`` is per
    opponent and, with ``duplicate``, a multiple of ``players``. A bot spec is played over
    all cores (``workers``); an agent object or function plays in this process unless
    ``workers`` is given and it can be pickled (defined in an importable module).
    """
    if isinstance(opponents, str):
        opponents = [opponents]
    spec, bot = _as_bot(policy, name)
    given = {spec: bot} if bot is not None else None
    if bot is not None and (workers is None or not _picklable(bot)):
        workers = 1  # an agent object plays in this process unless asked otherwise (and importable)
    rows, results = [], []
    for opp in opponents:
        if players == 2 and opp == spec:
            raise ValueError(f"the agent and its opponent share the name {spec!r}; pass name=...")
        # 2 players: the agent against ``opp`` head to head; more: the agent alone in a field of ``opp``
        head_to_head = players == 2
        res = run_arena(
            [spec, opp] if head_to_head else [spec],
            players,
            games,
            workers=workers,
            ratings=False,
            bots=given,
            field=None if head_to_head else opp,
            deals=deals,
            duplicate=duplicate,
            luck=luck,
        )
        if head_to_head:
            (stats,) = res["results"]["pairings"]
        else:
            stats = next(b for b in res["results"]["bots"] if b["bot"] == spec)
        results.append(res)
        rows.append(
            EvaluationRow(
                opponent=opp,
                games=stats["games"],
                units=stats["units"],
                raw=stats["raw"],
                corrected=stats.get("corrected"),
                variance_ratio=stats.get("variance_ratio"),
            )
        )
    return Evaluation(spec, rows, results)
