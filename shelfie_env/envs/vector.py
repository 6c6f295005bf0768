"""Gymnasium vector envs over the batched engine: ``SoloVectorEnv`` and ``VersusVectorEnv``.

``N`` games are stepped by one call (see :class:`shelfie_env.batched.BatchedGame`);
observations, masks, rewards and resets are computed for all games at once.

* **Solo**: one player; the reward of a step is the change of the player's
  score (the scoring rule applied to the shelf), so an episode's return is the
  final score.
* **Versus**: the learner sits in seat ``seat`` (``None``: drawn per episode)
  against ``num_players - 1`` opponent bots (the k-th in the k-th other seat,
  as in ``shelfie/Versus-v0``); its reward is 0 until the game
  ends, then its final reward under ``reward_mode`` (``"rank"``, ``"score"``,
  ``"margin"``, as in :mod:`shelfie_env.shelfie_v0`), plus ``score_reward`` per
  point its own score gains at every step. Opponents play inside
  ``step``/``reset`` until the learner is on turn. ``"random"`` and
  ``"greedy"`` opponents (the built-in bots) play inside one compiled call for
  all games (random ones draw from per-game streams; greedy is the compiled
  copy in :mod:`shelfie_env.bots.greedy.batched`, move for move the same); any other
  bot (a name for :func:`shelfie_env.bots.make` or a bot object) is asked game
  by game through :func:`shelfie_env.bots.act_on_game`, unless it has
  ``act_batch(batch, rows) -> actions``: then it is asked once for every game
  where it is on turn (``batch`` is the :class:`~shelfie_env.batched.BatchedGame`,
  ``rows`` the game indices; e.g. a neural policy evaluated on a batch).
  An opponent may also be a *pool*: an object with ``draw() -> bot``, asked
  for a bot again at the start of every game (self-play opponent pools).

Auto-reset follows Gymnasium 1.x ``AutoresetMode``: ``NEXT_STEP`` (default:
after a game ends, the next ``step`` ignores that game's action and returns the
first observation of a new game with reward 0) or ``SAME_STEP`` (the new game
starts in the step that ended the old one; ``infos["final_obs"]`` and
``infos["final_info"]`` hold the last observation and info). At the end of an
episode ``infos["score"]`` (masked by ``infos["_score"]``) holds the learner's
final score, ``infos["scores"]`` every seat's and ``infos["seat"]`` the learner's
seat. ``action_masks()`` returns the
``(N, 120)`` bool legal mask; a game waiting for its NEXT_STEP reset shows only
action 0 as legal (its action is ignored). ``obs="features"`` returns the
:mod:`~shelfie_env.observation.features` observation (written by the compiled twin,
equal to the scalar encoder's values); ``reroll="keep"`` reads reroll ids as sets of
faces kept (:mod:`~shelfie_env.game.reroll_keep`), masks included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from shelfie_env.batched import BatchedGame, seed_streams
from shelfie_env.batched.engine import GAME_STATE_KEYS, require_keys, state_array
from shelfie_env.bots import Bot, act_on_game, make
from shelfie_env.bots.greedy.batched import GREEDY, OTHER, RANDOM, BatchedGreedy, play_compiled_bots
from shelfie_env.bots.greedy.scalar import GreedyBot
from shelfie_env.bots.random_bot import RandomBot
from shelfie_env.envs.common import (
    REWARD_MODES,
    action_array,
    check_num_players,
    check_reward_mode,
    check_score_reward,
    observation_box,
    score_bound,
)
from shelfie_env.game.actions import NUM_ACTIONS
from shelfie_env.game.errors import IllegalActionError
from shelfie_env.game.reroll_keep import check_reroll_mode, reroll_mask, spec_actions
from shelfie_env.observation.features import check_obs_mode


class BatchedSeats:
    """Engine-level core shared by the Gymnasium and SB3 vector envs.

    Holds the batched games, the learner's seat per game and the opponents;
    ``step`` applies the learner's actions, lets the opponents move and
    returns the rewards and which games ended (without resetting them).
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 1,
        seat: int | None = None,
        opponents: str | Bot | Sequence[str | Bot] = "random",
        reward_mode: str = "rank",
        points: Sequence[Sequence[int]] | None = None,
        seed: int | None = None,
        obs: str = "default",
        reroll: str = "ids",
        score_reward: float = 0.0,
    ) -> None:
        self.obs = check_obs_mode(obs)
        self.reroll = check_reroll_mode(reroll)
        self.score_reward = check_score_reward(score_reward)
        if self.score_reward and num_players == 1:
            raise ValueError(
                "score_reward: a solo game's reward is already its score change; use it with rivals"
            )
        self.batch = BatchedGame(num_envs, num_players, points, seed)
        self.num_envs = self.batch.num_envs
        self.num_players = n = self.batch.num_players
        self.reward_mode = check_reward_mode(reward_mode) if n > 1 else reward_mode
        if seat is None:
            self.fixed_seat: int | None = None
        elif isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < n:
            self.fixed_seat = int(seat)
        else:
            raise ValueError(f"seat must be None (random) or an integer 0..{n - 1}, got {seat!r}")
        specs = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * max(n - 1, 0)
        if len(specs) != n - 1:
            raise ValueError(f"opponents: need {n - 1} bots for {n} players, got {len(specs)}")
        self.opponents = [make(b) if isinstance(b, str) else b for b in specs]
        for b in self.opponents:
            if _is_pool(b):
                continue
            if not callable(getattr(b, "act", None)) and not callable(getattr(b, "act_game", None)):
                raise ValueError(f"opponents: {b!r} has no act(state) method (nor draw() for a pool)")
        # Per game and seat: the bot playing it (None for the learner) and its compiled kind.
        self._seat_bot = np.full((self.num_envs, n), None, dtype=object)
        self._kinds = np.full((self.num_envs, n), OTHER, dtype=np.int64)
        self._greedy = BatchedGreedy(self.batch.table, n)
        self.learner = np.full(self.num_envs, self.fixed_seat or 0, dtype=np.int64)
        self._seat_rng = np.random.default_rng(seed)
        self.bot_rng = seed_streams(None if seed is None else seed + 1, self.num_envs)
        self.ep_return = np.zeros(self.num_envs, dtype=np.float64)
        self.ep_length = np.zeros(self.num_envs, dtype=np.int64)
        self.reset_games(None)

    def seed(self, seed: int | None) -> None:
        """Re-seed the dice, the random opponents and the learner-seat draw."""
        self.batch.seed(seed)
        self.bot_rng[:] = seed_streams(None if seed is None else seed + 1, self.num_envs)
        self._seat_rng = np.random.default_rng(seed)

    # ------------------------------------------------------------- games
    def reset_games(self, which: np.ndarray | None) -> None:
        """Start new games (all, or where ``which``), the opponents moving until the learner is on turn."""
        self.batch.reset(which)
        sel = np.ones(self.num_envs, dtype=np.bool_) if which is None else which
        if self.fixed_seat is None and self.num_players > 1:
            self.learner[sel] = self._seat_rng.integers(0, self.num_players, size=int(sel.sum()))
        # opponent k (0-based) sits in the k-th seat other than the learner's, in seat order;
        # a pool draws the bot of its seat again for every new game.
        if self.num_players > 1:
            for i in np.flatnonzero(sel):
                me = self.learner[i]
                for seat in range(self.num_players):
                    if seat == me:
                        self._seat_bot[i, seat] = None
                        self._kinds[i, seat] = OTHER
                        continue
                    spec = self.opponents[seat - (seat > me)]
                    bot = spec.draw() if _is_pool(spec) else spec
                    self._seat_bot[i, seat] = bot
                    self._kinds[i, seat] = _compiled_kind(bot)
        self.ep_return[sel] = 0.0
        self.ep_length[sel] = 0
        self._play_opponents()

    def _play_opponents(self) -> None:
        if self.num_players == 1:
            return
        b = self.batch
        actions = np.zeros(self.num_envs, dtype=np.int64)
        while True:
            play_compiled_bots(b, self.learner, self._kinds, self.bot_rng, self._greedy)
            need = np.flatnonzero(~b.done & (b.current != self.learner))
            if need.size == 0:
                return
            on_turn = self._seat_bot[need, b.current[need]]
            actions[:] = 0
            groups: dict[int, tuple[Any, list[int]]] = {}
            for i, bot in zip(need.tolist(), on_turn):
                groups.setdefault(id(bot), (bot, []))[1].append(i)
            for bot, rows in groups.values():
                if callable(getattr(bot, "act_batch", None)):
                    idx = np.array(rows, dtype=np.int64)
                    actions[idx] = np.asarray(bot.act_batch(b, idx), dtype=np.int64)
                else:  # per-game fallback for bots without a compiled or batched path
                    for i in rows:
                        actions[i] = act_on_game(bot, b.to_game(i))
            active = np.zeros(self.num_envs, dtype=np.bool_)
            active[need] = True
            b.step(actions, active=active)

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Learner moves (where ``active``), opponents reply; returns ``(rewards, ended)``.

        ``ended`` marks the stepped games that are now over.
        """
        b = self.batch
        rows = np.arange(self.num_envs)
        before = b.scores[rows, self.learner].astype(np.float64)
        b.step(self._spec(actions, active), active)
        self._play_opponents()
        ended = b.done if active is None else b.done & active
        if self.num_players == 1:
            rewards = b.scores[:, 0] - before
        else:
            rewards = self.score_reward * (b.scores[rows, self.learner] - before)
            if ended.any():
                rewards[ended] += self.final_rewards(ended)
        if active is not None:
            rewards = np.where(active, rewards, 0.0)
            self.ep_length += active
        else:
            self.ep_length += 1
        self.ep_return += rewards
        return rewards.astype(np.float64), ended

    def legal_masks(self) -> np.ndarray:
        """``(N, 120)`` legal masks of the learner's decision in the env's reroll encoding (a copy)."""
        mask = self.batch.legal_mask()
        return mask.copy() if self.reroll == "ids" else reroll_mask(self.reroll, mask, self.batch.dice)

    def _spec(self, actions: np.ndarray, active: np.ndarray | None) -> np.ndarray:
        """SPEC ids of the learner's ``actions`` (reroll ids translated; an illegal one names its game)."""
        if self.reroll == "ids":
            return actions
        spec_mask = self.batch.legal_mask()
        reroll = spec_mask[:, 1:64].any(axis=1) & (actions >= 1) & (actions < 64)
        if active is not None:
            reroll &= active
        legal = reroll_mask(self.reroll, spec_mask, self.batch.dice)
        bad = np.flatnonzero(reroll & ~legal[np.arange(self.num_envs), np.clip(actions, 0, 119)].astype(bool))
        if bad.size:
            a = int(actions[bad[0]])
            raise IllegalActionError(
                a,
                f"in game {bad[0]}: with reroll={self.reroll!r} id {a} rerolls no die here (0 stops rolling)",
            )
        return np.where(reroll, spec_actions(self.reroll, actions, self.batch.dice), actions)

    def final_rewards(self, which: np.ndarray | None = None) -> np.ndarray:
        """The learner's end-of-game reward in the games ``which`` (default all), as if they ended now."""
        scores = self.batch.scores.astype(np.float64)
        learner = self.learner
        if which is not None:
            scores, learner = scores[which], learner[which]
        rows = np.arange(len(scores))
        own = scores[rows, learner]
        if self.reward_mode == "score":
            return own
        others = scores.copy()
        others[rows, learner] = np.nan
        if self.reward_mode == "margin":
            return own - np.nanmax(others, axis=1)
        lower = np.sum(others < own[:, None], axis=1)
        higher = np.sum(others > own[:, None], axis=1)
        return (lower - higher) / (self.num_players - 1)

    def observe(self) -> np.ndarray:
        """``(N, obs_size)`` observations (mode ``obs``) from each game's learner seat."""
        return self.batch.observe(self.learner, obs=self.obs)

    def learner_scores(self) -> np.ndarray:
        return self.batch.scores[np.arange(self.num_envs), self.learner].copy()

    # ------------------------------------------------------- checkpoints
    def state(self, encode_bot: Callable[[Any], int] | None = None) -> dict[str, Any]:
        """Everything random or in flight, as copies: a checkpoint's part of these games.

        The games (:meth:`BatchedGame.state`: ``num_players``, ``S``, ``M``, ``dice``), the
        opponents' ``bot_rng`` streams, the ``learner`` seats and the ``seat_rng`` state that
        draws them, ``seat_bots`` (``encode_bot(bot)`` per game and seat: -1 the learner's seat),
        their compiled ``kinds`` and the episodes' ``ep_return`` / ``ep_length``. By default a
        bot's code is its index in ``opponents``; opponents that are pools need ``encode_bot``
        (and :meth:`load_state` the matching ``decode_bot``).
        """
        encode = self._encode_bot if encode_bot is None else encode_bot
        seat_bots = np.array(
            [[-1 if bot is None else encode(bot) for bot in row] for row in self._seat_bot], dtype=np.int64
        ).reshape(self.num_envs, self.num_players)
        return {
            **self.batch.state(),
            "bot_rng": self.bot_rng.copy(),
            "learner": self.learner.copy(),
            "seat_rng": self._seat_rng.bit_generator.state,
            "seat_bots": seat_bots,
            "kinds": self._kinds.copy(),
            "ep_return": self.ep_return.copy(),
            "ep_length": self.ep_length.copy(),
        }

    def load_state(self, state: Mapping[str, Any], decode_bot: Callable[[int], Any] | None = None) -> None:
        """Put back a :meth:`state` dict (extra keys are ignored); ``decode_bot`` inverts its ``encode_bot``.

        Everything is checked before anything is written: a bad state raises ``ValueError``
        naming the key at fault (a missing key, another number of games or players, another
        shape or dtype, a learner seat or bot code that does not fit, the games' own checks of
        :meth:`BatchedGame.load_state`) and leaves these games as they were.
        """
        require_keys(state, SEATS_STATE_KEYS)
        n, players = self.num_envs, self.num_players
        bot_rng = state_array(state, "bot_rng", (n,), "a uint64")
        if bot_rng.dtype != np.uint64:
            raise ValueError(f"bot_rng: expected uint64 stream states, got {bot_rng.dtype}")
        learner = _int_array(state, "learner", (n,))
        codes = _seat_array(state, "seat_bots", n, players)
        kinds = _seat_array(state, "kinds", n, players)
        if learner.min() < 0 or learner.max() >= players:
            raise ValueError(f"learner: seats must be 0..{players - 1}")
        if self.fixed_seat is not None and (learner != self.fixed_seat).any():
            raise ValueError(f"learner: these games seat the learner in seat {self.fixed_seat}")
        seat_rng = np.random.Generator(type(self._seat_rng.bit_generator)())
        try:
            seat_rng.bit_generator.state = state["seat_rng"]
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(
                f"seat_rng: not a {type(seat_rng.bit_generator).__name__} state ({exc})"
            ) from None
        mine = np.arange(players)[None, :] == learner[:, None]
        if (codes[mine] != -1).any() or (codes[~mine] < 0).any():
            raise ValueError(
                "seat_bots: the code -1 (the learner) must be in the learner's seat, and only there"
            )
        bots = self._decode_seats(codes, self._decode_bot if decode_bot is None else decode_bot)
        expected = np.array([[OTHER if b is None else _compiled_kind(b) for b in row] for row in bots])
        if not np.array_equal(kinds, expected.reshape(n, players)):
            raise ValueError("kinds: not the compiled kinds of the seat bots")
        ep_return = state_array(state, "ep_return", (n,), "a float")
        if not np.issubdtype(ep_return.dtype, np.floating):
            raise ValueError(f"ep_return: expected floats, got {ep_return.dtype}")
        ep_length = _int_array(state, "ep_length", (n,))
        self.batch.load_state(state)  # checks the games, then writes them (or raises, writing nothing)
        self.bot_rng[:], self.learner[:] = bot_rng, learner
        self._seat_rng = seat_rng
        self._seat_bot[:] = bots
        self._kinds[:] = kinds
        self.ep_return[:], self.ep_length[:] = ep_return, ep_length

    def _encode_bot(self, bot: Any) -> int:
        """A seat bot's index in ``opponents`` (``ValueError`` for a bot a pool drew)."""
        for k, spec in enumerate(self.opponents):
            if spec is bot and not _is_pool(spec):
                return k
        raise ValueError(f"seat_bots: {bot!r} is not one of the opponents (a pool's bot needs encode_bot)")

    def _decode_bot(self, code: int) -> Any:
        if not 0 <= code < len(self.opponents) or _is_pool(self.opponents[code]):
            raise ValueError(f"no opponent of code {code} (a pool's bots need decode_bot)")
        return self.opponents[code]

    def _decode_seats(self, codes: np.ndarray, decode: Callable[[int], Any]) -> np.ndarray:
        """The ``(N, n)`` object array of seat bots of ``codes`` (-1: the learner, None)."""
        bots = np.full(codes.shape, None, dtype=object)
        for (i, seat), code in np.ndenumerate(codes):
            if code < 0:
                continue
            try:
                bot = decode(int(code))
            except (IndexError, KeyError, TypeError, ValueError) as exc:
                raise ValueError(
                    f"seat_bots: code {code} (game {i}, seat {seat}) names no bot ({exc})"
                ) from None
            if bot is None:
                raise ValueError(f"seat_bots: code {code} (game {i}, seat {seat}) names no bot")
            bots[i, seat] = bot
        return bots


SEATS_STATE_KEYS = (
    *GAME_STATE_KEYS,
    "bot_rng",
    "learner",
    "seat_rng",
    "seat_bots",
    "kinds",
    "ep_return",
    "ep_length",
)
"""Keys of :meth:`BatchedSeats.state`."""


def _int_array(state: Mapping[str, Any], key: str, shape: tuple[int, ...]) -> np.ndarray:
    """``state[key]`` as an int64 array of ``shape`` (``ValueError`` naming the key)."""
    a = state_array(state, key, shape, "an integer")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{key}: expected integers, got {a.dtype}")
    return a.astype(np.int64)


def _seat_array(state: Mapping[str, Any], key: str, games: int, players: int) -> np.ndarray:
    """``state[key]`` as an ``(games, players)`` int64 array, one column per seat."""
    a = np.asarray(state[key])
    if a.ndim == 2 and a.shape[0] == games and a.shape[1] != players:
        raise ValueError(f"{key}: the state holds games of {a.shape[1]} players, these games {players}")
    return _int_array(state, key, (games, players))


def _is_pool(spec: Any) -> bool:
    """An opponent pool: draws a bot per game (``draw()``) instead of playing itself."""
    return callable(getattr(spec, "draw", None)) and not callable(getattr(spec, "act", None))


def _compiled_kind(bot: Bot) -> int:
    """RANDOM / GREEDY for the built-in bots that have a compiled batched version, else OTHER."""
    if type(bot) is RandomBot:
        return RANDOM
    if type(bot) is GreedyBot:
        return GREEDY
    return OTHER


class _ShelfieVectorEnv(VectorEnv):
    """Gymnasium ``VectorEnv`` over :class:`BatchedSeats` (see the module docstring)."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        num_players: int,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **core_kwargs: Any,
    ) -> None:
        mode = AutoresetMode(autoreset_mode) if isinstance(autoreset_mode, str) else autoreset_mode
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED):
            raise ValueError(f"autoreset_mode must be an AutoresetMode, got {autoreset_mode!r}")
        self.core = BatchedSeats(num_envs, num_players, **core_kwargs)
        self.num_envs = self.core.num_envs
        self.autoreset_mode = mode
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        table = self.core.batch.table
        self.single_observation_space = observation_box(
            self.core.num_players, score_bound(table), self.core.obs, table
        )
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self._autoreset = np.zeros(self.num_envs, dtype=np.bool_)
        self._waiting_mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
        self._waiting_mask[0] = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every game, or those in ``options["reset_mask"]`` (a bool array of shape (N,)).

        ``seed`` (one int) seeds the dice streams, the random opponents and the seat draw of all games.
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"seed must be one integer for the whole batch, got {seed!r}")
        if seed is not None:
            self.core.seed(seed)
        which = None
        if options and "reset_mask" in options:
            which = np.asarray(options["reset_mask"])
            if which.shape != (self.num_envs,) or which.dtype != np.bool_:
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},)")
        self.core.reset_games(which)
        if which is None:
            self._autoreset[:] = False
        else:
            self._autoreset &= ~which
        return self.core.observe(), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        acts = action_array(actions, self.num_envs)
        core = self.core
        if self.autoreset_mode == AutoresetMode.DISABLED and (core.batch.done).any():
            raise RuntimeError(
                "autoreset_mode=DISABLED: reset finished games with options={'reset_mask': ...}"
            )
        pending = self._autoreset.copy()
        live = ~pending
        rewards, ended = core.step(np.where(live, acts, 0).astype(np.int64), live if pending.any() else None)
        infos: dict[str, Any] = {}
        if ended.any():
            infos = self._final_infos(ended)
        if pending.any():
            core.reset_games(pending)
        terminated = ended.copy()
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and ended.any():
            final_obs = core.observe()
            core.reset_games(ended)
            obs = core.observe()
            infos["final_obs"] = np.where(ended[:, None], final_obs, 0.0).astype(np.float32)
            infos["_final_obs"] = ended.copy()
            infos["final_info"] = {
                k: v
                for k, v in infos.items()
                if k in ("score", "_score", "scores", "_scores", "seat", "_seat")
            }
            infos["_final_info"] = ended.copy()
        else:
            obs = core.observe()
            if self.autoreset_mode == AutoresetMode.NEXT_STEP:
                self._autoreset = ended
        return obs, rewards.astype(np.float64), terminated, truncated, infos

    def _final_infos(self, ended: np.ndarray) -> dict[str, Any]:
        scores = self.core.batch.scores
        return {
            "score": np.where(ended, self.core.learner_scores(), 0),
            "_score": ended.copy(),
            "scores": np.where(ended[:, None], scores, 0),
            "_scores": ended.copy(),
            "seat": np.where(ended, self.core.learner, 0),
            "_seat": ended.copy(),
        }

    def action_masks(self) -> np.ndarray:
        """``(N, 120)`` bool legal masks of the learner's next decision."""
        mask = self.core.legal_masks()
        if self._autoreset.any():
            mask[self._autoreset] = self._waiting_mask
        return mask

    def close_extras(self, **kwargs: Any) -> None:
        pass


def _no_render(render_mode: str | None) -> None:
    """The batched envs draw nothing (``gymnasium.make_vec`` may pass ``render_mode``)."""
    if render_mode is not None:
        raise ValueError(
            f"render_mode={render_mode!r}: the batched vector envs do not render; use "
            "gymnasium.make_vec(..., vectorization_mode='sync') to render scalar copies"
        )


class SoloVectorEnv(_ShelfieVectorEnv):
    """``num_envs`` Solo games (reward: change of the score; return: the final score)."""

    def __init__(
        self,
        num_envs: int = 64,
        points: Sequence[Sequence[int]] | None = None,
        seed: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        obs: str = "default",
        reroll: str = "ids",
        score_reward: float = 0.0,
    ) -> None:
        _no_render(render_mode)
        super().__init__(
            num_envs,
            1,
            autoreset_mode,
            seat=0,
            opponents=(),
            points=points,
            seed=seed,
            obs=obs,
            reroll=reroll,
        )


class VersusVectorEnv(_ShelfieVectorEnv):
    """``num_envs`` games of the learner against ``num_players - 1`` opponent bots."""

    def __init__(
        self,
        num_envs: int = 64,
        num_players: int = 2,
        seat: int | None = None,
        opponents: str | Bot | Sequence[str | Bot] = "random",
        reward_mode: str = "rank",
        points: Sequence[Sequence[int]] | None = None,
        seed: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        obs: str = "default",
        reroll: str = "ids",
        score_reward: float = 0.0,
    ) -> None:
        _no_render(render_mode)
        super().__init__(
            num_envs,
            check_num_players(num_players, low=2),
            autoreset_mode,
            seat=seat,
            opponents=opponents,
            reward_mode=reward_mode,
            points=points,
            seed=seed,
            obs=obs,
            reroll=reroll,
            score_reward=score_reward,
        )


__all__ = ["REWARD_MODES", "BatchedSeats", "SoloVectorEnv", "VersusVectorEnv"]
