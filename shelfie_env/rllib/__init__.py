"""Ray RLlib integration (the ``scale`` extra): the multi-agent env.

    from shelfie_env.rllib import ShelfieMultiAgentEnv
"""

from shelfie_env.rllib.env import LegalActions, ShelfieMultiAgentEnv

__all__ = ["LegalActions", "ShelfieMultiAgentEnv"]
