#!/usr/bin/env bash
# Build the wheel, install it alone (core dependencies only) into a fresh venv outside the
# checkout, and check that `shelfie play`, `bots.make("ppo")` and `bots.make("td")` play the shipped learned bots.
set -euo pipefail
python=${1:-python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m pip wheel -q --no-deps -w "$work/dist" "$repo"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$work"/dist/shelfie_env-*.whl
cd "$work"
out=$(printf 'stop\n' | "$work/venv/bin/shelfie" play --seed 3 --no-color 2>&1 || true)
echo "$out" | grep -q "^td (player 2)" || { echo "wheel check: shelfie play did not seat the td bot:"; echo "$out" | head -20; exit 1; }
"$work/venv/bin/python" - <<'PY'
import sys
import numpy as np
from shelfie_env import bots
from shelfie_env.arena import play_game

for players in (2, 1):
    bot = bots.make("ppo", num_players=players)
    assert type(bot).__name__ == "PPOBot" and bot.num_players == players
    seats = [bot] + [bots.make("greedy")] * (players - 1)
    scores = play_game(seats, seed=5)
    print(f"wheel check: ppo ({bot.card['preset']}) played a {players}-player game: scores {scores}")
for players in (2, 3, 4):
    td = bots.make("td", num_players=players)
    assert type(td).__name__ == "ValueBot" and td.card["teacher"] == "none" and td.num_players == players
    scores = play_game([td] + [bots.make("greedy")] * (players - 1), seed=5)
    print(f"wheel check: td ({td.card['preset']}) played a {players}-player game: scores {scores}")
heavy = [m for m in ("torch", "stable_baselines3", "sb3_contrib", "numba", "fastapi") if m in sys.modules]
assert not heavy, heavy
assert "site-packages" in bots.__file__, bots.__file__
PY
echo "wheel check: ok (core install, no torch)"
