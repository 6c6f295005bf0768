"""Registration of the envs with Gymnasium's and PettingZoo's registries.

``register_envs()`` is idempotent; ``import shelfie_env`` calls it, so
``gymnasium.make("shelfie/Solo-v0")``, ``gymnasium.make("shelfie/Versus-v0")``
and ``pettingzoo.make("aec", "shelfie/shelfie_v0")`` work after the import.
Entry points are strings, so nothing heavy is imported until an env is made.

When numba (the ``fast`` extra) is installed, the Gymnasium ids also get a
``vector_entry_point``: ``gymnasium.make_vec("shelfie/Versus-v0", 64)`` then
builds the batched :class:`~shelfie_env.envs.vector.VersusVectorEnv` (one compiled
call steps all games) instead of a ``SyncVectorEnv`` of scalar envs;
``vectorization_mode="sync"`` or ``"async"`` still picks the scalar copies.
"""

from __future__ import annotations

import importlib.util

GYM_IDS = {
    "shelfie/Solo-v0": "shelfie_env.envs.gym_envs:SoloEnv",
    "shelfie/Versus-v0": "shelfie_env.envs.gym_envs:VersusEnv",
}
VECTOR_IDS = {
    "shelfie/Solo-v0": "shelfie_env.envs.vector:SoloVectorEnv",
    "shelfie/Versus-v0": "shelfie_env.envs.vector:VersusVectorEnv",
}
PETTINGZOO_ID = "shelfie/shelfie_v0"  # PettingZoo stores it as "shelfie/shelfie-v0"


def register_envs() -> None:
    """Register the Gymnasium and PettingZoo envs unless already registered."""
    import gymnasium

    batched = importlib.util.find_spec("numba") is not None
    for env_id, entry_point in GYM_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point=VECTOR_IDS[env_id] if batched else None,
            )
    try:  # PettingZoo >= 1.27 has a registry (pettingzoo.register / pettingzoo.make)
        from pettingzoo import aec_registry, register
    except ImportError:
        return
    if PETTINGZOO_ID.replace("_v0", "-v0") not in aec_registry:
        register("aec", PETTINGZOO_ID, entry_point="shelfie_env.shelfie_v0:env")
