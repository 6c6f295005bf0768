"""Rollouts of the after-state policy on the batched engine, and their returns.

``games`` games are played in lockstep to the end on a
:class:`~shelfie_env.batched.BatchedGame`. Each seat is the learner, or (with
probability ``opp_greedy``, never every seat) the compiled ``greedy`` bot. At each
step every game whose learner seat is on turn makes one decision; at the first
decision of a turn all of that turn's after-states are built and valued in one
forward for all such games (:mod:`.torch_net`), and the turn's later
decisions reuse those values. What the update needs is recorded per turn (the
after-state features) and per decision (legal actions, how each action maps to
placements, the action, its log-probability and the critic's value).

A step of :func:`play_rollout` runs four stages: value the turns that start
(:func:`_value_new_turns`), read the decisions (:func:`_decisions`), act
(:func:`_act`) and record (:meth:`_Buffers.record`), then step the games and
reward the seats of the games that ended; :func:`_finish` assembles the
:class:`Rollout`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from shelfie_env.batched import BatchedGame, seed_streams
from shelfie_env.batched import _kernels as K
from shelfie_env.bots.greedy.batched import GREEDY, OTHER, BatchedGreedy, play_compiled_bots
from shelfie_env.bots.learned.afterstate import afterstates_many, final_reward, placements
from shelfie_env.bots.learned.expect_head import (
    DICE_SIZE,
    FINAL_OF_CODE,
    KEEP_OF_CODE,
    NUM_REROLL_IDS,
    NUM_SET_VALUES,
    NUM_SETS,
    kept_counts,
)
from shelfie_env.bots.planner.dice import FACES, KEEP
from shelfie_env.bots.planner.placements import SET_MASKS, SET_SIZES, feasible_matrix
from shelfie_env.game.actions import CIRCLE_BASE, CROSS_BASE, END_TURN, JOKER, NUM_COLS, NUM_DICE
from shelfie_env.game.engine import CIRCLE, MAX_CIRCLES, REROLL, ROLLS_PER_TURN
from shelfie_env.game.engine import CROSS as CROSS_PHASE
from shelfie_env.game.scoring import FULL
from shelfie_env.game.tables import MULTISETS
from shelfie_env.train.ppo_afterstate.torch_net import (
    AfterstatePolicyNet,
    action_values,
    keep_values,
    policy_logits,
    state_values,
    turn_values,
)

NUM_DICE_MULTISETS = len(MULTISETS)
"""462: the multisets of six dice with six faces (the dice a turn ends with, ``V0``'s entries)."""
NUM_KEEPS = len(KEEP)
"""924: the multisets of 0..6 dice a reroll keeps (the keep values' entries)."""
SEED_BOUND = 1 << 62
"""Seeds of a rollout's dice and bot streams are drawn below this."""

_ORDER = np.argsort(SET_MASKS)
_SORTED = SET_MASKS[_ORDER]
_POWERS = (NUM_DICE + 1) ** np.arange(FACES)  # a multiset of counts 0..6 per face as one code
_FACE_ONEHOT = np.eye(FACES, dtype=np.float32)


def set_slot(masks: np.ndarray) -> np.ndarray:
    """Index in ``SET_MASKS`` of each circle-set mask (``ValueError`` for a mask that is not a set)."""
    pos = np.searchsorted(_SORTED, masks)
    pos = np.minimum(pos, len(_SORTED) - 1)
    if not np.array_equal(_SORTED[pos], masks):
        raise ValueError("a mask that is not a circle set of 1..3 cells")
    return _ORDER[pos]


def reroll_keys(dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sorted dice row: the keep index of every reroll id (``(m, NUM_REROLL_IDS)``) and the final
    multiset index."""
    onehot = _FACE_ONEHOT[dice].reshape(len(dice), DICE_SIZE)
    codes = np.rint(kept_counts(onehot)).astype(np.int64) @ _POWERS
    return KEEP_OF_CODE[codes], FINAL_OF_CODE[codes[:, 0]]


def circle_pairs(
    counts: np.ndarray, done: np.ndarray, free: np.ndarray, circles: np.ndarray, legal: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, action, placement)`` triples of circle-phase decisions.

    Row ``i`` has unspent dice ``counts[i]``, cells ``done[i]`` circled earlier in
    the turn, free cells ``free[i]`` and ``circles[i]`` circles made. End turn
    leads to ``done``; a circle to that cell with ``done``, then any set the
    remaining dice can still circle (the planner's ``circle_values``).
    """
    ends = np.flatnonzero(legal[:, END_TURN])
    rows_out = [ends]
    acts_out = [np.full(len(ends), END_TURN)]
    masks_out = [done[ends]]
    ii, kk = np.nonzero(legal[:, CIRCLE_BASE:END_TURN])
    if len(ii):
        cell, joker = kk >> 1, kk & 1
        r, c = cell // NUM_COLS, cell % NUM_COLS
        rest = counts[ii].astype(np.int64)
        six = rest[:, JOKER] == NUM_DICE  # six jokers circle any cell and spend every die
        rest[np.arange(len(ii)), r] -= c + 1 - joker
        rest[:, JOKER] -= joker
        rest[six] = 0
        bit = np.left_shift(1, cell).astype(np.int64)
        base = done[ii] | bit
        room = MAX_CIRCLES - circles[ii] - 1
        ok = feasible_matrix(rest)
        ok &= SET_SIZES[None, :] <= room[:, None]
        ok &= (SET_MASKS[None, :] & ~(free[ii] & ~bit)[:, None]) == 0
        ok &= (rest.sum(1) > 0)[:, None]
        rr, ss = np.nonzero(ok)
        rows_out += [ii, ii[rr]]
        acts_out += [CIRCLE_BASE + kk, CIRCLE_BASE + kk[rr]]
        masks_out += [base, base[rr] | SET_MASKS[ss]]
    rows = np.concatenate(rows_out)
    masks = np.concatenate(masks_out).astype(np.int64)
    return rows, np.concatenate(acts_out).astype(np.int64), set_slot(masks)


def cross_pairs(legal: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, action, placement)`` triples of cross-phase decisions: each row's own cross-out."""
    ii, rr = np.nonzero(legal[:, CROSS_BASE:])
    return ii, CROSS_BASE + rr, NUM_SETS + rr


@dataclass
class Rollout:
    """One iteration's games: per turn the after-states, per decision what the update needs."""

    feats: np.ndarray  # (C, feature_size) after-state features, turn after turn
    over: np.ndarray  # (C,) the placement ends the game (valued exactly)
    exact: np.ndarray  # (C,) its exact reward where ``over``
    cand_slot: np.ndarray  # (C,) placement index (NUM_SET_VALUES) of each after-state
    cand_off: np.ndarray  # (T + 1,) after-states of turn t: cand_off[t]:cand_off[t + 1]
    turn: np.ndarray  # (D,) turn of each decision (decisions in order of play)
    legal: np.ndarray  # (D, 120)
    reroll: np.ndarray  # (D,) a reroll-phase decision
    keep_idx: np.ndarray  # (D, NUM_REROLL_IDS) keep index per reroll id (reroll decisions)
    final_idx: np.ndarray  # (D,) final multiset of the dice now (reroll decisions)
    two_rolls: np.ndarray  # (D,)
    pair_dec: np.ndarray  # (P,) decision of each (action, placement) pair, ascending
    pair_act: np.ndarray
    pair_slot: np.ndarray
    action: np.ndarray  # (D,)
    logp: np.ndarray  # (D,)
    value: np.ndarray  # (D,)
    reward: np.ndarray  # (D,) the seat's final reward on its last decision of a game
    next_dec: np.ndarray  # (D,) the same seat's next decision in the game (-1: none)
    stats: dict[str, float]

    @property
    def decisions(self) -> int:
        return len(self.turn)


def _draw_seats(games: int, players: int, opp_greedy: float, rng: np.random.Generator) -> np.ndarray:
    """``(games, players)`` compiled-bot kinds: ``OTHER`` (the learner) or ``GREEDY``; one learner seat at least."""
    kinds = np.where(rng.random((games, players)) < opp_greedy, GREEDY, OTHER)
    keep = rng.integers(players, size=games)
    kinds[np.arange(games), keep] = OTHER
    return kinds.astype(np.int64)


@dataclass
class _Bots:
    """The compiled greedy seats of a rollout (``kinds``), their tables and streams."""

    kinds: np.ndarray  # (games, players) GREEDY or OTHER (the learner)
    greedy: BatchedGreedy
    streams: np.ndarray  # (games,) bot streams
    nobody: np.ndarray  # (games,) -1: no seat stops the bots, only a learner's turn does

    def play(self, batch: BatchedGame) -> None:
        """Greedy moves until a learner is on turn (or the game is over) in every game."""
        play_compiled_bots(batch, self.nobody, self.kinds, self.streams, self.greedy)


@dataclass
class _Turns:
    """Per game, the learner's turn under way: its values (from its first decision) and where it began."""

    values: torch.Tensor  # (games, NUM_SET_VALUES) placement values
    keeps: tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # V0, keeps with one and with two rolls left
    circled_at_start: np.ndarray  # (games,) the mover's circled cells when the turn began
    index: np.ndarray  # (games,) the turn's index in the rollout (-1: none yet)

    @classmethod
    def empty(cls, games: int) -> _Turns:
        return cls(
            values=torch.zeros((games, NUM_SET_VALUES)),
            keeps=(
                torch.zeros((games, NUM_DICE_MULTISETS)),
                torch.zeros((games, NUM_KEEPS)),
                torch.zeros((games, NUM_KEEPS)),
            ),
            circled_at_start=np.zeros(games, dtype=np.int64),
            index=np.full(games, -1, dtype=np.int64),
        )


@dataclass
class _Decisions:
    """One step's decisions: one per live game (``live``), its learner on turn (``movers``)."""

    live: np.ndarray  # (m,) game of each decision
    movers: np.ndarray  # (m,) seat on turn
    legal: np.ndarray  # (m, 120)
    reroll: np.ndarray  # (m,) a reroll-phase decision
    keep: np.ndarray  # (m, NUM_REROLL_IDS) keep index per reroll id (reroll decisions)
    final: np.ndarray  # (m,) final multiset of the dice now (reroll decisions)
    two_rolls: np.ndarray  # (m,)
    pair_rows: np.ndarray  # (P,) decision of each (action, placement) pair, ascending
    pair_act: np.ndarray  # (P,)
    pair_slot: np.ndarray  # (P,)


_DECISION_FIELDS = ("turn", "legal", "reroll", "keep", "final", "two", "action", "logp", "value")


@dataclass
class _Buffers:
    """What a rollout has recorded so far: per-step arrays, appended in order of play."""

    last: np.ndarray  # (games, players) each seat's latest decision (-1: none yet)
    turn_feats: list[np.ndarray] = field(default_factory=list)
    turn_over: list[np.ndarray] = field(default_factory=list)
    turn_exact: list[np.ndarray] = field(default_factory=list)
    turn_slot: list[np.ndarray] = field(default_factory=list)
    turn_count: list[np.ndarray] = field(default_factory=list)
    decisions: dict[str, list[np.ndarray]] = field(default_factory=lambda: {k: [] for k in _DECISION_FIELDS})
    pair_dec: list[np.ndarray] = field(default_factory=list)
    pair_act: list[np.ndarray] = field(default_factory=list)
    pair_slot: list[np.ndarray] = field(default_factory=list)
    next_dec: list[int] = field(default_factory=list)
    rewards: dict[int, float] = field(default_factory=dict)  # a seat's last decision of a game: its reward
    n_dec: int = 0
    n_turns: int = 0
    forward_s: float = 0.0

    def add_turns(
        self, feats: np.ndarray, over: np.ndarray, exact: np.ndarray, slots: np.ndarray, sizes: np.ndarray
    ) -> None:
        """The after-states of turns that start now (``sizes[t]`` of them for the t-th)."""
        self.turn_feats.append(feats)
        self.turn_over.append(over)
        self.turn_exact.append(exact)
        self.turn_slot.append(slots)
        self.turn_count.append(sizes)
        self.n_turns += len(sizes)

    def record(
        self, dec: _Decisions, turns: _Turns, acts: np.ndarray, logp: np.ndarray, value: np.ndarray
    ) -> None:
        """One step's decisions, each linked to its seat's previous decision in the game."""
        m = len(dec.live)
        row = {
            "turn": turns.index[dec.live].copy(),
            "legal": dec.legal,
            "reroll": dec.reroll,
            "keep": dec.keep,
            "final": dec.final,
            "two": dec.two_rolls,
            "action": acts,
            "logp": logp,
            "value": value,
        }
        for key in _DECISION_FIELDS:
            self.decisions[key].append(row[key])
        self.pair_dec.append(self.n_dec + dec.pair_rows)
        self.pair_act.append(dec.pair_act)
        self.pair_slot.append(dec.pair_slot)
        ids = self.n_dec + np.arange(m)
        prev = self.last[dec.live, dec.movers]
        self.next_dec.extend([-1] * m)
        for d_prev, d in zip(prev[prev >= 0].tolist(), ids[prev >= 0].tolist()):
            self.next_dec[d_prev] = d
        self.last[dec.live, dec.movers] = ids
        self.n_dec += m

    def reward_ended(self, batch: BatchedGame, ended: np.ndarray, margin_coef: float) -> None:
        """Each seat's final reward in the games ``ended``, on its last decision there."""
        for g in ended.tolist():
            sc = batch.scores[g].astype(np.float64)
            for s in range(batch.num_players):
                if self.last[g, s] >= 0:
                    reward = final_reward(np.roll(sc, -s)[None, :], margin_coef)[0]
                    self.rewards[int(self.last[g, s])] = float(reward)


def _afterstates(
    batch: BatchedGame, starts: np.ndarray, margin_coef: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every after-state of the turns starting in games ``starts``: features, whether each ends the game,
    its exact reward then, its placement slot, and how many each turn has."""
    scalar = [batch.to_game(int(i)) for i in starts]
    picks = [placements(g) for g in scalar]
    feats, over, scores = afterstates_many(scalar, [SET_MASKS[s] for s, _ in picks], [r for _, r in picks])
    exact = np.zeros(len(feats), dtype=np.float32)
    if over.any():
        exact[over] = final_reward(scores[over], margin_coef)
    slots = np.concatenate([np.concatenate([s, NUM_SETS + r]) for s, r in picks])
    sizes = np.array([len(s) + len(r) for s, r in picks])
    return feats, over, exact, slots, sizes


def _value_new_turns(
    net: AfterstatePolicyNet,
    batch: BatchedGame,
    live: np.ndarray,
    turns: _Turns,
    buf: _Buffers,
    margin_coef: float,
) -> None:
    """Value the turns whose first decision is now (one forward for all of them) and record them."""
    S = batch.S
    starts = live[(S[live, K.PHASE] == REROLL) & (S[live, K.ROLLS] == ROLLS_PER_TURN)]
    if not starts.size:
        return
    feats, over, exact, slots, sizes = _afterstates(batch, starts, margin_coef)
    local = np.repeat(np.arange(len(starts)), sizes)
    t0 = time.perf_counter()
    with torch.no_grad():
        out = net(torch.from_numpy(feats))
        v = turn_values(
            out,
            torch.from_numpy(over),
            torch.from_numpy(exact),
            torch.from_numpy(local),
            torch.from_numpy(slots),
            len(starts),
        )
        keeps = keep_values(v)
    buf.forward_s += time.perf_counter() - t0
    at = torch.from_numpy(starts)
    turns.values[at] = v
    for cur, new in zip(turns.keeps, keeps):
        cur[at] = new
    movers = S[starts, K.CUR]
    turns.circled_at_start[starts] = S[starts, K.CIRC + movers]
    turns.index[starts] = buf.n_turns + np.arange(len(starts))
    buf.add_turns(feats, over, exact, slots, sizes)


def _decisions(batch: BatchedGame, live: np.ndarray, turns: _Turns) -> _Decisions:
    """The decisions of the live games: legal moves, reroll keys and (action, placement) pairs."""
    S = batch.S
    phase, rolls = S[live, K.PHASE], S[live, K.ROLLS]
    legal = batch.M[live].copy()
    m = len(live)
    is_reroll = phase == REROLL
    keep = np.zeros((m, NUM_REROLL_IDS), dtype=np.int64)
    final = np.zeros(m, dtype=np.int64)
    if is_reroll.any():
        keep[is_reroll], final[is_reroll] = reroll_keys(S[live[is_reroll], K.DICE : K.DICE + NUM_DICE])
    movers = S[live, K.CUR]
    circ_now = S[live, K.CIRC + movers].astype(np.int64)
    cross_now = S[live, K.CROSS + movers].astype(np.int64)
    circ_rows = np.flatnonzero(phase == CIRCLE)
    cross_rows = np.flatnonzero(phase == CROSS_PHASE)
    pr, pa, ps = circle_pairs(
        S[live[circ_rows], K.COUNTS : K.COUNTS + NUM_DICE],
        (circ_now & ~turns.circled_at_start[live])[circ_rows],
        (FULL & ~(circ_now | cross_now))[circ_rows],
        S[live[circ_rows], K.NCIRC].astype(np.int64),
        legal[circ_rows],
    )
    xr, xa, xs = cross_pairs(legal[cross_rows])
    pair_rows = np.concatenate([circ_rows[pr], cross_rows[xr]])
    pair_act = np.concatenate([pa, xa])
    pair_slot = np.concatenate([ps, xs])
    order = np.argsort(pair_rows, kind="stable")
    return _Decisions(
        live=live,
        movers=movers,
        legal=legal,
        reroll=is_reroll,
        keep=keep,
        final=final,
        two_rolls=rolls == ROLLS_PER_TURN,
        pair_rows=pair_rows[order],
        pair_act=pair_act[order],
        pair_slot=pair_slot[order],
    )


def _act(
    net: AfterstatePolicyNet, dec: _Decisions, turns: _Turns, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample every decision from the policy: the actions, their log-probabilities and the states' values."""
    m = len(dec.live)
    r = dec.reroll
    with torch.no_grad():
        rows = torch.from_numpy(dec.live)
        q = action_values(
            turns.values[rows],
            tuple(k[rows] for k in turns.keeps),
            torch.arange(m),
            torch.from_numpy(np.flatnonzero(r)),
            torch.from_numpy(dec.keep[r]),
            torch.from_numpy(dec.final[r]),
            torch.from_numpy(dec.two_rolls[r]),
            torch.from_numpy(dec.pair_rows),
            torch.from_numpy(dec.pair_act),
            torch.from_numpy(dec.pair_slot),
        )
        lg = torch.from_numpy(dec.legal)
        logits = policy_logits(q, lg, net.beta)
        logp_all = torch.log_softmax(logits, 1)
        value = state_values(q, lg, logp_all.exp()).numpy()
    logp_np = logp_all.numpy()
    acts = np.argmax(logp_np + rng.gumbel(size=logp_np.shape), axis=1)
    return acts, logp_np[np.arange(m), acts], value


def _step(batch: BatchedGame, bots: _Bots, live: np.ndarray, acts: np.ndarray) -> np.ndarray:
    """Play ``acts`` in the games ``live``, then the bots; returns the games of ``live`` now over."""
    full_acts = np.zeros(batch.num_envs, dtype=np.int64)
    full_acts[live] = acts
    active = np.zeros(batch.num_envs, dtype=np.bool_)
    active[live] = True
    batch.step(full_acts, active=active)
    bots.play(batch)
    return live[batch.done[live]]


def play_rollout(
    net: AfterstatePolicyNet,
    games: int,
    players: int,
    opp_greedy: float,
    margin_coef: float,
    rng: np.random.Generator,
) -> Rollout:
    """Play ``games`` games to the end with the policy sampling every learner decision."""
    batch = BatchedGame(games, players, seed=int(rng.integers(SEED_BOUND)))
    kinds = _draw_seats(games, players, opp_greedy, rng)
    streams = seed_streams(int(rng.integers(SEED_BOUND)), games)
    bots = _Bots(kinds, BatchedGreedy(batch.table, players), streams, np.full(games, -1, dtype=np.int64))
    turns = _Turns.empty(games)
    buf = _Buffers(last=np.full((games, players), -1, dtype=np.int64))
    while True:
        bots.play(batch)
        live = np.flatnonzero(~batch.done)
        if live.size == 0:
            break
        _value_new_turns(net, batch, live, turns, buf, margin_coef)
        dec = _decisions(batch, live, turns)
        acts, logp, value = _act(net, dec, turns, rng)
        buf.record(dec, turns, acts, logp, value)
        buf.reward_ended(batch, _step(batch, bots, live, acts), margin_coef)
    return _finish(buf, batch, kinds)


def _stats(buf: _Buffers, batch: BatchedGame, kinds: np.ndarray) -> dict[str, float]:
    """The rollout's counts, the learner's wins against ``greedy`` and the time spent in forwards."""
    scores = batch.scores.astype(np.int64)
    wins = []
    for g in np.flatnonzero((kinds == GREEDY).any(1)):
        me = int(np.flatnonzero(kinds[g] == OTHER)[0])
        wins.append(scores[g, me] > np.delete(scores[g], me).max())
    return {
        "games": float(batch.num_envs),
        "decisions": float(buf.n_dec),
        "turns": float(buf.n_turns),
        "afterstates": float(sum(len(f) for f in buf.turn_feats)),
        "games_vs_greedy": float(len(wins)),
        "train_win_vs_greedy": float(np.mean(wins)) if wins else float("nan"),
        "rollout_forward_s": buf.forward_s,
    }


def _finish(buf: _Buffers, batch: BatchedGame, kinds: np.ndarray) -> Rollout:
    """The :class:`Rollout` of the recorded buffers (the games all over)."""
    reward = np.zeros(buf.n_dec, dtype=np.float32)
    for d, r in buf.rewards.items():
        reward[d] = r
    cat = {k: np.concatenate(v) for k, v in buf.decisions.items()}
    counts = np.concatenate(buf.turn_count)
    return Rollout(
        feats=np.concatenate(buf.turn_feats),
        over=np.concatenate(buf.turn_over),
        exact=np.concatenate(buf.turn_exact),
        cand_slot=np.concatenate(buf.turn_slot).astype(np.int64),
        cand_off=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        turn=cat["turn"],
        legal=cat["legal"],
        reroll=cat["reroll"],
        keep_idx=cat["keep"],
        final_idx=cat["final"],
        two_rolls=cat["two"],
        pair_dec=np.concatenate(buf.pair_dec).astype(np.int64),
        pair_act=np.concatenate(buf.pair_act).astype(np.int64),
        pair_slot=np.concatenate(buf.pair_slot).astype(np.int64),
        action=cat["action"].astype(np.int64),
        logp=cat["logp"].astype(np.float32),
        value=cat["value"].astype(np.float32),
        reward=reward,
        next_dec=np.array(buf.next_dec, dtype=np.int64),
        stats=_stats(buf, batch, kinds),
    )


def gae(roll: Rollout, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns along each seat's own decisions (GAE; a game's last decision is terminal)."""
    adv = np.zeros(roll.decisions, dtype=np.float32)
    nxt, val, rew = roll.next_dec, roll.value, roll.reward
    for d in range(roll.decisions - 1, -1, -1):
        n = nxt[d]
        if n < 0:
            adv[d] = rew[d] - val[d]
        else:
            adv[d] = rew[d] + gamma * val[n] - val[d] + gamma * lam * adv[n]
    return adv, adv + val
