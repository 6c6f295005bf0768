"""What a player sees, as vectors for learners: the SPEC observation and the ``features`` option.

* :mod:`.vector`: the default observation vector (``encode``, ``decode``, ``layout``,
  ``ObservationEncoder``, ``legal_mask``), the one every env returns by default;
* :mod:`.features`: the ``obs="features"`` block appended to it (circles the dice allow
  now and what each scores, dice missing per cell, lines one circle from completion).

numpy and :mod:`shelfie_env.game` only: the envs, the batched engine (whose compiled
twins are tested equal to these) and the learned bots all read it.
"""
