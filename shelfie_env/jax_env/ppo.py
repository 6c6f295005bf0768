"""PPO on the JAX twin, PureJaxRL style: rollout, GAE and update in one jitted loop.

Two-player self-play: one policy plays both seats and every decision is a learner decision, so no
opponent is simulated between them and the whole batch of games trains. The rank reward is
zero-sum at two seats, so the value of a position for the seat on turn is minus its value for the
rival: where the next decision belongs to the other seat, GAE bootstraps from ``-V(next)``.

The policy and the value are separate 2x256 tanh MLPs (plain jax, optax Adam) on the default
observation, with illegal actions masked out of the 120 logits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from shelfie_env.jax_env.twin import ShelfieJax, make

Params = dict[str, Any]
_MASKED = -1e9


@dataclass(frozen=True)
class PPOConfig:
    """The run: ``num_envs`` games side by side, ``num_steps`` decisions each per update."""

    num_envs: int = 1024
    num_steps: int = 32
    total_decisions: int = 1_000_000
    update_epochs: int = 4
    num_minibatches: int = 8
    lr: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256

    @property
    def num_updates(self) -> int:
        return max(1, self.total_decisions // (self.num_envs * self.num_steps))

    def check(self) -> None:
        """Raise ``ValueError`` naming the first field out of range."""
        for name in (
            "num_envs",
            "num_steps",
            "total_decisions",
            "update_epochs",
            "num_minibatches",
            "hidden",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ValueError("num_minibatches must divide num_envs * num_steps")


def _dense(key: jax.Array, fan_in: int, fan_out: int, scale: float) -> dict[str, jax.Array]:
    w = jax.nn.initializers.orthogonal(scale)(key, (fan_in, fan_out), jnp.float32)
    return {"w": w, "b": jnp.zeros(fan_out, jnp.float32)}


def init_params(key: jax.Array, obs_size: int, hidden: int = 256, actions: int = 120) -> Params:
    """Orthogonally initialised policy and value MLPs (2 hidden layers of ``hidden``)."""
    k = jax.random.split(key, 6)
    s = float(np.sqrt(2))
    return {
        "pi": [
            _dense(k[0], obs_size, hidden, s),
            _dense(k[1], hidden, hidden, s),
            _dense(k[2], hidden, actions, 0.01),
        ],
        "v": [
            _dense(k[3], obs_size, hidden, s),
            _dense(k[4], hidden, hidden, s),
            _dense(k[5], hidden, 1, 1.0),
        ],
    }


def _mlp(layers: list[dict[str, jax.Array]], x: jax.Array) -> jax.Array:
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def policy(params: Params, obs: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Masked logits (illegal ids at -1e9) and the value of the seat on turn."""
    logits = jnp.where(mask, _mlp(params["pi"], obs), _MASKED)
    return logits, _mlp(params["v"], obs)[..., 0]


class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array
    same_seat: jax.Array  # the next decision is the same seat's
    score: jax.Array  # mean final score of a game that just ended (0 otherwise)


def gae(traj: Transition, last_value: jax.Array, gamma: float, lam: float) -> tuple[jax.Array, jax.Array]:
    """Advantages and value targets ``(T, E)`` of a two-seat zero-sum rollout."""

    def back(
        carry: tuple[jax.Array, jax.Array], t: Transition
    ) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
        adv_next, value_next = carry
        sign = jnp.where(t.same_seat, 1.0, -1.0)
        live = 1.0 - t.done
        delta = t.reward + gamma * live * sign * value_next - t.value
        adv = delta + gamma * lam * live * sign * adv_next
        return (adv, t.value), adv

    _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
    return adv, adv + traj.value


def _loss(params: Params, batch: tuple[jax.Array, ...], cfg: PPOConfig) -> tuple[jax.Array, tuple]:
    obs, mask, action, old_logp, old_value, adv, target = batch
    logits, value = policy(params, obs, mask)
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, action[:, None], axis=1)[:, 0]
    ratio = jnp.exp(logp - old_logp)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip_eps, 1 + cfg.clip_eps) * adv).mean()
    v_clip = old_value + jnp.clip(value - old_value, -cfg.clip_eps, cfg.clip_eps)
    vf = 0.5 * jnp.maximum((value - target) ** 2, (v_clip - target) ** 2).mean()
    entropy = -(jnp.where(mask, jnp.exp(logp_all) * logp_all, 0.0)).sum(-1).mean()
    return pg + cfg.vf_coef * vf - cfg.ent_coef * entropy, (pg, vf, entropy)


def make_train(cfg: PPOConfig, env: ShelfieJax | None = None) -> Callable[[jax.Array], dict[str, Any]]:
    """``train(key)``: the whole run as one jittable function returning the params and per-update
    metrics (losses, entropy, games ended, their mean final score)."""
    cfg.check()
    env = env or make(2)
    if env.num_players != 2:
        raise ValueError(f"self-play PPO plays 2 seats, the env has {env.num_players}")
    tx = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(cfg.lr, eps=1e-5))
    init_v, step_v = jax.vmap(env.init), jax.vmap(env.step)

    def env_step(carry: tuple, _: Any) -> tuple[tuple, Transition]:
        params, states, key = carry
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        logits, value = policy(params, states.observation, states.legal_action_mask)
        action = jax.random.categorical(k_act, logits)
        log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[:, 0]
        seat = states.current_player
        nxt = step_v(states, action, jax.random.split(k_step, cfg.num_envs))
        reward = jnp.take_along_axis(nxt.rewards, seat[:, None], axis=1)[:, 0]
        done = nxt.terminated
        score = jnp.where(done, nxt.scores.mean(axis=1), 0.0)
        fresh = init_v(jax.random.split(k_reset, cfg.num_envs))
        nxt_states = jax.tree.map(lambda a, b: jnp.where(_rows(done, a), a, b), fresh, nxt)
        t = Transition(
            states.observation, states.legal_action_mask, action, log_prob, value, reward,
            done.astype(jnp.float32), nxt.current_player == seat, score,
        )  # fmt: skip
        return (params, nxt_states, key), t

    def update(carry: tuple, _: Any) -> tuple[tuple, dict[str, jax.Array]]:
        params, opt_state, states, key = carry
        (params, states, key), traj = jax.lax.scan(env_step, (params, states, key), None, cfg.num_steps)
        _, last_value = policy(params, states.observation, states.legal_action_mask)
        adv, target = gae(traj, last_value, cfg.gamma, cfg.gae_lambda)
        flat = jax.tree.map(
            lambda x: x.reshape((-1,) + x.shape[2:]),
            (traj.obs, traj.mask, traj.action, traj.log_prob, traj.value, adv, target),
        )

        def epoch(carry: tuple, _: Any) -> tuple[tuple, tuple]:
            params, opt_state, key = carry
            key, k = jax.random.split(key)
            order = jax.random.permutation(k, cfg.num_envs * cfg.num_steps).reshape(cfg.num_minibatches, -1)

            def minibatch(carry: tuple, idx: jax.Array) -> tuple[tuple, tuple]:
                params, opt_state = carry
                grads, aux = jax.grad(_loss, has_aux=True)(params, jax.tree.map(lambda x: x[idx], flat), cfg)
                updates, opt_state = tx.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), aux

            (params, opt_state), aux = jax.lax.scan(minibatch, (params, opt_state), order)
            return (params, opt_state, key), aux

        (params, opt_state, key), (pg, vf, ent) = jax.lax.scan(
            epoch, (params, opt_state, key), None, cfg.update_epochs
        )
        games = traj.done.sum()
        metrics = {
            "policy_loss": pg.mean(),
            "value_loss": vf.mean(),
            "entropy": ent.mean(),
            "games": games,
            "mean_score": traj.score.sum() / jnp.maximum(games, 1.0),
        }
        return (params, opt_state, states, key), metrics

    def train(key: jax.Array) -> dict[str, Any]:
        k_params, k_env, key = jax.random.split(key, 3)
        params = init_params(k_params, env.observation_shape[0], cfg.hidden)
        states = init_v(jax.random.split(k_env, cfg.num_envs))
        carry = (params, tx.init(params), states, key)
        (params, _, _, _), metrics = jax.lax.scan(update, carry, None, cfg.num_updates)
        return {"params": params, "metrics": metrics}

    return train


def _rows(flag: jax.Array, x: jax.Array) -> jax.Array:
    return flag.reshape((-1,) + (1,) * (x.ndim - 1))


def versus_random(
    params: Params, key: jax.Array, games: int = 512, env: ShelfieJax | None = None
) -> jax.Array:
    """The policy's mean rank reward (greedy argmax of its logits) against uniformly random legal play,
    seated first in half the games and second in the other half."""
    env = env or make(2)
    learner_seat = jnp.arange(games) % 2
    k_init, k_loop = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(k_init, games))

    def body(i: jax.Array, carry: tuple) -> tuple:
        states, total = carry
        k_rand, k_step = jax.random.split(jax.random.fold_in(k_loop, i))
        logits, _ = policy(params, states.observation, states.legal_action_mask)
        noise = jax.random.uniform(k_rand, logits.shape)
        rand_action = jnp.argmax(jnp.where(states.legal_action_mask, noise, -1.0), axis=1)
        action = jnp.where(states.current_player == learner_seat, jnp.argmax(logits, axis=1), rand_action)
        states = jax.vmap(env.step)(states, action, jax.random.split(k_step, games))
        reward = jnp.take_along_axis(states.rewards, learner_seat[:, None], axis=1)[:, 0]
        return states, total + reward

    states, total = jax.lax.fori_loop(0, 400, body, (states, jnp.zeros(games)))
    return jnp.where(states.terminated.all(), total.mean(), jnp.nan)


def main(argv: list[str] | None = None) -> int:
    """``python -m shelfie_env.jax_env.ppo``: one self-play run, then the policy against random play."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Self-play PPO on the JAX twin (2 players).")
    parser.add_argument("--decisions", type=float, default=1e6, help="learner decisions in all")
    parser.add_argument("--envs", type=int, default=1024, help="games played side by side")
    parser.add_argument("--steps", type=int, default=32, help="decisions per game per update")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--eval-games", type=int, default=2048, help="games against random play after training"
    )
    args = parser.parse_args(argv)
    try:
        cfg = PPOConfig(num_envs=args.envs, num_steps=args.steps, total_decisions=int(args.decisions))
        cfg.check()
    except ValueError as exc:
        parser.error(str(exc))
    train = jax.jit(make_train(cfg))
    t0 = time.perf_counter()
    compiled = train.lower(jax.random.PRNGKey(args.seed)).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = jax.block_until_ready(compiled(jax.random.PRNGKey(args.seed)))
    run_s = time.perf_counter() - t0
    decisions = cfg.num_updates * cfg.num_envs * cfg.num_steps
    m = {k: np.asarray(v) for k, v in out["metrics"].items()}
    tenth = max(1, cfg.num_updates // 10)
    for i in range(0, cfg.num_updates, tenth):
        games = m["games"][i : i + tenth].sum()
        score = (m["mean_score"][i : i + tenth] * m["games"][i : i + tenth]).sum() / max(games, 1)
        print(f"update {i + 1:5d}: mean final score {score:5.1f}, entropy {m['entropy'][i]:.3f}", flush=True)
    evaluate = jax.jit(versus_random, static_argnums=2)
    key = jax.random.PRNGKey(10_000 + args.seed)
    start = init_params(jax.random.PRNGKey(args.seed), out["params"]["pi"][0]["w"].shape[0], cfg.hidden)
    print(
        f"{decisions} decisions in {run_s:.1f} s: {decisions / run_s:,.0f} decisions/s (compile {compile_s:.1f} s)"
    )
    print(f"mean rank reward against random play, {args.eval_games} games (greedy policy):")
    print(f"  untrained {float(evaluate(start, key, args.eval_games)):+.3f}")
    print(f"  trained   {float(evaluate(out['params'], key, args.eval_games)):+.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
