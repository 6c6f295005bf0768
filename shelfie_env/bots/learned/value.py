"""``td``: a learned after-state value network with the planner's exact search over the dice.

At the start of a turn the network values every position the turn can end in
(:class:`~shelfie_env.bots.learned.afterstate.AfterstateNet`: each circle set of
:data:`~shelfie_env.bots.planner.placements.SET_MASKS` and each row to cross
out, game-ending ones exactly). Those values take the place of the planner's
hand-written evaluation; the planner's search then values every reroll exactly
over the dice and every circle by its best completion
(:mod:`shelfie_env.bots.planner.search`). Numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.bots.learned.afterstate import AfterstateNet, afterstates, final_reward
from shelfie_env.bots.learned.card import CheckpointMismatchError, load_card, shipped_file, shipped_sizes
from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.learned.policy import read_weights
from shelfie_env.bots.learned.reply import ReplySearch
from shelfie_env.bots.planner.evaluation import ContextCache, Weights, continues_turn, position_key
from shelfie_env.bots.planner.placements import SET_MASKS
from shelfie_env.bots.planner.search import action_values, best_action
from shelfie_env.game.engine import CIRCLE, REROLL, Game
from shelfie_env.game.scoring import FULL

SET_INDEX = {int(m): i for i, m in enumerate(SET_MASKS)}
"""Index of each circle set (a mask of 1..3 cells) among the network's outputs."""

_NO_DEEP = Weights(deep=0, solo_deep=0)


class LearnedContext:
    """What the planner's search asks of an evaluation, answered by learned placement values.

    Sets are relative to the shelf of the position it is built for (``key``: its
    :func:`~shelfie_env.bots.planner.evaluation.position_key`). A caller that follows one game's
    positions may use it for the rest of that turn (:meth:`matches`); a bot reuses it only for the
    same position (:class:`~shelfie_env.bots.planner.evaluation.ContextCache`).
    """

    def __init__(self, game: Game, values: np.ndarray, stay: float | None = None) -> None:
        self.game = game
        self.stay = stay
        self.weights = _NO_DEEP
        p = self.player = game.current
        self.rivals = [q for q in range(game.num_players) if q != p]
        self.circled, self.crossed = game.circled[p], game.crossed[p]
        self.free = FULL & ~(self.circled | self.crossed)
        self.values = values
        self.cache: dict[object, Any] = {}
        self.turn = (p, tuple(game.circled), tuple(game.crossed))
        self.key = position_key(game)

    def evaluate_circles(self, sets: np.ndarray) -> np.ndarray:
        flat = [int(s) for s in np.asarray(sets).ravel()]
        if 0 not in flat:
            return self.values[[SET_INDEX[s] for s in flat]]
        if self.stay is None:
            raise ValueError("ending the turn with no more circles needs the context's stay value")
        out = self.values[[SET_INDEX.get(s, 0) for s in flat]]
        out[[i for i, s in enumerate(flat) if s == 0]] = self.stay
        return out

    def evaluate_crosses(self, rows: list[int]) -> np.ndarray:
        return self.values[NUM_SETS + np.asarray(rows, dtype=np.int64)]

    def matches(self, game: Game) -> bool:
        """Whether ``game``, a later position of the same game, is still in this context's turn
        (:func:`~shelfie_env.bots.planner.evaluation.continues_turn`, which see: a state alone does
        not tell a position of this turn from one of a later turn)."""
        return continues_turn(self.key, game)


class SearchedContext:
    """A turn's :class:`LearnedContext` whose circle and cross values come from a :class:`ReplySearch`.

    The reply values are kept in ``cache`` (default: the context's own, shared by every decision
    made with it).
    """

    def __init__(
        self, ctx: LearnedContext, game: Game, search: ReplySearch, cache: dict[object, Any] | None = None
    ) -> None:
        self._ctx, self._game, self._search = ctx, game, search
        self._cache = ctx.cache if cache is None else cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def evaluate_circles(self, sets: np.ndarray) -> np.ndarray:
        sets = np.asarray(sets).ravel()
        keys: list[tuple[int, int | None]] = [(int(s), None) for s in sets]
        return self._rerank(keys, self._ctx.evaluate_circles(sets))

    def evaluate_crosses(self, rows: list[int]) -> np.ndarray:
        keys: list[tuple[int, int | None]] = [(0, int(r)) for r in rows]
        return self._rerank(keys, self._ctx.evaluate_crosses(rows))

    def _rerank(self, keys: list[tuple[int, int | None]], one_ply: np.ndarray) -> np.ndarray:
        ctx = self._ctx
        return self._search.rerank(self._game, ctx.turn, self._cache, keys, np.asarray(one_ply, np.float64))


class ValueBot:
    """Plays the action of highest value under a learned placement-value network (deterministic).

    ``depth`` 2 (two players) values the ``width`` best circle or cross choices by the
    rival's reply (:mod:`~shelfie_env.bots.learned.reply`); depth 1 is the network alone.
    The answer is a function of the position: a context is reused only for the position it was
    built for, and each decision's reply values are computed together, in that decision.
    """

    name = "td"

    def __init__(
        self, net: AfterstateNet, card: dict[str, Any] | None = None, depth: int = 1, width: int = 8
    ) -> None:
        if depth not in (1, 2):
            raise ValueError(f"depth must be 1 (the network alone) or 2 (the rival's reply), got {depth}")
        if depth == 2 and net.players != 2:
            raise ValueError(
                f"depth 2 searches the rival's reply at 2 players; this model plays {net.players}"
            )
        self.net = net
        self.num_players = net.players
        self.card = card or {}
        self.depth = depth
        self.search = ReplySearch(net, width, LearnedContext) if depth == 2 else None
        self._contexts: ContextCache[LearnedContext] = ContextCache()

    def context(self, game: Game) -> LearnedContext:
        """The context of ``game``'s position (one network forward per position: the rerolls of a
        turn share one)."""
        return self._contexts.get(game, self._build_context)

    def _build_context(self, game: Game) -> LearnedContext:
        return LearnedContext(game, self.net.values_of(game), stay_value(self.net, game))

    def act_game(self, game: Game) -> int:
        if game.num_players != self.num_players:
            raise ValueError(
                f"this model plays {self.num_players}-player games, the game has {game.num_players}"
            )
        if game.over:
            raise ValueError("no legal action: the game is over")
        ctx: Any = self.context(game)
        if self.search is not None and game.phase != REROLL:
            ctx = SearchedContext(ctx, game, self.search, cache={})
        return best_action(action_values(game, ctx=ctx))

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))

    def act_many(self, games: Sequence[Game]) -> list[int]:
        """:meth:`act_game` of each game, with one network forward for all their turns."""
        for game in games:
            if game.num_players != self.num_players:
                raise ValueError(
                    f"this model plays {self.num_players}-player games, a game has {game.num_players}"
                )
            if game.over:
                raise ValueError("no legal action: a game is over")
        out = []
        for game, ctx in zip(games, turn_contexts(self.net, games)):
            use: Any = ctx
            if self.search is not None and game.phase != REROLL:
                use = SearchedContext(ctx, game, self.search)
            out.append(best_action(action_values(game, ctx=use)))
        return out

    def act_batch(self, batch: Any, rows: np.ndarray) -> np.ndarray:
        """The actions of games ``rows`` of a :class:`~shelfie_env.batched.BatchedGame` (one forward)."""
        return np.array(self.act_many([batch.to_game(int(i)) for i in rows]), dtype=np.int64)


def turn_contexts(net: AfterstateNet, games: Sequence[Game]) -> list[LearnedContext]:
    """``LearnedContext(g, net.values_of(g))`` of each game, with one network forward for all."""
    return [LearnedContext(g, v, stay_value(net, g)) for g, v in zip(games, net.values_many(list(games)))]


def stay_value(net: AfterstateNet, game: Game) -> float | None:
    """The value of ending the turn as the shelves stand, for a context built after a circle of the
    turn (a position loaded mid-turn, where ending the turn circles nothing beyond the context's
    shelf); ``None`` elsewhere."""
    if game.phase != CIRCLE or game.circles == 0:
        return None
    feats, over, scores = afterstates(game, np.zeros(1, np.int64), np.zeros(0, np.int64))
    return float(final_reward(scores, net.margin_coef)[0] if over[0] else net(feats)[0])


def load_value_bot(
    path: str | Path, num_players: int | None = None, depth: int = 1, width: int = 8
) -> ValueBot:
    """A :class:`ValueBot` from an exported ``.npz`` and its card."""
    card = load_card(path, num_players)
    arrays = read_weights(path)
    try:
        net = AfterstateNet.from_state(arrays, card["num_players"])
    except (KeyError, ValueError) as exc:
        raise CheckpointMismatchError(f"{path}: not an after-state value model ({exc})") from None
    return ValueBot(net, card, depth=depth, width=width)


SHIPPED_TD = {2: "td_2p", 3: "td_3p", 4: "td_4p"}
"""The shipped after-state value models in ``shelfie_env/models``, by number of players."""


def shipped_td_model(num_players: int = 2) -> Path:
    """Path of the shipped ``td`` model for ``num_players``; ``FileNotFoundError`` names those there are."""
    return shipped_file("td", SHIPPED_TD, num_players, "shelfie train-td --players N")


class ShippedValueBot:
    """``make("td")`` with no model named: the shipped model of whatever table it is seated at."""

    name = "td"

    def __init__(self, depth: int = 1, width: int = 8) -> None:
        self._by_players: dict[int, ValueBot] = {}
        self.depth, self.width = depth, width

    def model_for(self, num_players: int) -> ValueBot:
        """The shipped model's bot for ``num_players`` (``FileNotFoundError`` names the sizes that have one)."""
        bot = self._by_players.get(num_players)
        if bot is None:
            path = shipped_td_model(num_players)
            bot = load_value_bot(path, num_players, depth=self.depth, width=self.width)
            self._by_players[num_players] = bot
        return bot

    def act_game(self, game: Game) -> int:
        return self.model_for(game.num_players).act_game(game)

    def act(self, state: dict[str, Any]) -> int:
        return self.act_game(Game.from_dict(state))

    def act_batch(self, batch: Any, rows: np.ndarray) -> np.ndarray:
        return self.model_for(batch.num_players).act_batch(batch, rows)


def make_td(
    path: str | Path | None = None, num_players: int | None = None, depth: int = 1, width: int = 8
) -> ValueBot | ShippedValueBot:
    """``bots.make("td", ...)``: a model file, the shipped model for ``num_players``, or (neither
    given) the shipped model of each table's size.

    ``depth=2`` (two players) values the ``width`` best circle or cross choices by the rival's
    reply (:mod:`~shelfie_env.bots.learned.reply`).
    """
    if depth not in (1, 2):
        raise ValueError(f"td: depth must be 1 (the network alone) or 2 (the rival's reply), got {depth}")
    if width < 1:
        raise ValueError(f"td: width must be at least 1, got {width}")
    if path is None:
        if num_players is None:
            return ShippedValueBot(depth, width)
        path = shipped_td_model(num_players)
    return load_value_bot(path, num_players, depth=depth, width=width)


make_td.table_sizes = lambda: shipped_sizes(SHIPPED_TD)  # type: ignore[attr-defined]
