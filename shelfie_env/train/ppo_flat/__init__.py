"""The flat masked PPO learner (``shelfie train --algo ppo_flat``): :mod:`.ppo` is the whole algorithm."""

from shelfie_env.train.ppo_flat.ppo import ALGO, Agent, PPOFlatConfig, Trainer, play_greedy

__all__ = ["ALGO", "Agent", "PPOFlatConfig", "Trainer", "play_greedy"]
