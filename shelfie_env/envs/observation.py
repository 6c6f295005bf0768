"""The observation vector under the name the envs have always given it.

The layout, the encoders and :func:`decode` live in :mod:`shelfie_env.observation.vector`;
this module hands them on so ``from shelfie_env.envs.observation import encode`` keeps working.
"""

from shelfie_env.observation.vector import (
    OBS_VERSION,
    SCORE_SCALE,
    ObservationEncoder,
    block_start,
    decode,
    encode,
    layout,
    legal_mask,
    observation_size,
)

__all__ = [
    "OBS_VERSION",
    "SCORE_SCALE",
    "ObservationEncoder",
    "block_start",
    "decode",
    "encode",
    "layout",
    "legal_mask",
    "observation_size",
]
