"""Shared helpers for the rules tests: scripted dice and a readable state builder.

Boards are written as five strings of five characters, one per row (row r is
symbol r: plant, game, book, trophy, cat), ``.`` free, ``O`` circled, ``X``
crossed::

    board("OOO..", ".....", ".....", ".....", "XXXXX")
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from shelfie_env.game.engine import Game


def _import_anyio_now() -> None:
    """Import every lazily loaded part of anyio here, in the main thread.

    anyio loads its API on first use and parses its own source with ``ast`` to do so
    (and pytest rewrites anyio's modules, since anyio ships a pytest plugin). The web
    server's worker threads would otherwise do that while another thread parses, which
    CPython 3.11 can fail with ``SystemError: AST constructor recursion depth mismatch``.
    """
    import types

    try:
        import anyio
    except ImportError:
        return
    seen: set[str] = set()

    def walk(module: types.ModuleType) -> None:
        seen.add(module.__name__)
        for name in dir(module):
            value = getattr(module, name, None)
            if isinstance(value, types.ModuleType) and value.__name__.startswith("anyio") and value.__name__ not in seen:
                walk(value)

    walk(anyio)
    for sub in ("abc", "from_thread", "lowlevel", "streams", "to_thread", "to_process", "to_interpreter",
                "_backends._asyncio"):
        try:
            walk(__import__(f"anyio.{sub}", fromlist=["_"]))
        except ImportError:
            pass


_import_anyio_now()


@pytest.fixture(autouse=True)
def stop_game_services() -> Iterator[None]:
    """Stop, when a test ends, every web games service it started: its bot threads and its
    database (a test's servers would otherwise play on in the background of later tests)."""
    import sys

    module = sys.modules.get("shelfie_env.play.web.service")
    if module is None:  # no test module loaded the web server
        yield
        return
    started: list[Any] = []
    real = module.GameService.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        started.append(self)

    with pytest.MonkeyPatch.context() as patch:  # not undone by a test's own monkeypatch.undo()
        patch.setattr(module.GameService, "__init__", init)
        yield
    for service in started:
        service.close()
        service.store.close()


PLANT, GAME, BOOK, TROPHY, CAT, JOKER = range(6)
DEFAULT_POINTS = [[1, 2, 3, 5, 8] for _ in range(5)]
_CELL = {".": 0, "O": 1, "X": 2}


class ScriptedDice:
    """A dice source that hands out chosen faces in order.

    ``integers(low, high, size)`` returns the next ``size`` faces of the
    script and records each call in ``calls``; running out of faces is an
    error so a test notices an unexpected roll.
    """

    def __init__(self, faces: Iterable[int] = ()) -> None:
        self.faces = list(faces)
        self.calls: list[list[int]] = []

    def push(self, *faces: int) -> None:
        """Append faces to the script."""
        self.faces.extend(faces)

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        assert (low, high) == (0, 6), f"dice are rolled as integers(0, 6), got ({low}, {high})"
        if size > len(self.faces):
            raise AssertionError(f"engine rolled {size} dice but only {len(self.faces)} faces are scripted")
        out, self.faces = self.faces[:size], self.faces[size:]
        self.calls.append(list(out))
        return np.array(out, dtype=np.int64)

    @property
    def remaining(self) -> int:
        return len(self.faces)


class RecordingDice:
    """Wraps a real generator and records the faces of every roll (for reference replays)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls: list[list[int]] = []

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        out = self.rng.integers(low, high, size=size)
        self.calls.append([int(v) for v in out])
        return out


def board(*rows: str) -> list[list[int]]:
    """A 5x5 board from row strings (``.`` free, ``O`` circled, ``X`` crossed).

    Missing rows and the missing end of a short row are free.
    """
    rows_l = [r.ljust(5, ".") for r in rows] + ["....."] * (5 - len(rows))
    assert len(rows_l) == 5 and all(len(r) == 5 for r in rows_l), rows
    return [[_CELL[ch] for ch in r] for r in rows_l]


def empty_board() -> list[list[int]]:
    return board()


# The top-level keys of the SPEC §6 state dict.
SPEC_KEYS = {
    "num_players",
    "points",
    "boards",
    "current_player",
    "phase",
    "dice",
    "spent",
    "rolls_left",
    "circles_this_turn",
    "end_triggered",
}


def make_state(
    *,
    boards: Sequence[list[list[int]]] | None = None,
    num_players: int | None = None,
    current: int = 0,
    phase: str = "circle",
    dice: Sequence[int] = (0, 1, 2, 3, 4, 5),
    spent: Sequence[bool] | None = None,
    rolls_left: int = 0,
    circles: int = 0,
    end_triggered: bool | None = None,
    points: Sequence[Sequence[int]] | None = None,
) -> dict[str, Any]:
    """A SPEC §6 state dict with readable defaults.

    ``end_triggered`` defaults to what the boards imply (a player with two
    rows without a free cell).
    """
    if boards is None:
        boards = [empty_board() for _ in range(num_players or 2)]
    n = num_players if num_players is not None else len(boards)
    if end_triggered is None:
        end_triggered = any(sum(all(v != 0 for v in row) for row in b) >= 2 for b in boards)
    return {
        "num_players": n,
        "points": copy.deepcopy(list(points) if points is not None else DEFAULT_POINTS),
        "boards": copy.deepcopy([list(b) for b in boards]),
        "current_player": current,
        "phase": phase,
        "dice": sorted(dice),
        "spent": list(spent) if spent is not None else [False] * 6,
        "rolls_left": rolls_left,
        "circles_this_turn": circles,
        "end_triggered": end_triggered,
    }


def make_game(*, rolls: Iterable[int] = (), **kw: Any) -> Game:
    """``Game.from_dict(make_state(**kw))`` with scripted dice ``rolls`` for later rolls."""
    return Game.from_dict(make_state(**kw), rng=ScriptedDice(rolls))


def grid(game: Game, player: int) -> list[str]:
    """A player's board as row strings (inverse of :func:`board`)."""
    return ["".join(".OX"[v] for v in row) for row in game.board(player)]


@pytest.fixture
def scripted_dice() -> ScriptedDice:
    """An empty :class:`ScriptedDice`; ``push`` faces before the engine rolls."""
    return ScriptedDice()


def spec_state(**overrides: Any) -> dict[str, Any]:
    """A circle-phase SPEC §6 state (five cats and a joker, empty shelves) with ``overrides`` applied."""
    empty = [[0] * 5 for _ in range(5)]
    s: dict[str, Any] = {
        "num_players": 2,
        "points": [[1, 2, 3, 5, 8]] * 5,
        "boards": [empty, empty],
        "current_player": 0,
        "phase": "circle",
        "dice": [4, 4, 4, 4, 4, 5],
        "spent": [False] * 6,
        "rolls_left": 0,
        "circles_this_turn": 0,
        "end_triggered": False,
    }
    s.update(overrides)
    return s


def random_positions(n: int, seed: int, players: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``n`` observations (mover's seat) and legal masks from random-play games, for policy tests."""
    from shelfie_env.observation.vector import encode

    rng = np.random.default_rng(seed)
    game, obs, masks = Game.new(players, rng=seed), [], []
    while len(obs) < n:
        if game.over:
            game = Game.new(players, rng=int(rng.integers(1 << 30)))
        obs.append(encode(game, game.current))
        masks.append(game.legal_mask())
        game.step(int(rng.choice(np.flatnonzero(masks[-1]))))
    return np.array(obs), np.array(masks)


def tiny_ppo(policy: Any, **policy_kwargs: Any) -> Any:
    """A small untrained 2-player ``MaskablePPO`` with ``policy`` (hidden 32 x 32), for policy tests."""
    from sb3_contrib import MaskablePPO

    from shelfie_env.train.maskable_ppo.selfplay import SelfPlayEnv

    kwargs = {"net_arch": [32, 32], **policy_kwargs}
    return MaskablePPO(policy, SelfPlayEnv(players=2), policy_kwargs=kwargs, seed=0, device="cpu")


def assert_plays_legally(bot: Any, seed: int, via_state: bool = True) -> None:
    """Play one 2-player game with ``bot`` in every seat, checking each action against the legal mask."""
    game = Game.new(2, rng=seed)
    while not game.over:
        action = bot.act(game.to_dict()) if via_state else bot.act_game(game)
        assert game.legal_mask()[action], f"illegal action {action}"
        game.step(action)
