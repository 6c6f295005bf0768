"""OpenSkill (Plackett-Luce) ratings of a field of bots from arena game records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def rate(specs: Sequence[str], records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenSkill (Plackett-Luce) ratings from the games in order; higher score ranks higher."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    r = [model.rating(name=s) for s in specs]
    for rec in records:
        seats = rec["seats"]
        new = model.rate([[r[b]] for b in seats], scores=list(rec["scores"]))
        for b, team in zip(seats, new):
            r[b] = team[0]
    table = [{"bot": s, "mu": x.mu, "sigma": x.sigma, "ordinal": x.ordinal()} for s, x in zip(specs, r)]
    return sorted(table, key=lambda t: -t["ordinal"])
