"""Golden playthrough: a whole seeded 2-player game written as text and diffed.

Regenerate after an intended rules or format change with either::

    python -m tests.test_golden --regen
    SHELFIE_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py

and review the diff of ``tests/data/golden_2p_seed7.txt`` before committing.
"""

from __future__ import annotations

import difflib
import os
import random
import sys
from pathlib import Path

from shelfie_env.game.actions import SYMBOLS, action_name
from shelfie_env.game.engine import Game

GOLDEN = Path(__file__).parent / "data" / "golden_2p_seed7.txt"
SEED = 7
FACES = SYMBOLS + ("joker",)


def choose(game: Game, rnd: random.Random) -> int:
    """The scripted policy: circle the legal item needing the most dice, else a uniform legal id."""
    legal = sorted(game.legal_actions())
    circles = [a for a in legal if 64 <= a <= 113]
    if circles:
        return max(circles, key=lambda a: ((a - 64) // 2 % 5, -a))
    return rnd.choice(legal)


def _dice(game: Game) -> str:
    return " ".join(f"[{FACES[d]}]" if s else FACES[d] for d, s in zip(game.dice, game.spent))


def _boards(game: Game) -> list[str]:
    n = game.num_players
    head = "  " + " " * 8 + "  ".join(f"P{p}   " for p in range(n))
    lines = [head]
    for r in range(5):
        cells = ["".join(".OX"[v] for v in game.board(p)[r]) for p in range(n)]
        lines.append(f"  {SYMBOLS[r]:<8}" + "  ".join(c + " " for c in cells))
    lines.append("  scores  " + "  ".join(f"{s:<6d}" for s in game.scores()))
    return lines


def playthrough(seed: int = SEED, num_players: int = 2) -> str:
    """The text of one whole game: every decision, the boards after each turn, the final scores."""
    game = Game.new(num_players, rng=seed)
    rnd = random.Random(seed)
    out = [
        (
            f"# My Shelfie dice game: {num_players} players, dice Game.new(rng={seed}), "
            f"policy tests.test_golden.choose with random.Random({seed})"
        ),
        "# cells: . free, O circled, X crossed; dice in [brackets] are spent",
        "",
    ]
    turn = 0
    decision = 0
    last_player = None
    while not game.over:
        if game.current != last_player or game.phase_name == "reroll" and game.rolls_left == 2:
            turn += 1
            out.append(f"turn {turn}: player {game.current}")
            last_player = game.current
        a = choose(game, rnd)
        decision += 1
        out.append(
            f"  {decision:4d} P{game.current} {game.phase_name:<6} rolls_left={game.rolls_left} "
            f"circles={game.circles} dice: {_dice(game)}  -> {action_name(a)}"
        )
        before = game.current
        triggered = game.end_triggered
        game.step(a)
        if game.end_triggered and not triggered:
            out.append("  ** end of game triggered")
        if game.over or game.current != before or game.phase_name == "reroll" and game.rolls_left == 2:
            out.extend(_boards(game))
            last_player = None
    scores = game.scores()
    best = max(scores)
    out.append("")
    out.append(f"game over after {decision} decisions")
    for p in range(num_players):
        bd = game.table.breakdown(game.circled[p])
        out.append(f"player {p}: score {scores[p]}  rows {bd['rows']}  columns {bd['cols']}")
    out.append("winner(s): " + ", ".join(f"player {p}" for p in range(num_players) if scores[p] == best))
    return "\n".join(out) + "\n"


def test_golden_playthrough_matches() -> None:
    text = playthrough()
    if os.environ.get("SHELFIE_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text)
    expected = GOLDEN.read_text()
    diff = "".join(
        difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "golden", "now", n=2)
    )
    assert text == expected, "playthrough differs from the golden file:\n" + diff[:4000]


def test_playthrough_is_deterministic_and_ends() -> None:
    text = playthrough(seed=11, num_players=3)
    assert text == playthrough(seed=11, num_players=3)
    assert "game over after" in text and "winner(s): player" in text


if __name__ == "__main__":
    if "--regen" in sys.argv[1:]:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(playthrough())
        print(f"wrote {GOLDEN}")
    else:
        sys.stdout.write(playthrough())
