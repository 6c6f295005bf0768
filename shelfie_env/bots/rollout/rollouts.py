"""Rollout values of a position: every legal action valued by playing the game out many times.

For the player on turn (the *mover*) each legal action ``a`` is played, then the
game is played to its end by a **base policy** in every seat (``td`` by default:
the shipped model of the table size), ``K`` times. Rollout ``k`` of every action
is dealt the future dice of the same :class:`~shelfie_env.game.dice.DiceTape`
(seed ``seed + k``): **common dice**, so two actions are compared on the same
luck and two identical actions get identical values.

The result of a rollout is the mover's rank reward (docs/rules.md: (rivals
beaten − rivals ahead) / (n − 1)). Its **luck-corrected** result subtracts the
luck of every roll after the action, as :mod:`~shelfie_env.arena.luck` does for
arena games (the mover's own luck, plus its share of its rivals')::

    corrected = raw − Σ_{e: a_e = mover} L_e + Σ_{e: a_e ≠ mover} L_e / (n − 1)

Each ``L_e`` is a control variate with mean exactly zero given everything before
the roll (the expectation is taken over the true dice probabilities), so the
corrected mean is an unbiased estimate of the action's value under the base
policy, with a variance several times smaller. The luck is measured with the
``td`` network of the table size: the same tables the ``td`` base policy plays
its rerolls from, so with that policy it costs nothing extra.

:func:`rollout_values` gives each action's mean, standard error, raw mean and the
standard error of its gap to the best action (paired over the common dice).
Rollouts run side by side: all turns that start at the same step share one
network forward (:func:`~shelfie_env.bots.learned.value.turn_contexts`) and one
batched pass over the dice tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.bots import Bot, act_on_game
from shelfie_env.bots.learned.value import LearnedContext, load_value_bot, shipped_td_model, turn_contexts
from shelfie_env.bots.planner.dice import (
    FINAL_INDEX,
    KEEP_INDEX,
    PAD,
    SUB_KEEPS,
    TRANSITION,
    counts_of,
    keep_index_of_reroll,
)
from shelfie_env.bots.planner.search import action_values, best_action
from shelfie_env.game.actions import STOP
from shelfie_env.game.dice import DiceTape
from shelfie_env.game.engine import REROLL, Game

FRESH = KEEP_INDEX[(0,) * 6]
DEFAULT_POLICY = "td"
"""The base policy of every seat unless another is named (the shipped ``td`` model of the table size)."""


def rank_reward(scores: Sequence[int], seat: int) -> float:
    """``seat``'s rank reward: (rivals it beat − rivals ahead of it) / (n − 1)."""
    own = scores[seat]
    rivals = [s for q, s in enumerate(scores) if q != seat]
    if not rivals:
        raise ValueError("the rank reward needs 2-4 players")
    return (sum(s < own for s in rivals) - sum(s > own for s in rivals)) / len(rivals)



@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on one thread for the block (when ``threadpoolctl`` is installed: the ``train``
    extra). The dice-table products of a turn are small; a multi-threaded BLAS sharing busy cores
    with other processes spins and makes labelling several times slower."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(1, user_api="blas"):
        yield

@dataclass
class Turn:
    """One turn's search context and its dice tables (``v[r]``: dice with ``r`` rerolls left;
    ``e[r - 1]``: each keep before a roll with ``r`` rerolls left before it; ``fresh``: before the
    turn's first roll). Values are the ``td`` network's, from the mover's seat."""

    ctx: LearnedContext
    v: tuple[np.ndarray, np.ndarray, np.ndarray]
    e: tuple[np.ndarray, np.ndarray]
    fresh: float
    choices: dict[tuple[Any, ...], int] = field(default_factory=dict)
    """The policy's circle-phase and cross choices made so far in this turn, by dice and shelf."""


def _best_keep_many(keep_values: np.ndarray) -> np.ndarray:
    """``(G, 462)``: per final multiset, the best keep within it (batched ``best_keep_value``)."""
    padded = np.concatenate(
        [keep_values, np.full((len(keep_values), PAD + 1 - keep_values.shape[1]), -np.inf)], 1
    )
    return padded[:, SUB_KEEPS].max(axis=2)


class BasePolicy:
    """The policy every seat plays in a rollout, and the ``td`` tables luck is measured with.

    ``spec`` is a bot spec: ``td`` (the shipped model of the table size) or ``td:path=MODEL`` play
    from the batched tables; any other bot (``planner``, ``td:depth=2``, ``greedy``) is asked game by
    game, with the shipped ``td`` network measuring the luck.
    """

    def __init__(self, num_players: int, spec: str = DEFAULT_POLICY, cache_size: int = 4096) -> None:
        from shelfie_env.bots.spec import parse_spec

        if not 2 <= num_players <= 4:
            raise ValueError(f"rollouts need 2-4 players (the rank reward), got {num_players}")
        name, options = parse_spec(spec)
        path = options.get("path") if name == "td" else None
        fast = name == "td" and set(options) <= {"path"}
        model = Path(str(path)) if path is not None else shipped_td_model(num_players)
        self.net = load_value_bot(model, num_players).net
        self.spec = spec
        self.num_players = num_players
        self.bot: Bot | None = None if fast else _build(spec, num_players)
        self.cache_size = cache_size
        self._turns: dict[tuple[Any, ...], Turn] = {}
        self._rerolls: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, int]] = {}

    def turns(self, games: Sequence[Game]) -> list[Turn]:
        """The :class:`Turn` of each game's turn (built from the game as it stands; cached by shelves)."""
        keys = [(g.current, tuple(g.circled), tuple(g.crossed), g.phase == REROLL, g.circles > 0) for g in games]
        if len(self._turns) + len(set(keys)) > self.cache_size:
            self._turns.clear()
        todo = {k: g for k, g in zip(keys, games) if k not in self._turns}
        if todo:
            for key, turn in zip(todo, self._build(list(todo.values()))):
                self._turns[key] = turn
        return [self._turns[k] for k in keys]

    def _build(self, games: list[Game]) -> list[Turn]:
        from shelfie_env.bots.planner.search import placement_values

        out: list[Turn] = []
        for at in range(0, len(games), 64):
            part = games[at : at + 64]
            ctxs = turn_contexts(self.net, part)
            v0 = np.stack([placement_values(c) for c in ctxs]).astype(np.float64)
            e1 = v0 @ TRANSITION.T
            v1 = _best_keep_many(e1)
            e2 = v1 @ TRANSITION.T
            v2 = _best_keep_many(e2)
            fresh = v2 @ TRANSITION[FRESH]
            for i, c in enumerate(ctxs):
                c.cache["v0"] = v0[i]
                c.cache[("keeps", 1)] = e1[i]
                c.cache[("keeps", 2)] = e2[i]
                out.append(Turn(c, (v0[i], v1[i], v2[i]), (e1[i], e2[i]), float(fresh[i])))
        return out

    def act(self, game: Game, turn: Turn) -> int:
        """The base policy's action in ``game`` (``turn``: its turn's tables)."""
        if self.bot is not None:
            return act_on_game(self.bot, game)
        if game.phase == REROLL:
            return self._reroll_choice(game, turn)
        p = game.current
        key = (tuple(game.counts), game.circled[p], game.crossed[p], game.circles)
        memo = turn.choices.get(key)
        if memo is None:
            memo = turn.choices[key] = best_action(action_values(game, ctx=turn.ctx))
        return memo

    def _reroll_choice(self, game: Game, turn: Turn) -> int:
        """``td``'s reroll-phase choice from the tables: the best of stopping (``V0`` of the dice) and
        every legal reroll (its keep's value); values within 1e-9 of the best go to the lowest id,
        as :func:`~shelfie_env.bots.planner.search.ranked_actions` orders them."""
        dice = tuple(game.dice)
        options = self._rerolls.get(dice)
        if options is None:
            ids = np.array([a for a in game.legal_actions() if a != STOP], dtype=np.int64)
            keeps = np.array([keep_index_of_reroll(dice, int(a)) for a in ids], dtype=np.int64)
            options = self._rerolls[dice] = (ids, keeps, FINAL_INDEX[counts_of(dice)])
        ids, keeps, m = options
        stop = turn.v[0][m]
        values = turn.e[game.rolls_left - 1][keeps]
        top = max(stop, float(values.max())) if len(ids) else stop
        if stop >= top - 1e-9:
            return STOP
        return int(ids[values >= top - 1e-9].min())


def _build(spec: str, num_players: int) -> Bot:
    from shelfie_env.bots.spec import build_bot

    bot = build_bot(spec)
    model_for = getattr(bot, "model_for", None)
    return model_for(num_players) if callable(model_for) else bot


@dataclass
class _Rollout:
    game: Game
    turn: Turn
    key: tuple[int, int]
    luck: np.ndarray = field(default_factory=lambda: np.zeros(4))


def _roll_luck(r: _Rollout, action: int) -> tuple[int, int, int] | None:
    """(rerolls left, keep index, seat) of a reroll about to be played, else ``None``."""
    g = r.game
    if g.phase != REROLL or action == STOP:
        return None
    return g.rolls_left, keep_index_of_reroll(g.dice, action), g.current


def _step(r: _Rollout, action: int) -> None:
    """Play ``action`` in rollout ``r`` and add the luck of the roll it makes."""
    pending = _roll_luck(r, action)
    r.game.step(action)
    if pending is not None:
        left, keep, seat = pending
        m = FINAL_INDEX[tuple(r.game.counts)]
        r.luck[seat] += r.turn.v[left - 1][m] - r.turn.e[left - 1][keep]


def simulate(
    game: Game, actions: Sequence[int], seeds: Sequence[int], policy: BasePolicy
) -> tuple[np.ndarray, np.ndarray]:
    """Play every action of ``actions`` then the base policy to the end, once per dice-tape seed.

    Returns ``(raw, corrected)``, each ``(len(actions), len(seeds))``: the mover's rank reward and
    its luck-corrected value (module doc).
    """
    if game.over:
        raise ValueError("the game is over: no action to value")
    if game.num_players != policy.num_players:
        raise ValueError(
            f"the policy plays {policy.num_players}-player games, the position has {game.num_players}"
        )
    legal = set(game.legal_actions())
    bad = [a for a in actions if a not in legal]
    if bad:
        raise ValueError(f"actions {bad} are not legal in this position (legal: {sorted(legal)})")
    mover, n = game.current, game.num_players
    (start,) = policy.turns([game])
    runs: list[_Rollout] = []
    for a in actions:
        for s in seeds:
            r = _Rollout(game.clone(rng=DiceTape(int(s))), start, (game.current, game.round), np.zeros(n))
            _step(r, int(a))
            runs.append(r)
    live = [r for r in runs if not r.game.over]
    while live:
        new = [r for r in live if (r.game.current, r.game.round) != r.key]
        if new:
            for r, turn in zip(new, policy.turns([r.game for r in new])):
                g = r.game
                r.turn, r.key = turn, (g.current, g.round)
                r.luck[g.current] += turn.v[2][FINAL_INDEX[tuple(g.counts)]] - turn.fresh
        for r in live:
            _step(r, policy.act(r.game, r.turn))
        live = [r for r in live if not r.game.over]
    raw = np.array([rank_reward(r.game.scores(), mover) for r in runs])
    luck = np.array([r.luck for r in runs])
    own = luck[:, mover]
    rivals = luck.sum(1) - own
    corrected = raw - own + rivals / (n - 1)
    shape = (len(actions), len(seeds))
    return raw.reshape(shape), corrected.reshape(shape)


@dataclass(frozen=True)
class RolloutValues:
    """Every legal action's value to the mover (mean luck-corrected rank reward under the base policy)."""

    actions: tuple[int, ...]
    value: np.ndarray
    """Mean corrected result of each action."""
    se: np.ndarray
    """Its standard error."""
    raw: np.ndarray
    """Mean raw rank reward of each action (the same rollouts, uncorrected)."""
    raw_se: np.ndarray
    gap_se: np.ndarray
    """Standard error of ``value[best] − value[a]``, paired over the common dice (0 for the best)."""
    rollouts: np.ndarray
    """Rollouts of each action."""

    @property
    def best(self) -> int:
        """The action of highest value."""
        return self.actions[int(np.argmax(self.value))]

    def loss(self, action: int) -> float:
        """Value lost by playing ``action`` instead of the best one."""
        if action not in self.actions:
            raise ValueError(f"action {action} was not valued (valued: {list(self.actions)})")
        return float(self.value.max() - self.value[self.actions.index(action)])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready lists (values rounded to 5 decimals)."""

        def r(x: np.ndarray) -> list[float]:
            return [round(float(v), 5) for v in x]

        return {
            "actions": list(self.actions),
            "value": r(self.value),
            "se": r(self.se),
            "raw": r(self.raw),
            "raw_se": r(self.raw_se),
            "gap_se": r(self.gap_se),
            "rollouts": [int(k) for k in self.rollouts],
        }


def _se(x: np.ndarray) -> float:
    return float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("inf")


def summarise(
    actions: Sequence[int], raw: Sequence[np.ndarray], corrected: Sequence[np.ndarray]
) -> RolloutValues:
    """:class:`RolloutValues` from each action's raw and corrected results (rollout k of every action
    on the same dice; actions may have different numbers of rollouts: gaps pair the common ones)."""
    value = np.array([c.mean() for c in corrected])
    best = int(np.argmax(value))
    gap = []
    for c in corrected:
        k = min(len(c), len(corrected[best]))
        gap.append(_se(corrected[best][:k] - c[:k]) if c is not corrected[best] else 0.0)
    return RolloutValues(
        tuple(int(a) for a in actions),
        value,
        np.array([_se(c) for c in corrected]),
        np.array([x.mean() for x in raw]),
        np.array([_se(x) for x in raw]),
        np.array(gap),
        np.array([len(c) for c in corrected]),
    )


def rollout_values(
    game: Game,
    rollouts: int = 32,
    *,
    policy: BasePolicy | str = DEFAULT_POLICY,
    seed: int = 0,
    extra: int = 0,
    focus: int = 4,
    actions: Sequence[int] | None = None,
) -> RolloutValues:
    """Value every legal action of ``game`` (or ``actions``) by ``rollouts`` rollouts each.

    Rollout ``k`` of every action is dealt the dice tape ``seed + k``. With ``extra``, the ``focus``
    actions of highest value after those rollouts get ``extra`` more each (tapes ``seed + rollouts``
    on), so the best action and its closest rivals are the most precise.
    """
    for name, v, low in (
        ("rollouts", rollouts, 2),
        ("extra", extra, 0),
        ("focus", focus, 1),
        ("seed", seed, 0),
    ):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ValueError(f"{name} must be an integer of at least {low}, got {v!r}")
    base = policy if isinstance(policy, BasePolicy) else BasePolicy(game.num_players, policy)
    acts = list(game.legal_actions() if actions is None else actions)
    if not acts:
        raise ValueError("the position has no legal action (the game is over)")
    raw, cor = simulate(game, acts, list(range(seed, seed + rollouts)), base)
    raws, cors = list(raw), list(cor)
    if extra and len(acts) > 1:
        first = summarise(acts, raws, cors)
        top = [int(i) for i in np.argsort(-first.value, kind="stable")[:focus]]
        more = list(range(seed + rollouts, seed + rollouts + extra))
        raw2, cor2 = simulate(game, [acts[i] for i in top], more, base)
        for j, i in enumerate(top):
            raws[i] = np.concatenate([raws[i], raw2[j]])
            cors[i] = np.concatenate([cors[i], cor2[j]])
    return summarise(acts, raws, cors)


__all__ = [
    "DEFAULT_POLICY",
    "BasePolicy",
    "RolloutValues",
    "rank_reward",
    "rollout_values",
    "simulate",
    "summarise",
]
