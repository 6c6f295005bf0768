"""``rllib_ppo``: RLlib PPO on the new API stack (:mod:`shelfie_env.rllib`), needs the ``scale`` extra.

The masked module with separate 2 x 256 tanh actor and critic and the SB3 learners' PPO settings (lr 3e-4,
entropy 0.01, gamma 0.995, minibatch 512, 4 epochs), batches of 4,096 env steps from 8 envs sampled in this
process, against the protocol's opponents (league snapshots off). It does not checkpoint.
"""

from __future__ import annotations

from shelfie_env.benchmark.learners import Run, Trained

N_ENVS = 8


def train(run: Run) -> Trained:
    import ray
    import torch

    from shelfie_env.bots.learned.bot import PPOBot
    from shelfie_env.bots.learned.policy import NumpyPolicy
    from shelfie_env.rllib import ppo_config
    from shelfie_env.rllib.train import LEARNER, RLlibConfig, weights_to_arrays

    torch.set_num_threads(1)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    cfg = RLlibConfig(
        players=2,
        num_env_runners=0,
        num_envs_per_env_runner=N_ENVS,
        hidden=[256, 256],
        learning_rate=3e-4,
        entropy_coeff=0.01,
        gamma=0.995,
        train_batch_size=4096,
        minibatch_size=512,
        num_epochs=4,
        p_random=0.5,
        p_greedy=0.5,
        snapshots=1,
        seed=run.seed,
    )
    algo = ppo_config(cfg).build_algo()

    def bot() -> PPOBot:
        weights = algo.learner_group.get_weights([LEARNER])[LEARNER]
        return PPOBot(NumpyPolicy.from_state_dict(weights_to_arrays(weights), "tanh"), 2)

    decisions = 0
    curve = run.curve
    try:
        while decisions < run.steps:
            result = algo.train()
            decisions += int(result["env_runners"]["num_module_steps_sampled"][LEARNER])
            if curve.due(decisions):
                curve.add(decisions, bot())
        wall = curve.train_s()
        final = bot()
    finally:
        algo.stop()
        ray.shutdown()
    curve.add(decisions, final, final=True)
    return Trained(final, wall, decisions, policy=final.policy)
