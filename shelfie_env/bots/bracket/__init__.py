"""The ceiling bracket against ``greedy`` (docs/bracket.md): bots that know whom, or what dice, they play.

* ``greedy-br`` (:mod:`.best_response`): ``td``'s search with each turn's final placement re-ranked by
  simulating ``greedy``'s next turn exactly as ``greedy`` would play it (a best response from below).
* ``clairvoyant`` (:mod:`.clairvoyant`): reads the dice tape and searches the rest of the game
  against ``greedy`` (a bound from above).

Submodules are imported by :func:`shelfie_env.bots.make` on first use.
"""
