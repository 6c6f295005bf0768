"""Ray RLlib integration (the ``scale`` extra): env, masked PPO module, league self-play.

    from shelfie_env.rllib import ShelfieMultiAgentEnv, ppo_config
    algo = ppo_config(players=2, num_env_runners=2).build_algo()

``shelfie train --backend rllib`` runs a league (docs/scale.md).
"""

from shelfie_env.rllib.env import LegalActions, ShelfieMultiAgentEnv
from shelfie_env.rllib.train import RLlibConfig, RLlibTrainer, ppo_config

__all__ = ["LegalActions", "RLlibConfig", "RLlibTrainer", "ShelfieMultiAgentEnv", "ppo_config"]
