"""Training of learned shelfie bots (the ``train`` extra; ``docs/training.md``): one subpackage per learner.

* :mod:`.ppo_afterstate` - PPO with the after-state policy, from random weights (the default);
* :mod:`.maskable_ppo` - sb3-contrib's MaskablePPO, warm-started by behaviour cloning;
* :mod:`.td` - TD(lambda) self-play of an after-state value network;
* :mod:`.ppo_flat` - masked PPO with a flat policy head on the batched engine.

Each has its own config dataclass. What they share sits at this level: config files, presets and
flags (:mod:`.config`), field checks (:mod:`.fields`), console lines (:mod:`.console`),
checkpoints (:mod:`.checkpoint`), the training command for any set of learners
(:mod:`.command`) and ``shelfie train``, which offers them all (:mod:`.cli`).

One import runs up, from :mod:`.cli` to :mod:`shelfie_env.rllib.cli`: ``shelfie train --backend
rllib`` hands its flags to the RLlib league, a learner in a room of its own (the ``scale`` extra)
that builds on this room's field checks, expect head, config files and console lines.
"""
