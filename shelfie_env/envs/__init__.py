"""The RL adapters of the game engine.

* :mod:`~shelfie_env.envs.aec`: the PettingZoo AEC env (public as :mod:`shelfie_env.shelfie_v0`);
* :mod:`~shelfie_env.envs.gym_envs`: Gymnasium ``shelfie/Solo-v0`` and ``shelfie/Versus-v0``;
* :mod:`~shelfie_env.envs.vector`: batched Gymnasium vector envs (needs numba, the ``fast`` extra);
* :mod:`~shelfie_env.envs.sb3_vec`: the same as a Stable-Baselines3 ``VecEnv``;
* :mod:`~shelfie_env.observation.vector`: the observation vector and its layout;
* :mod:`~shelfie_env.envs.common`: reward modes, player-count checks, the observation space;
* :mod:`~shelfie_env.envs.registration`: Gymnasium and PettingZoo registry entries.
"""
