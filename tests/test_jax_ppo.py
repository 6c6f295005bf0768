"""The PureJaxRL-style PPO on the JAX twin: its two-seat GAE, its config checks, a short run."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

import jax.numpy as jnp  # noqa: E402

from shelfie_env.jax_env.ppo import PPOConfig, Transition, gae, make_train, versus_random  # noqa: E402


def test_gae_flips_the_sign_where_the_next_decision_is_the_rivals() -> None:
    # seat 0 decides twice, then seat 1 decides and the game ends with seat 1 losing (-1)
    value = jnp.array([[0.5], [0.25], [-0.5]])
    traj = Transition(
        obs=jnp.zeros((3, 1, 1)),
        mask=jnp.ones((3, 1, 1), dtype=bool),
        action=jnp.zeros((3, 1), dtype=jnp.int32),
        log_prob=jnp.zeros((3, 1)),
        value=value,
        reward=jnp.array([[0.0], [0.0], [-1.0]]),
        done=jnp.array([[0.0], [0.0], [1.0]]),
        same_seat=jnp.array([[True], [False], [False]]),
        score=jnp.zeros((3, 1)),
    )
    adv, target = gae(traj, jnp.array([9.0]), gamma=1.0, lam=1.0)
    # with lambda 1 the target is the final reward from the deciding seat's side: +1, +1, -1
    np.testing.assert_allclose(np.asarray(target)[:, 0], [1.0, 1.0, -1.0])
    np.testing.assert_allclose(np.asarray(adv)[:, 0], [0.5, 0.75, -0.5])
    adv0, _ = gae(traj, jnp.array([9.0]), gamma=1.0, lam=0.0)
    # one-step: seat 0 at t=0 bootstraps from its own next value, at t=1 from minus the rival's
    np.testing.assert_allclose(np.asarray(adv0)[:, 0], [0.25 - 0.5, 0.5 - 0.25, -1.0 + 0.5])


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"num_envs": 0}, "num_envs must be at least 1"),
        ({"num_minibatches": 3}, "num_minibatches must divide"),
    ],
)
def test_a_bad_config_is_refused_by_name(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_train(PPOConfig(**fields))


@pytest.mark.slow
def test_a_short_run_trains_and_plays_whole_games() -> None:
    cfg = PPOConfig(
        num_envs=32, num_steps=32, total_decisions=32 * 32 * 4, update_epochs=1, num_minibatches=2
    )
    out = jax.jit(make_train(cfg))(jax.random.PRNGKey(0))
    metrics = {k: np.asarray(v) for k, v in out["metrics"].items()}
    assert metrics["games"].shape == (4,) and metrics["games"].sum() > 0
    for name in ("policy_loss", "value_loss", "entropy"):
        assert np.isfinite(metrics[name]).all(), name
    assert (metrics["mean_score"][metrics["games"] > 0] > 0).all()
    result = float(jax.jit(versus_random, static_argnums=2)(out["params"], jax.random.PRNGKey(1), 64))
    assert -1.0 <= result <= 1.0
