"""``BatchedGame``: N games of the same player count stepped by one call.

The state of all games lives in arrays with a leading batch axis (see
:mod:`._kernels` for the column layout); each call runs one compiled loop over
the games, so there is no Python-level loop in ``step``, ``reset``, the legal
masks or the observations. The rules, action ids and observation layout are
those of :class:`shelfie_env.game.engine.Game` and :func:`shelfie_env.observation.vector.encode`
(and :func:`shelfie_env.observation.features.features` for ``obs="features"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from shelfie_env.batched import _kernels as K
from shelfie_env.game.actions import CIRCLE_BASE, NUM_ACTIONS, NUM_DICE, action_name
from shelfie_env.game.engine import MAX_CIRCLES, MAX_PLAYERS, PHASES, ROLLS_PER_TURN, Game
from shelfie_env.game.errors import IllegalActionError
from shelfie_env.game.scoring import DEFAULT_POINTS, FULL, ScoreTable
from shelfie_env.game.tables import MULTISETS, REROLL_IDS
from shelfie_env.observation.features import obs_size
from shelfie_env.observation.vector import observation_size


def _build_tables() -> tuple[np.ndarray, np.ndarray]:
    """The multiset index of each dice code ``sum(face_j * 6**j)``, and the legal reroll-phase ids
    (those below ``CIRCLE_BASE``) of each multiset."""
    code2ms = np.full(6**NUM_DICE, -1, dtype=np.int16)
    reroll_tab = np.zeros((len(MULTISETS), CIRCLE_BASE), dtype=np.bool_)
    for idx, dice in enumerate(MULTISETS):
        code2ms[sum(f * 6**j for j, f in enumerate(dice))] = idx
        reroll_tab[idx, list(REROLL_IDS[dice])] = True
    return code2ms, reroll_tab


CODE2MS, REROLL_TAB = _build_tables()


class _NoDice:
    """Dice source of a scalar copy that must not roll (reading it only)."""

    def integers(self, low: int, high: int, size: int) -> Any:
        raise RuntimeError("this Game is a read-only copy of a batched game; pass rng= to to_game to play it")


NO_DICE = _NoDice()


def seed_streams(seed: int | np.random.SeedSequence | None, n: int) -> np.ndarray:
    """``n`` independent 64-bit stream states derived from ``seed``."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return ss.generate_state(n, dtype=np.uint64)


def random_legal_actions(masks: np.ndarray, streams: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A uniformly random legal action per row of an ``(N, 120)`` bool mask (-1 for an empty row).

    ``streams`` is an ``(N,)`` uint64 array of stream states (see :func:`seed_streams`), advanced in place.
    """
    m = np.ascontiguousarray(masks, dtype=np.bool_)
    if (
        m.ndim != 2
        or m.shape[1] != NUM_ACTIONS
        or streams.shape != (m.shape[0],)
        or streams.dtype != np.uint64
    ):
        raise ValueError("masks must be (N, 120) and streams a uint64 array of shape (N,)")
    if out is None:
        out = np.empty(m.shape[0], dtype=np.int64)
    K.random_actions(m, streams, out)
    return out


class BatchedGame:
    """``num_envs`` independent games of ``num_players`` players.

    Dice come from one splitmix64 stream per game (seeded by ``seed``), or
    from ``faces`` given to :meth:`reset` / :meth:`step` (an ``(N, 6)`` int
    array: a reroll of ``k`` dice takes ``faces[i, :k]``, a new turn takes
    ``faces[i, :6]``). Games that are over stay over until reset.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        points: Sequence[Sequence[int]] | None = None,
        seed: int | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
            raise ValueError(f"num_players must be an integer 1..{MAX_PLAYERS}, got {num_players!r}")
        if not 1 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be 1..{MAX_PLAYERS}, got {num_players}")
        self.num_envs = int(num_envs)
        self.num_players = int(num_players)
        self.table = ScoreTable(DEFAULT_POINTS if points is None else points)
        self.row_score = np.array(self.table.row_score, dtype=np.int32)
        self.col_score = np.array(self.table.col_score, dtype=np.int32)
        self.obs_size = observation_size(self.num_players)
        n = self.num_envs
        self.S = np.zeros((n, K.WIDTH), dtype=np.int32)
        self.M = np.zeros((n, NUM_ACTIONS), dtype=np.bool_)
        self.rng = seed_streams(seed, n)
        self._all = np.ones(n, dtype=np.bool_)
        self._no_faces = np.zeros((1, 6), dtype=np.int64)
        self.reset()

    # ------------------------------------------------------------ dice
    def seed(self, seed: int | None) -> None:
        """Re-seed every game's dice stream."""
        self.rng[:] = seed_streams(seed, self.num_envs)

    def _faces(self, faces: np.ndarray | None) -> tuple[np.ndarray, bool]:
        if faces is None:
            return self._no_faces, False
        f = np.asarray(faces)
        if f.shape != (self.num_envs, 6) or not np.issubdtype(f.dtype, np.integer):
            raise ValueError(
                f"faces must be an integer array of shape ({self.num_envs}, 6), got {f.dtype}{f.shape}"
            )
        if f.min() < 0 or f.max() > 5:
            raise ValueError("faces must be dice faces 0..5")
        return np.ascontiguousarray(f, dtype=np.int64), True

    def _which(self, which: np.ndarray | None) -> np.ndarray:
        if which is None:
            return self._all
        w = np.asarray(which)
        if w.shape != (self.num_envs,) or w.dtype != np.bool_:
            raise ValueError(f"which/active must be a bool array of shape ({self.num_envs},)")
        return np.ascontiguousarray(w)

    # ----------------------------------------------------------- moves
    def reset(self, which: np.ndarray | None = None, faces: np.ndarray | None = None) -> None:
        """Start fresh games (all, or those with ``which[i]``): seat 0's first roll."""
        f, use = self._faces(faces)
        K.reset(self.S, self.M, self._which(which), self.rng, f, use, CODE2MS, REROLL_TAB)

    def step(
        self,
        actions: np.ndarray,
        active: np.ndarray | None = None,
        faces: np.ndarray | None = None,
    ) -> int:
        """Apply ``actions[i]`` in every game (or only where ``active[i]``).

        All actions are checked first: if one is illegal nothing moves and
        :class:`IllegalActionError` names the game. Returns how many of the
        stepped games are now over.
        """
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got {acts.dtype}{acts.shape}"
            )
        acts = np.ascontiguousarray(acts, dtype=np.int64)
        act = self._which(active)
        bad = K.first_illegal(self.M, acts, act)
        if bad >= 0:
            a = int(acts[bad])
            if self.S[bad, K.PHASE] == K.OVER:
                raise IllegalActionError(a, f"game {bad} is over (reset it first)")
            game = self.to_game(bad)
            reason = game.why_illegal(a) if 0 <= a < NUM_ACTIONS else f"action ids are 0..{NUM_ACTIONS - 1}"
            name = action_name(a) if 0 <= a < NUM_ACTIONS else None
            raise IllegalActionError(a, f"in game {bad}: {reason}", name)
        f, use = self._faces(faces)
        return int(
            K.step(
                self.S,
                self.M,
                acts,
                act,
                self.num_players,
                self.rng,
                f,
                use,
                self.row_score,
                self.col_score,
                CODE2MS,
                REROLL_TAB,
            )
        )

    def random_actions(self, rng: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per game (-1 for finished games).

        ``rng`` is an array of stream states (default: the dice streams).
        """
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        K.random_actions(self.M, self.rng if rng is None else rng, out)
        return out

    def play_random_until(self, seats: np.ndarray, bot_rng: np.ndarray) -> None:
        """Random legal moves (from the ``bot_rng`` streams) until ``seats[i]`` is on turn in game ``i``.

        Games that are over are left alone. One compiled call for all games.
        """
        K.play_random(
            self.S,
            self.M,
            np.ascontiguousarray(seats, dtype=np.int64),
            self.num_players,
            bot_rng,
            self.rng,
            self._no_faces,
            False,
            self.row_score,
            self.col_score,
            CODE2MS,
            REROLL_TAB,
        )

    # --------------------------------------------------------- queries
    def legal_mask(self) -> np.ndarray:
        """The ``(N, 120)`` bool legal-action masks (a live view: copy to keep)."""
        return self.M

    def observe(
        self, observers: np.ndarray | int | None = None, out: np.ndarray | None = None, obs: str = "default"
    ) -> np.ndarray:
        """``(N, size)`` float32 observations, game ``i`` seen by seat ``observers[i]``.

        ``None`` means the player on turn of each game. ``obs="features"`` appends the
        features block (:mod:`shelfie_env.observation.features`) to the ``63n+60`` default.
        """
        size = obs_size(self.num_players, obs)
        if observers is None:
            obs_seats = self.S[:, K.CUR]
        elif np.isscalar(observers):
            obs_seats = np.full(self.num_envs, int(observers), dtype=np.int32)
        else:
            obs_seats = np.asarray(observers)
            if obs_seats.shape != (self.num_envs,):
                raise ValueError(f"observers must have shape ({self.num_envs},)")
        obs_seats = np.ascontiguousarray(obs_seats, dtype=np.int64)
        if obs_seats.min() < 0 or obs_seats.max() >= self.num_players:
            raise ValueError(f"observer seats must be 0..{self.num_players - 1}")
        if out is None:
            out = np.empty((self.num_envs, size), dtype=np.float32)
        elif out.shape != (self.num_envs, size) or out.dtype != np.float32:
            raise ValueError(f"out must be a float32 array of shape ({self.num_envs}, {size})")
        if size == self.obs_size:
            K.observe(self.S, obs_seats, self.num_players, out)
        else:
            K.observe(self.S, obs_seats, self.num_players, out[:, : self.obs_size])
            K.observe_features(
                self.S, obs_seats, self.num_players, self.row_score, self.col_score, out, self.obs_size
            )
        return out

    @property
    def circled(self) -> np.ndarray:
        return self.S[:, K.CIRC : K.CIRC + self.num_players]

    @property
    def crossed(self) -> np.ndarray:
        return self.S[:, K.CROSS : K.CROSS + self.num_players]

    @property
    def dice(self) -> np.ndarray:
        return self.S[:, K.DICE : K.DICE + 6]

    @property
    def spent(self) -> np.ndarray:
        return self.S[:, K.SPENT : K.SPENT + 6].astype(np.bool_)

    @property
    def counts(self) -> np.ndarray:
        return self.S[:, K.COUNTS : K.COUNTS + 6]

    @property
    def current(self) -> np.ndarray:
        return self.S[:, K.CUR]

    @property
    def phase(self) -> np.ndarray:
        return self.S[:, K.PHASE]

    @property
    def rolls_left(self) -> np.ndarray:
        return self.S[:, K.ROLLS]

    @property
    def circles(self) -> np.ndarray:
        return self.S[:, K.NCIRC]

    @property
    def end_triggered(self) -> np.ndarray:
        return self.S[:, K.END].astype(np.bool_)

    @property
    def scores(self) -> np.ndarray:
        """``(N, n)`` current scores (a live view)."""
        return self.S[:, K.SCORE : K.SCORE + self.num_players]

    @property
    def done(self) -> np.ndarray:
        return self.S[:, K.PHASE] == K.OVER

    # ------------------------------------------------- scalar round trip
    def to_game(self, i: int, rng: Any = NO_DICE) -> Game:
        """Game ``i`` as a scalar :class:`Game` (dice from ``rng``; by default it cannot roll)."""
        g = Game(self.num_players, self.table, rng)
        row = self.S[i]
        n = self.num_players
        g.circled = [int(v) for v in row[K.CIRC : K.CIRC + n]]
        g.crossed = [int(v) for v in row[K.CROSS : K.CROSS + n]]
        g.current = int(row[K.CUR])
        g.phase = int(row[K.PHASE])
        g.dice = [int(v) for v in row[K.DICE : K.DICE + 6]]
        g.spent = [bool(v) for v in row[K.SPENT : K.SPENT + 6]]
        g.counts = [int(v) for v in row[K.COUNTS : K.COUNTS + 6]]
        g.rolls_left = int(row[K.ROLLS])
        g.circles = int(row[K.NCIRC])
        g.end_triggered = bool(row[K.END])
        g.round = int(row[K.ROUND])
        return g

    def to_dict(self, i: int) -> dict[str, Any]:
        """The state dict of game ``i`` (with "scores", like ``Game.to_dict``)."""
        return self.to_game(i).to_dict()

    def load(self, i: int, state: Game | Mapping[str, Any]) -> None:
        """Put a position (a :class:`Game` or a validated state dict) into game ``i``."""
        g = state if isinstance(state, Game) else Game.from_dict(state)
        if g.num_players != self.num_players:
            raise ValueError(
                f"num_players: the batch has {self.num_players} players, the state {g.num_players}"
            )
        if g.table.points != self.table.points:
            raise ValueError("points: the state's points table differs from the batch's")
        row = self.S[i]
        row[:] = 0
        n = self.num_players
        row[K.CIRC : K.CIRC + n] = g.circled
        row[K.CROSS : K.CROSS + n] = g.crossed
        row[K.CUR] = g.current
        row[K.PHASE] = g.phase
        row[K.DICE : K.DICE + 6] = g.dice
        row[K.SPENT : K.SPENT + 6] = g.spent
        row[K.COUNTS : K.COUNTS + 6] = g.counts
        row[K.ROLLS] = g.rolls_left
        row[K.NCIRC] = g.circles
        row[K.END] = g.end_triggered
        row[K.ROUND] = g.round
        row[K.SCORE : K.SCORE + n] = g.scores()
        K.refresh_masks(self.S[i : i + 1], self.M[i : i + 1], CODE2MS, REROLL_TAB)

    # ------------------------------------------------------- checkpoints
    def state(self) -> dict[str, Any]:
        """Copies of everything that decides how the games go on: a checkpoint's part of this batch.

        ``num_players``, ``S``: the ``(N, WIDTH)`` int32 state rows, ``M``: the ``(N, 120)``
        legal masks, ``dice``: the ``(N,)`` uint64 dice streams. :meth:`load_state` puts them back.
        """
        return {
            "num_players": self.num_players,
            "S": self.S.copy(),
            "M": self.M.copy(),
            "dice": self.rng.copy(),
        }

    def _checked_state(self, state: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The arrays of a :meth:`state` dict, checked against this batch (changes nothing)."""
        require_keys(state, GAME_STATE_KEYS)
        players = state["num_players"]
        if isinstance(players, bool) or not isinstance(players, (int, np.integer)):
            raise ValueError(f"num_players: expected an integer, got {players!r}")
        if players != self.num_players:
            raise ValueError(
                f"num_players: the state holds games of {players} players, this batch {self.num_players}"
            )
        n = self.num_envs
        S = state_array(state, "S", (n, K.WIDTH), "an integer")
        if not np.issubdtype(S.dtype, np.integer):
            raise ValueError(f"S: expected integers, got {S.dtype}")
        if S.min(initial=0) < np.iinfo(np.int32).min or S.max(initial=0) > np.iinfo(np.int32).max:
            raise ValueError("S: values out of the int32 range")
        S = np.ascontiguousarray(S, dtype=np.int32)
        self._check_rows(S)
        M = state_array(state, "M", (n, NUM_ACTIONS), "a bool")
        if M.dtype != np.bool_:
            raise ValueError(f"M: expected bool masks, got {M.dtype}")
        dice = state_array(state, "dice", (n,), "a uint64")
        if dice.dtype != np.uint64:
            raise ValueError(f"dice: expected uint64 stream states, got {dice.dtype}")
        masks = np.zeros_like(self.M)
        K.refresh_masks(S, masks, CODE2MS, REROLL_TAB)
        if not np.array_equal(masks, M):
            bad = int(np.flatnonzero((masks != M).any(axis=1))[0])
            raise ValueError(f"M: the legal masks of game {bad} are not the legal moves of its row in S")
        return {"S": S, "M": M.copy(), "dice": dice.copy()}

    def _check_rows(self, S: np.ndarray) -> None:
        """``ValueError`` unless every row of ``S`` is a game of this batch's players and points."""
        n = self.num_players
        spans = {
            "circled shelves": (K.CIRC, n, 0, FULL),
            "crossed shelves": (K.CROSS, n, 0, FULL),
            "dice": (K.DICE, NUM_DICE, 0, NUM_DICE - 1),
            "spent flags": (K.SPENT, NUM_DICE, 0, 1),
            "face counts": (K.COUNTS, NUM_DICE, 0, NUM_DICE),
            "player on turn": (K.CUR, 1, 0, n - 1),
            "phase": (K.PHASE, 1, K.REROLL, K.OVER),
            "rolls left": (K.ROLLS, 1, 0, ROLLS_PER_TURN),
            "circles this turn": (K.NCIRC, 1, 0, MAX_CIRCLES),
            "end flag": (K.END, 1, 0, 1),
            "round": (K.ROUND, 1, 0, np.iinfo(np.int32).max),
        }
        for what, (col, width, low, high) in spans.items():
            block = S[:, col : col + width]
            if block.size and (block.min() < low or block.max() > high):
                raise ValueError(f"S: {what} out of {low}..{high}")
        for col in (K.CIRC, K.CROSS, K.SCORE):
            if S[:, col + n : col + MAX_PLAYERS].any():
                raise ValueError(f"S: columns of seats {n}.. are in use (games of more than {n} players?)")
        if (S[:, K.COUNTS : K.COUNTS + NUM_DICE].sum(axis=1) > NUM_DICE).any():
            raise ValueError(f"S: face counts of more than {NUM_DICE} dice")
        scores = S.copy()
        K.rescore(scores, n, self.row_score, self.col_score)
        if not np.array_equal(scores[:, K.SCORE : K.SCORE + n], S[:, K.SCORE : K.SCORE + n]):
            raise ValueError(
                "S: scores that are not the circled shelves' scores under this batch's points table"
            )

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Put back a :meth:`state` dict (extra keys are ignored).

        Everything is checked before anything is written: a bad state raises ``ValueError``
        naming the key at fault (a missing key, another number of games, another shape or
        dtype, values no game can hold, seat columns beyond ``num_players`` in use, scores
        of another points table, masks that are not the games' legal moves) and leaves the
        batch as it was.
        """
        checked = self._checked_state(state)
        self.S[:], self.M[:], self.rng[:] = checked["S"], checked["M"], checked["dice"]

    def phase_names(self) -> list[str]:
        return [PHASES[p] for p in self.S[:, K.PHASE]]

    def __repr__(self) -> str:
        return f"BatchedGame(num_envs={self.num_envs}, num_players={self.num_players})"


GAME_STATE_KEYS = ("num_players", "S", "M", "dice")
"""Keys of :meth:`BatchedGame.state`."""


def require_keys(state: Mapping[str, Any], keys: Sequence[str]) -> None:
    """``ValueError`` naming the ``keys`` missing from a checkpoint's ``state`` (or saying it is no mapping)."""
    if not isinstance(state, Mapping):
        raise ValueError(f"state: expected a mapping of the keys {list(keys)}, got {type(state).__name__}")
    missing = [k for k in keys if k not in state]
    if missing:
        raise ValueError(
            f"state: missing key{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}"
        )


def state_array(state: Mapping[str, Any], key: str, shape: tuple[int, ...], kind: str) -> np.ndarray:
    """``state[key]`` as an array of ``shape``, one row per game (else ``ValueError`` naming the key)."""
    try:
        a = np.asarray(state[key])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{key}: not an array ({exc})") from None
    if a.ndim == len(shape) and a.shape[0] != shape[0]:
        raise ValueError(f"{key}: the state holds {a.shape[0]} games, this batch {shape[0]}")
    if a.shape != shape:
        raise ValueError(f"{key}: expected {kind} array of shape {shape}, got shape {a.shape}")
    return a
