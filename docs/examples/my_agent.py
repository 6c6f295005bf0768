"""An agent trained elsewhere, rated on a benchmark task by ``shelfie bench rate`` (docs/benchmark.md).

    PYTHONPATH=docs/examples .venv/bin/shelfie bench rate --task field-3p --agent my_agent:MyAgent \\
        --name my_agent --steps 1M --out artifacts/bench.json
    .venv/bin/shelfie bench report artifacts/bench.json
"""

from __future__ import annotations

from typing import Any

from shelfie_env.bots import make


class MyAgent:
    """Your policy behind ``act(state) -> action id`` (the state dict of docs/rules.md). This stand-in plays
    ``greedy``'s move whenever the game offers more than one action, and the only one otherwise."""

    def __init__(self) -> None:
        self.policy = make("greedy")  # load your network here

    def act(self, state: dict[str, Any]) -> int:
        return int(self.policy.act(state))
