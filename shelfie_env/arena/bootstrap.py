"""rliable for the reports: the library or a message saying how to install it, and its bootstrap seeded.

Shared by the seed aggregate (:mod:`shelfie_env.arena.aggregate`) and the task suite's report
(:mod:`shelfie_env.arena.suite_report`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np


class ReportError(RuntimeError):
    """The report cannot be made (nothing to aggregate, rliable missing or broken)."""


def rliable() -> tuple[Any, Any]:
    """``(rliable.library, rliable.metrics)``, or a :class:`ReportError` saying how to install them."""
    try:
        from rliable import library, metrics
    except ImportError as exc:
        raise ReportError(
            f"the report needs rliable ({exc}): pip install 'shelfie-env[train]' (or pip install rliable==1.2)"
        ) from None
    except TypeError as exc:  # arch < 8 (what rliable 1.2 allows) fails on import under pandas >= 3
        raise ReportError(
            f"rliable could not be imported ({exc}); rliable 1.2 needs arch < 8, which needs pandas < 3: "
            "pip install 'pandas<3'"
        ) from None
    return library, metrics


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """NumPy's global random state seeded with ``seed``, restored afterwards: rliable 1.2's stratified
    bootstrap draws its resamples from ``np.random`` whatever ``random_state`` it is given."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)
