"""Stored games checked move by move: :func:`check_replay` replays one from its first state and
dice and lists what differs from the stored moves."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from shelfie_env.game.engine import Game
from shelfie_env.play.web.records import GameRow, MoveRow
from shelfie_env.play.web.sessions import rng_from_state, rng_state
from shelfie_env.play.web.store import GameStore
from shelfie_env.play.web.views import resigned_seat


def _plain(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples become lists), for comparing with stored values."""
    return json.loads(json.dumps(obj))


def check_replay(store: GameStore, game_id: str) -> list[str]:
    """Replay stored game ``game_id`` move by move; what does not match (empty: it all does).

    From the initial state and the dice generator's state at the start, every move must be
    legal for the seat on turn and give the stored state after it, with the same dice; the
    last state and generator state must be the game's current ones. Games stored without the
    generator's initial state (version 1 files) are checked without the dice (legal moves, same shelves).
    """
    row = store.get_game(game_id)
    if row is None:
        return ["no such game"]
    moves = store.moves(game_id)
    if [m.index for m in moves] != list(range(row.num_moves)):
        return [f"the moves are not numbered 0..{row.num_moves - 1}"]
    start = store.initial_rng(game_id)
    rng = rng_from_state(start) if start is not None else np.random.default_rng(0)
    game = Game.from_dict(row.initial_state, rng=rng)
    for m in moves:
        if start is None:  # no dice to compare: each move from the stored state before it
            game = Game.from_dict(game.to_dict(), rng=0)
        problem = _move_problem(game, m, dice=start is not None)
        if problem is not None:
            return [f"move {m.index}: {problem}"]
        if start is None:
            game = Game.from_dict(m.state, rng=0)
    dice = _dice_problems(row, game, rng) if start is not None else []
    return dice + _status_problems(row, game)


def _move_problem(game: Game, move: MoveRow, dice: bool) -> str | None:
    """What is wrong with playing ``move`` in ``game`` (which it steps), comparing the dice too if ``dice``."""
    if move.seat != game.current:
        return f"seat {move.seat} played but seat {game.current} was on turn"
    if move.action not in game.legal_actions():
        return f"action {move.action} is illegal ({game.why_illegal(move.action)})"
    game.step(move.action)
    after = _plain(game.to_dict())
    if dice and after != move.state:
        return "replaying it gives another state (dice or shelves) than the stored one"
    if not dice and after["boards"] != move.state["boards"]:
        return "replaying it gives other shelves than the stored ones"
    return None


def _dice_problems(row: GameRow, game: Game, rng: np.random.Generator) -> list[str]:
    """Whether the replayed game ends where the stored one is: its state and its dice generator."""
    problems = []
    if _plain(game.to_dict()) != row.state:
        problems.append("the game's current state is not the last move's")
    if _plain(rng_state(rng)) != _plain(row.rng):
        problems.append("the stored dice generator is not where the moves leave it")
    return problems


def _status_problems(row: GameRow, game: Game) -> list[str]:
    """Whether the stored status fits the moves (and the resignation, if a seat resigned)."""
    ended = "end" if game.over else "do not end"
    resigned = resigned_seat(row.seats) if isinstance(row.seats, list) else None
    if resigned is not None and (row.status != "over" or game.over):
        return [f"seat {resigned} resigned, but the game is stored as {row.status!r} after moves that {ended} it"]
    if resigned is None and (row.status == "over") != game.over:
        return [f"the game is stored as {row.status!r} but its moves {ended} it"]
    return []


__all__ = ["check_replay"]
