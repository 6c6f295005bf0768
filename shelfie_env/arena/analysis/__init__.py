"""Analysis: how good a decision, a bot or a game was, measured against rollout-valued positions.

* :mod:`.positions`: decision positions drawn from games of mixed bots, every legal action valued
  by rollouts (:func:`shelfie_env.bots.rollout.rollouts.rollout_values`), shipped as package data;
* :mod:`.error_rates`: a bot's error rate on them (``shelfie errors``, :func:`~.error_rates.error_rates`);
* :mod:`.review`: a finished game's review, the luck of every roll and the regret of every
  decision (``shelfie replay --review`` and the web's review page).
"""
