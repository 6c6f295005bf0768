"""Named deal sets: which dice every evaluation is dealt.

A *deal* is the dice seed of one game: with common dice
(:class:`~shelfie_env.game.dice.DiceTape`) deal ``d`` gives every seat the
same faces at the same turn and roll, whoever plays. Deals come in two named
sets so that no model is reported on the dice it was chosen on:

* ``selection``: dice seeds ``10_000_000 + i``. Training's periodic
  evaluations, checkpoint choice, hyper-parameter and recipe choice use these.
* ``test``: dice seeds ``30_000_000 + i``. Every number reported in the README
  and ``docs/`` comes from these; nothing is ever selected on them.

An integer ``N`` instead of a name deals seeds ``N + i`` (for ad-hoc runs).
Game ``i`` of an evaluation gets deal ``i`` of its set.
"""

from __future__ import annotations

DEAL_SETS: dict[str, int] = {"selection": 10_000_000, "test": 30_000_000}
"""First dice seed of each named deal set."""


def deal_start(deals: str | int) -> int:
    """The first dice seed of ``deals``: a name of :data:`DEAL_SETS` or a non-negative integer seed."""
    if isinstance(deals, str):
        if deals in DEAL_SETS:
            return DEAL_SETS[deals]
        try:
            deals = int(deals)
        except ValueError:
            raise ValueError(
                f"deals must be {' or '.join(map(repr, DEAL_SETS))} or a non-negative integer seed, got {deals!r}"
            ) from None
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 0:
        raise ValueError(
            f"deals must be {' or '.join(map(repr, DEAL_SETS))} or a non-negative integer seed, got {deals!r}"
        )
    return deals


def deal_seeds(deals: str | int, count: int) -> list[int]:
    """The dice seeds of the first ``count`` deals of ``deals``."""
    start = deal_start(deals)
    return list(range(start, start + count))


def deals_label(deals: str | int) -> str:
    """How a report names ``deals``: the set's name, or ``seed N``."""
    return deals if isinstance(deals, str) and deals in DEAL_SETS else f"seed {deal_start(deals)}"
