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
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from shelfie_env.batched import BatchedGame, seed_streams
from shelfie_env.batched import _kernels as K
from shelfie_env.bots.greedy.batched import GREEDY, OTHER, BatchedGreedy, play_compiled_bots
from shelfie_env.bots.learned.afterstate import afterstates_many, final_reward, placements
from shelfie_env.bots.learned.expect_head import FINAL_OF_CODE, KEEP_OF_CODE, NUM_SETS, kept_counts
from shelfie_env.bots.planner.placements import SET_MASKS, SET_SIZES, feasible_matrix
from shelfie_env.game.actions import CIRCLE_BASE, CROSS_BASE, END_TURN
from shelfie_env.game.engine import MAX_CIRCLES
from shelfie_env.game.scoring import FULL
from shelfie_env.train.ppo_afterstate.torch_net import (
    AfterstatePolicyNet,
    action_values,
    keep_values,
    policy_logits,
    state_values,
    turn_values,
)

_ORDER = np.argsort(SET_MASKS)
_SORTED = SET_MASKS[_ORDER]
_POWERS = 7 ** np.arange(6)
_EYE6 = np.eye(6, dtype=np.float32)


def set_slot(masks: np.ndarray) -> np.ndarray:
    """Index in ``SET_MASKS`` of each circle-set mask (``ValueError`` for a mask that is not a set)."""
    pos = np.searchsorted(_SORTED, masks)
    pos = np.minimum(pos, len(_SORTED) - 1)
    if not np.array_equal(_SORTED[pos], masks):
        raise ValueError("a mask that is not a circle set of 1..3 cells")
    return _ORDER[pos]


def reroll_keys(dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sorted dice row: the keep index of every reroll id (``(m, 64)``) and the final multiset index."""
    onehot = _EYE6[dice].reshape(len(dice), 36)
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
        r, c = cell // 5, cell % 5
        rest = counts[ii].astype(np.int64)
        six = rest[:, 5] == 6
        rest[np.arange(len(ii)), r] -= c + 1 - joker
        rest[:, 5] -= joker
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
    keep_idx: np.ndarray  # (D, 64) keep index per reroll id (reroll decisions)
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


def play_rollout(
    net: AfterstatePolicyNet,
    games: int,
    players: int,
    opp_greedy: float,
    margin_coef: float,
    rng: np.random.Generator,
) -> Rollout:
    """Play ``games`` games to the end with the policy sampling every learner decision."""
    batch = BatchedGame(games, players, seed=int(rng.integers(1 << 62)))
    kinds = _draw_seats(games, players, opp_greedy, rng)
    greedy = BatchedGreedy(batch.table, players)
    bot_rng = seed_streams(int(rng.integers(1 << 62)), games)
    nobody = np.full(games, -1, dtype=np.int64)
    v_cur = torch.zeros((games, NUM_SETS + 5))
    k_cur = (torch.zeros((games, 462)), torch.zeros((games, 924)), torch.zeros((games, 924)))
    circ0 = np.zeros(games, dtype=np.int64)
    turn_of = np.full(games, -1, dtype=np.int64)
    last = np.full((games, players), -1, dtype=np.int64)
    t_feats, t_over, t_exact, t_slot, t_count = [], [], [], [], []
    recs: dict[str, list[np.ndarray]] = {
        k: [] for k in ("turn", "legal", "reroll", "keep", "final", "two", "action", "logp", "value")
    }
    p_dec, p_act, p_slot = [], [], []
    next_dec: list[int] = []
    rewards: dict[int, float] = {}
    n_dec = n_turns = 0
    forward_s = 0.0
    while True:
        play_compiled_bots(batch, nobody, kinds, bot_rng, greedy)
        live = np.flatnonzero(~batch.done)
        if live.size == 0:
            break
        S = batch.S
        phase, rolls = S[live, K.PHASE], S[live, K.ROLLS]
        starts = live[(phase == K.REROLL) & (rolls == 2)]
        if starts.size:
            scalar = [batch.to_game(int(i)) for i in starts]
            picks = [placements(g) for g in scalar]
            feats, over, scores = afterstates_many(
                scalar, [SET_MASKS[s] for s, _ in picks], [r for _, r in picks]
            )
            exact = np.zeros(len(feats), dtype=np.float32)
            if over.any():
                exact[over] = final_reward(scores[over], margin_coef)
            slots = np.concatenate([np.concatenate([s, NUM_SETS + r]) for s, r in picks])
            sizes = np.array([len(s) + len(r) for s, r in picks])
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
            forward_s += time.perf_counter() - t0
            at = torch.from_numpy(starts)
            v_cur[at] = v
            for cur, new in zip(k_cur, keeps):
                cur[at] = new
            t_feats.append(feats)
            t_over.append(over)
            t_exact.append(exact)
            t_slot.append(slots)
            t_count.append(sizes)
            movers = S[starts, K.CUR]
            circ0[starts] = S[starts, K.CIRC + movers]
            turn_of[starts] = n_turns + np.arange(len(starts))
            n_turns += len(starts)
        legal = batch.M[live].copy()
        m = len(live)
        is_reroll = phase == K.REROLL
        keep = np.zeros((m, 64), dtype=np.int64)
        final = np.zeros(m, dtype=np.int64)
        if is_reroll.any():
            keep[is_reroll], final[is_reroll] = reroll_keys(S[live[is_reroll], K.DICE : K.DICE + 6])
        two = rolls == 2
        movers = S[live, K.CUR]
        circ_now = S[live, K.CIRC + movers].astype(np.int64)
        cross_now = S[live, K.CROSS + movers].astype(np.int64)
        circ_rows = np.flatnonzero(phase == K.CIRCLE)
        cross_rows = np.flatnonzero(phase == K.CROSS_PHASE)
        pr, pa, ps = circle_pairs(
            S[live[circ_rows], K.COUNTS : K.COUNTS + 6],
            (circ_now & ~circ0[live])[circ_rows],
            (FULL & ~(circ_now | cross_now))[circ_rows],
            S[live[circ_rows], K.NCIRC].astype(np.int64),
            legal[circ_rows],
        )
        xr, xa, xs = cross_pairs(legal[cross_rows])
        pair_rows = np.concatenate([circ_rows[pr], cross_rows[xr]])
        pair_act = np.concatenate([pa, xa])
        pair_slot = np.concatenate([ps, xs])
        order = np.argsort(pair_rows, kind="stable")
        pair_rows, pair_act, pair_slot = pair_rows[order], pair_act[order], pair_slot[order]
        with torch.no_grad():
            rows = torch.from_numpy(live)
            q = action_values(
                v_cur[rows],
                tuple(k[rows] for k in k_cur),
                torch.arange(m),
                torch.from_numpy(np.flatnonzero(is_reroll)),
                torch.from_numpy(keep[is_reroll]),
                torch.from_numpy(final[is_reroll]),
                torch.from_numpy(two[is_reroll]),
                torch.from_numpy(pair_rows),
                torch.from_numpy(pair_act),
                torch.from_numpy(pair_slot),
            )
            lg = torch.from_numpy(legal)
            logits = policy_logits(q, lg, net.beta)
            logp_all = torch.log_softmax(logits, 1)
            value = state_values(q, lg, logp_all.exp()).numpy()
        logp_np = logp_all.numpy()
        acts = np.argmax(logp_np + rng.gumbel(size=logp_np.shape), axis=1)
        recs["turn"].append(turn_of[live].copy())
        recs["legal"].append(legal)
        recs["reroll"].append(is_reroll)
        recs["keep"].append(keep)
        recs["final"].append(final)
        recs["two"].append(two)
        recs["action"].append(acts)
        recs["logp"].append(logp_np[np.arange(m), acts])
        recs["value"].append(value)
        p_dec.append(n_dec + pair_rows)
        p_act.append(pair_act)
        p_slot.append(pair_slot)
        ids = n_dec + np.arange(m)
        prev = last[live, movers]
        next_dec.extend([-1] * m)
        for d_prev, d in zip(prev[prev >= 0].tolist(), ids[prev >= 0].tolist()):
            next_dec[d_prev] = d
        last[live, movers] = ids
        n_dec += m
        full_acts = np.zeros(games, dtype=np.int64)
        full_acts[live] = acts
        active = np.zeros(games, dtype=np.bool_)
        active[live] = True
        batch.step(full_acts, active=active)
        play_compiled_bots(batch, nobody, kinds, bot_rng, greedy)
        ended = live[batch.done[live]]
        for g in ended.tolist():
            sc = batch.scores[g].astype(np.float64)
            for s in range(players):
                if last[g, s] >= 0:
                    rewards[int(last[g, s])] = float(final_reward(np.roll(sc, -s)[None, :], margin_coef)[0])
    reward = np.zeros(n_dec, dtype=np.float32)
    for d, r in rewards.items():
        reward[d] = r
    scores = batch.scores.astype(np.int64)
    vs_greedy = (kinds == GREEDY).any(1)
    wins = []
    for g in np.flatnonzero(vs_greedy):
        me = int(np.flatnonzero(kinds[g] == OTHER)[0])
        wins.append(scores[g, me] > np.delete(scores[g], me).max())
    cat = {k: np.concatenate(v) for k, v in recs.items()}
    stats = {
        "games": float(games),
        "decisions": float(n_dec),
        "turns": float(n_turns),
        "afterstates": float(sum(len(f) for f in t_feats)),
        "games_vs_greedy": float(len(wins)),
        "train_win_vs_greedy": float(np.mean(wins)) if wins else float("nan"),
        "rollout_forward_s": forward_s,
    }
    counts = np.concatenate(t_count)
    return Rollout(
        feats=np.concatenate(t_feats),
        over=np.concatenate(t_over),
        exact=np.concatenate(t_exact),
        cand_slot=np.concatenate(t_slot).astype(np.int64),
        cand_off=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        turn=cat["turn"],
        legal=cat["legal"],
        reroll=cat["reroll"],
        keep_idx=cat["keep"],
        final_idx=cat["final"],
        two_rolls=cat["two"],
        pair_dec=np.concatenate(p_dec).astype(np.int64),
        pair_act=np.concatenate(p_act).astype(np.int64),
        pair_slot=np.concatenate(p_slot).astype(np.int64),
        action=cat["action"].astype(np.int64),
        logp=cat["logp"].astype(np.float32),
        value=cat["value"].astype(np.float32),
        reward=reward,
        next_dec=np.array(next_dec, dtype=np.int64),
        stats=stats,
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
