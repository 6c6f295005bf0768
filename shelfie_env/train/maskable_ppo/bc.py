"""Optional warm start: behaviour cloning of a teacher bot before PPO.

PPO from a random network spends millions of steps learning what a simple
heuristic already knows. With ``bc_games > 0`` the run first plays
``bc_games`` games of the teacher (``greedy`` by default) against itself, records
every decision (observation from the mover's seat, legal mask, action) and the
mover's discounted final reward, and fits the actor by masked
cross-entropy and the critic by mean squared error on those returns. PPO then
continues from that network; the card records the warm start.

With ``bc_dagger_rounds > 0`` each round then lets the cloned network play
``bc_dagger_games`` games against the teacher, labels the positions the
network reached with the teacher's choice, adds them to the data and fits
again (DAgger): the network also learns what the teacher would do in the
positions its own mistakes lead to.

A teacher that reports its value of every legal action (the ``planner``'s
``action_values_game``) also gets those values recorded (``values``, 0 where
illegal). With ``tau > 0`` :func:`clone` then fits the actor to
``softmax(values / tau)`` over the legal actions (distillation): the network
learns how much worse each alternative is, not only which move is best.

For the expectimax policy head (``policy_head expect``) the planner's value of
every placement of the turn is recorded too (``set_values=True``: ``sv``, one
``(555,)`` row per turn, NaN where impossible, and ``sv_index``, the row of each
reroll decision, -1 elsewhere); :func:`clone` fits the head's placement values to
them by regression, and the rerolls follow exactly from those.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np

from shelfie_env.bots import act_on_game
from shelfie_env.bots.planner import best_action
from shelfie_env.bots.spec import build_bot
from shelfie_env.game.engine import REROLL, Game
from shelfie_env.observation.vector import encode


def record_games(
    players: int,
    games: int,
    teacher: str,
    seed: int,
    gamma: float,
    margin_coef: float,
    solo_reward_scale: float,
    learner: Any = None,
    set_values: bool = False,
    progress: str = "",
) -> dict[str, np.ndarray]:
    """Play ``games`` games and record decisions labelled with ``teacher``'s action.

    Without ``learner`` the teacher plays every seat and every decision is
    recorded. With ``learner`` (a bot, e.g. the network being cloned) the
    learner plays seat ``i mod players`` of game ``i`` and the teacher the
    others; only the learner's decisions are recorded, each labelled with what
    the teacher would have played there (DAgger). ``returns`` are the recorded
    mover's discounted rewards as :class:`shelfie_env.train.maskable_ppo.selfplay.SelfPlayEnv` gives them.
    When the teacher reports action values (``action_values_game``) they are
    recorded too, as ``values`` (``(n, 120)``, 0 for illegal actions); with
    ``set_values`` also its placement values (``sv``/``sv_index``, module docstring).

    ``teacher`` is a bot spec as for ``shelfie arena`` (``"planner"``, ``"planner:threat=0.4"``).
    With ``progress`` (a label) a line of progress is printed every few seconds.
    """
    bot = build_bot(teacher)
    valued = reports_values(bot)
    if set_values and not hasattr(bot, "set_values_game"):
        raise ValueError(f"teacher {teacher!r} has no placement values (set_values needs the planner)")
    rng = np.random.default_rng(seed)
    obs, masks, acts, rets, vals = [], [], [], [], []
    svs: list[np.ndarray] = []
    sv_index: list[int] = []
    t0 = last = time.time()
    for i in range(games):
        if progress and time.time() - last >= 5.0:
            last = time.time()
            print(f"{progress} {i}/{games} games, {len(acts)} decisions, {last - t0:.0f}s", flush=True)
        game = Game.new(players, rng=rng)
        focus = i % players if learner is not None else -1  # the one recorded seat
        movers: list[int] = []
        step_rewards: list[float] = []
        while not game.over:
            p = game.current
            if valued:
                values = bot.action_values_game(game)
                label = best_action(values)
            else:
                label = act_on_game(bot, game)
            play = act_on_game(learner, game) if learner is not None and p == focus else label
            if focus < 0 or p == focus:
                obs.append(encode(game, p))
                masks.append(game.legal_mask().astype(bool))
                acts.append(label)
                movers.append(p)
                if valued:
                    row = np.zeros(120, np.float32)
                    row[list(values)] = list(values.values())
                    vals.append(row)
                if set_values:
                    if game.phase != REROLL:
                        sv_index.append(-1)
                    else:
                        if game.rolls_left == 2:  # a turn's first decision: the placements are its own
                            svs.append(bot.set_values_game(game))
                        sv_index.append(len(svs) - 1)
            before = game.score(p)
            game.step(play)
            if focus < 0 or p == focus:
                step_rewards.append((game.score(p) - before) * solo_reward_scale if players == 1 else 0.0)
        scores = game.scores()
        final = []
        for p in range(players):
            others = scores[:p] + scores[p + 1 :]
            if not others:
                final.append(0.0)
                continue
            rank = (sum(o < scores[p] for o in others) - sum(o > scores[p] for o in others)) / len(others)
            final.append(rank + margin_coef * (scores[p] - max(others)) / 50.0)
        # discounted return of each recorded decision, counted in the mover's own decisions
        nxt: list[float | None] = [None] * players
        out = [0.0] * len(movers)
        for k in range(len(movers) - 1, -1, -1):
            p = movers[k]
            g = final[p] if nxt[p] is None else gamma * nxt[p]
            out[k] = nxt[p] = step_rewards[k] + g
        rets.extend(out)
    out_data = {
        "obs": np.asarray(obs, np.float32).reshape(-1, len(encode(Game.new(players, rng=0), 0))),
        "masks": np.asarray(masks, bool).reshape(-1, 120),
        "actions": np.asarray(acts, np.int64),
        "returns": np.asarray(rets, np.float32),
    }
    if valued:
        out_data["values"] = np.asarray(vals, np.float32).reshape(-1, 120)
    if set_values:
        out_data["sv"] = np.asarray(svs, np.float32).reshape(len(svs), -1)
        out_data["sv_index"] = np.asarray(sv_index, np.int64)
    return out_data


def reports_values(bot: Any) -> bool:
    """Whether a teacher bot reports its value of every legal action (``action_values_game``)."""
    return hasattr(bot, "action_values_game")


def merge(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Concatenate two recorded datasets (keys present in both; ``sv_index`` follows ``sv``)."""
    out = {k: np.concatenate([a[k], b[k]]) for k in a if k in b}
    if "sv_index" in out:
        shifted = np.where(b["sv_index"] >= 0, b["sv_index"] + len(a["sv"]), -1)
        out["sv_index"] = np.concatenate([a["sv_index"], shifted])
    return out


def soft_targets(values: np.ndarray, masks: np.ndarray, tau: float) -> np.ndarray:
    """``softmax(values / tau)`` over the legal actions of each row (0 elsewhere)."""
    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    z = np.where(masks, values.astype(np.float64) / tau, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def set_value_loss(head: Any, obs: Any, data: dict[str, np.ndarray], idx: np.ndarray) -> Any:
    """Huber loss of the head's placement values against the teacher's, on the rows of ``idx`` that
    have them; both sides centred on the possible placements (a common shift changes no decision)."""
    import torch

    rows = idx[data["sv_index"][idx] >= 0]
    if len(rows) == 0:
        return torch.zeros(())
    target = torch.as_tensor(data["sv"][data["sv_index"][rows]])
    valid = ~torch.isnan(target)
    target = torch.nan_to_num(target)
    pred = head.set_values(obs[rows])
    count = valid.sum(dim=1, keepdim=True).clamp(min=1)

    def centred(x: Any) -> Any:
        return x - (x * valid).sum(dim=1, keepdim=True) / count

    err = torch.nn.functional.smooth_l1_loss(centred(pred), centred(target), reduction="none")
    return (err * valid).sum() / valid.sum().clamp(min=1)


def clone(
    model: Any,
    data: dict[str, np.ndarray],
    epochs: int,
    batch_size: int = 1024,
    lr: float = 1e-3,
    seed: int = 0,
    log: Any = None,
    tau: float = 0.0,
) -> dict[str, float]:
    """Fit ``model.policy`` (actor: cross-entropy, critic: MSE) on teacher data.

    With ``tau > 0`` the actor's target is :func:`soft_targets` of the recorded
    ``values`` instead of the teacher's action (the data must hold ``values``).
    5% of the decisions are held out; the step size falls linearly from ``lr`` to ``lr / 10``.
    Returns the held-out metrics of the last epoch; with recorded ``values`` also
    ``bc_val_regret`` (mean teacher value lost by the network's choice) and
    ``bc_val_top_value`` (share of choices the teacher values as its best).
    With an expectimax head and recorded placement values (``sv``) the head's
    placement values are fitted to them (:func:`set_value_loss`) and the
    cross-entropy covers the decisions other than rerolls.
    """
    import torch

    if log is None:
        log = partial(print, flush=True)  # shows per epoch even when stdout goes to a file
    if tau > 0 and "values" not in data:
        raise ValueError("soft targets (tau > 0) need teacher data with action values (teacher 'planner')")

    policy = model.policy
    # Expectimax head with recorded placement values: its rerolls follow from the
    # placement values, which are fitted directly; the cross-entropy covers the rest.
    fit_sets = hasattr(policy.action_net, "set_values") and "sv" in data
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    n_all = len(data["actions"])
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n_all)
    n_val = max(1, n_all // 20) if n_all > 1 else 0
    val, train = perm[:n_val], perm[n_val:]
    obs = torch.as_tensor(data["obs"])
    masks = data["masks"]
    acts = torch.as_tensor(data["actions"], dtype=torch.long)
    rets = torch.as_tensor(data["returns"])
    total_batches = max(1, epochs * -(-len(train) // batch_size))
    done = 0
    metrics: dict[str, float] = {}
    for epoch in range(epochs):
        t0 = time.time()
        policy.set_training_mode(True)
        order = rng.permutation(train)
        for start in range(0, len(order), batch_size):
            for group in opt.param_groups:
                group["lr"] = lr * (1.0 - 0.9 * done / total_batches)
            idx = order[start : start + batch_size]
            loss = torch.zeros(())
            if fit_sets:
                # The rerolls are fitted through the placement values: no cross-entropy (and, as
                # the shipped run was trained, no critic loss) on those rows.
                loss = set_value_loss(policy.action_net, obs, data, idx)
                idx = idx[~masks[idx][:, :64].any(axis=1)]
            if len(idx):  # (empty only in a short last batch of reroll rows)
                if tau <= 0:
                    values, log_prob, _ = policy.evaluate_actions(
                        obs[idx], acts[idx], action_masks=masks[idx]
                    )
                    actor_loss = -log_prob.mean()
                else:
                    # Targets per minibatch: the whole dataset's would be a dense (n, 120) copy.
                    soft = torch.as_tensor(soft_targets(data["values"][idx], masks[idx], tau))
                    values = policy.predict_values(obs[idx])
                    logits = policy.get_distribution(obs[idx], action_masks=masks[idx]).distribution.logits
                    actor_loss = -(soft * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
                loss = loss + actor_loss + 0.5 * torch.nn.functional.mse_loss(values.flatten(), rets[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            done += 1
        policy.set_training_mode(False)
        with torch.no_grad():
            values, log_prob, _ = policy.evaluate_actions(obs[val], acts[val], action_masks=masks[val])
            dist = policy.get_distribution(obs[val], action_masks=masks[val])
            choice = dist.distribution.probs.argmax(1)
            acc = (choice == acts[val]).float().mean()
            metrics = {
                "bc_val_cross_entropy": float(-log_prob.mean()),
                "bc_val_accuracy": float(acc),
                "bc_val_value_mse": float(torch.nn.functional.mse_loss(values.flatten(), rets[val])),
            }
            if "values" in data:
                # What the network's choice costs in the teacher's own values (0 when it picks a
                # move the teacher values as highly as its own, ties included).
                teacher = data["values"][val]
                picked = teacher[np.arange(len(val)), choice.numpy()]
                best = teacher[np.arange(len(val)), data["actions"][val]]
                metrics["bc_val_regret"] = float(np.mean(best - picked))
                metrics["bc_val_top_value"] = float(np.mean(best - picked <= 1e-6))
        extra = (
            f", regret {metrics['bc_val_regret']:.4f}, top-valued move {metrics['bc_val_top_value']:.3f}"
            if "bc_val_regret" in metrics
            else ""
        )
        log(
            f"[bc] epoch {epoch + 1}/{epochs}: held-out cross-entropy {metrics['bc_val_cross_entropy']:.3f}, "
            f"accuracy {metrics['bc_val_accuracy']:.3f}{extra}, value mse {metrics['bc_val_value_mse']:.3f} "
            f"({time.time() - t0:.0f}s)"
        )
    return metrics
