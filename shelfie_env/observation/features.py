"""The ``features`` observation: the default vector plus what the current position offers.

``obs="features"`` (an option of every env of the package) appends a block to the
default vector (:mod:`.vector`) that spells out what a learner would otherwise have to
work out from the shelf bits and the dice: which circles the unspent dice allow now,
what each would score, how far the dice are from each cell, and which lines each player
is one circle from completing. Every entry describes the current position only: nothing
looks ahead over dice outcomes and nothing is computed by a bot.

Block layout (``float32``; ``n`` = number of players; "own" = the observer's shelf;
cell index ``5*row + col``; circle index ``2*cell + joker``, the order of action ids 64..113)::

    offset   size  content
    0        50    circle_now: 1 where the unspent dice can circle that cell that way on the
                   own shelf (the legality of circle id 64 + index in a circle phase)
    50       50    circle_gain: the own score a circle_now circle adds, / GAIN_SCALE
    100      25    dice_missing: for a free own cell, the fewest more dice it needs, given the
                   unspent dice (a joker counts for one, as the rules allow), / 5; 1 for a
                   circled or crossed cell
    125      10n   near_lines: for each relative seat, rows 0..4 then columns 0..4: 1 where the
                   line has four circles and its fifth cell free (one circle completes it)
    total    125 + 10n

The full vector is ``encode(game, observer)`` followed by this block
(:func:`encode_features`); the batched engine writes the same values
(``BatchedGame.observe(obs="features")``).
"""

from __future__ import annotations

import numpy as np

from shelfie_env.game.engine import Game
from shelfie_env.game.scoring import COL_MASKS, FULL, ROW_MASKS, ScoreTable
from shelfie_env.observation.vector import ObservationEncoder, encode, observation_size

OBS_MODES = ("default", "features")
"""``default``: the SPEC observation vector; ``features``: that vector and this module's block."""

GAIN_SCALE = 64.0
JOKER = 5
LINE_MASKS = ROW_MASKS + COL_MASKS


def check_obs_mode(obs: object) -> str:
    """``obs`` if it names an observation mode, else ``ValueError`` listing them."""
    if obs not in OBS_MODES:
        raise ValueError(f"obs must be one of {', '.join(map(repr, OBS_MODES))}, got {obs!r}")
    return str(obs)


def feature_size(num_players: int) -> int:
    """Length of the features block for ``num_players`` players."""
    return 125 + 10 * num_players


def obs_size(num_players: int, obs: str = "default") -> int:
    """Length of the whole observation vector in mode ``obs``."""
    base = observation_size(num_players)
    return base + feature_size(num_players) if check_obs_mode(obs) == "features" else base


def gain_bound(table: ScoreTable) -> float:
    """Upper bound of the ``circle_gain`` entries for ``table`` (at most 1.0 for the default table)."""
    points = table.points
    best_row = max(sum(row) for row in points)
    best_col = max(sum(points[r][c] for r in range(5)) for c in range(5))
    return max(1.0, (best_row + best_col) / GAIN_SCALE)


def features(game: Game, observer: int) -> np.ndarray:
    """The features block of ``game`` seen by seat ``observer`` (a new float32 array)."""
    n = game.num_players
    out = np.zeros(feature_size(n), dtype=np.float32)
    circled = game.circled[observer]
    free = FULL & ~(circled | game.crossed[observer])
    counts = game.counts
    jokers = counts[JOKER]
    score = game.table.score
    base = score(circled)
    for cell in range(25):
        r, c = divmod(cell, 5)
        if not free >> cell & 1:
            out[100 + cell] = 1.0
            continue
        k = counts[r]
        if jokers == 6:
            ways = (False, True)
            missing = 0
        else:
            ways = (k >= c + 1, jokers > 0 and c >= 1 and k >= c)
            missing = c + 1 - k
            if jokers > 0 and c >= 1:
                missing = min(missing, c - k)
        out[100 + cell] = max(missing, 0) / 5.0
        gain = (score(circled | 1 << cell) - base) / GAIN_SCALE
        for j, ok in enumerate(ways):
            if ok:
                out[2 * cell + j] = 1.0
                out[50 + 2 * cell + j] = gain
    for k in range(n):
        s = (observer + k) % n
        mine, crossed = game.circled[s], game.crossed[s]
        for line, mask in enumerate(LINE_MASKS):
            rest = mask & ~mine
            if rest and rest & (rest - 1) == 0 and not rest & crossed:
                out[125 + 10 * k + line] = 1.0
    return out


def encode_features(game: Game, observer: int) -> np.ndarray:
    """The ``features`` observation: :func:`~.vector.encode` followed by :func:`features`."""
    return np.concatenate((encode(game, observer), features(game, observer)))


class FeaturesEncoder(ObservationEncoder):
    """:class:`~.vector.ObservationEncoder` whose ``encode`` returns the ``features`` observation."""

    def encode(self, game: Game, observer: int) -> np.ndarray:
        return np.concatenate((super().encode(game, observer), features(game, observer)))


def make_encoder(num_players: int, obs: str = "default") -> ObservationEncoder:
    """The encoder an env uses in observation mode ``obs`` (``ValueError`` for an unknown mode)."""
    if check_obs_mode(obs) == "features":
        return FeaturesEncoder(num_players)
    return ObservationEncoder(num_players)


def features_high(num_players: int, table: ScoreTable | None = None) -> np.ndarray:
    """Upper bounds of the features block (1 everywhere but ``circle_gain``, up to :func:`gain_bound`)."""
    high = np.ones(feature_size(num_players), dtype=np.float32)
    if table is not None:
        high[50:100] = gain_bound(table)
    return high
