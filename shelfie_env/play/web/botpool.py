"""The bots' moves, played off the request path.

:class:`BotPool` keeps a queue of games whose seat on turn is a bot and a few
worker threads that take one game at a time and play its bots' moves (through
a callback of the service, which stores each move before the next). A game is
in the queue at most once and handled by one worker at a time; games with a
person at the table come before games of bots only.

A worker asks for each move through :meth:`BotPool.compute`, which plays it
with the game's own bot instance (a shallow copy of one built bot, so the model
is shared but not the state a bot keeps between the decisions of a turn): no
two games share a bot instance or wait on one lock, and a bot never mistakes
another game's turn for its own. The moves are computed in the worker thread,
or, with ``processes > 0``, in worker processes of lower scheduling priority
(``os.nice``), so bot search never competes with the request path for the
interpreter lock; every move of a game goes to the same process (the one its
id hashes to), where its instance lives. Bots registered by spec
(``shelfie serve --bot NAME=SPEC``, :func:`~shelfie_env.bots.spec.register_spec`)
are registered in every worker process too and play there; other bots
registered at run time (``shelfie_env.bots.register``) exist only in the server
process and play in a worker thread.
"""

from __future__ import annotations

import concurrent.futures
import copy
import heapq
import itertools
import logging
import multiprocessing
import os
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from shelfie_env import bots as bots_module
from shelfie_env.bots.spec import registered_specs
from shelfie_env.game.engine import Game

log = logging.getLogger("shelfie_env.play.web")

BotBuilder = Callable[[str, int], Any]
PlayGame = Callable[[str], "float | None"]
"""Plays the due bots of a game; returns None when done, else seconds until it should be tried again."""

GAME_BOTS = 1024
"""Per-game bot instances kept (least recently used first out) per process."""

_REMOTE_BOTS: dict[tuple[str, int], Any] = {}
"""The built bots of one worker process (each game plays a copy)."""
_REMOTE_GAMES: OrderedDict[tuple[str, int, str, int], Any] = OrderedDict()
"""The per-game bot instances of one worker process."""


def game_instance(
    games: OrderedDict[tuple[str, int, str, int], Any],
    key: tuple[str, int, str, int],
    template: Callable[[], Any],
) -> Any:
    """The bot instance of ``key`` = (game id, seat, bot name, players): a shallow copy of
    ``template()`` made on first use, kept in ``games`` (at most :data:`GAME_BOTS`)."""
    bot = games.get(key)
    if bot is None:
        bot = games[key] = copy.copy(template())
        while len(games) > GAME_BOTS:
            games.popitem(last=False)
    else:
        games.move_to_end(key)
    return bot


def build(name: str, num_players: int, make: Callable[..., Any] = bots_module.make) -> Any:
    """Build bot ``name`` with ``make`` for a ``num_players``-player table (the model for that
    size, when it has one); a model trained for another size is refused."""
    import inspect

    if "num_players" not in inspect.signature(bots_module.factory(name)).parameters:
        return make(name)
    bot = make(name, num_players=num_players)
    trained_for = getattr(bot, "num_players", num_players)
    if trained_for != num_players:
        raise ValueError(f"its model is for {trained_for}-player games")
    return bot


def choose(bot: Any, state: dict[str, Any]) -> int:
    """The bot's action in ``state``; it sees a game with dice of its own, so it cannot draw the game's dice."""
    return int(bots_module.act_on_game(bot, Game.from_dict(state, rng=np.random.default_rng(0))))


def _exit_with_parent(parent: int) -> None:
    """End this worker process once the server that started it is gone (even after ``kill -9``)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _process_init(
    server: int, nice: int, preload: Sequence[tuple[str, int]], specs: dict[str, str] | None = None
) -> None:
    """Set up a worker process of server process ``server``: lower priority, register the
    server's bots ``specs`` (name -> spec), then build the bots it will likely be asked for."""
    threading.Thread(target=_exit_with_parent, args=(server,), daemon=True).start()
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:
            pass
    from shelfie_env.bots.spec import register_spec

    for name, spec in (specs or {}).items():
        try:
            register_spec(name, spec)
        except (ValueError, OSError) as exc:  # the server checked it; a file removed since fails here
            log.warning("bot %s (%s) cannot be registered in a worker process: %s", name, spec, exc)
    for name, num_players in preload:
        try:
            _REMOTE_BOTS[(name, num_players)] = build(name, num_players)
        except Exception as exc:  # not fatal: the move that needs it reports the error
            log.warning(
                "bot %s for %d players cannot be built in a worker process: %s", name, num_players, exc
            )


def _remote_template(name: str, num_players: int) -> Any:
    bot = _REMOTE_BOTS.get((name, num_players))
    if bot is None:
        bot = _REMOTE_BOTS[(name, num_players)] = build(name, num_players)
    return bot


def _process_act(game_id: str, seat: int, name: str, num_players: int, state: dict[str, Any]) -> int:
    key = (game_id, seat, name, num_players)
    bot = game_instance(_REMOTE_GAMES, key, lambda: _remote_template(name, num_players))
    return choose(bot, state)


STOP_GRACE_S = 2.0
"""How long :meth:`BotPool.stop` lets a worker process finish its move before ending it."""


def _shut_down(executor: concurrent.futures.ProcessPoolExecutor) -> tuple[list[Any], Any]:
    """Shut ``executor`` down without waiting, cancelling its queued moves, and return its worker
    processes and manager thread (``shutdown`` drops its own references to them)."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    return processes, manager


def _close_executor(parts: tuple[list[Any], Any], deadline: float) -> None:
    """Wait for a shut-down executor's worker processes (``parts`` from :func:`_shut_down`) until
    ``deadline``, end those still busy, then join its manager thread: the interpreter's exit hook
    must not wake a manager that is closing its pipes, and the server exits at once."""
    processes, manager = parts
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.terminate()
            process.join(5.0)
    if manager is not None:
        manager.join(30.0)


class BotPool:
    """A queue of games with a bot on turn, and ``workers`` threads playing their moves."""

    def __init__(
        self,
        play: PlayGame,
        workers: int = 2,
        processes: int = 0,
        build_bot: BotBuilder = build,
        preload: Sequence[tuple[str, int]] = (),
        move_timeout: float = 60.0,
        nice: int = 10,
    ) -> None:
        """``play(game_id)`` plays a game's due bots (it calls :meth:`compute` for each move);
        ``processes`` > 0 computes the moves of the shipped bots in that many worker processes
        (each building the ``preload`` bots); ``move_timeout`` bounds one move there. Queued games
        are played once :meth:`start` has started the workers; :meth:`compute` works before it."""
        self._play = play
        self._build = build_bot
        self._local = threading.local()
        self._cond = threading.Condition()
        self._heaps: tuple[list[tuple[float, int, str]], ...] = ([], [])
        """Per priority (0: a person at the table, 1: bots only): (due, seq, game id)."""
        self._queued: dict[str, tuple[int, float]] = {}
        """Game id -> (seq, due) of its live heap entry (older entries are skipped)."""
        self._running: set[str] = set()
        self._again: dict[str, tuple[float, int]] = {}
        """Games scheduled while a worker plays them: (due, priority), queued when it is done."""
        self._seq = itertools.count()
        self._stopped = False
        self._busy = 0
        self.move_timeout = move_timeout
        self._nice = nice
        self._preload = list(preload)
        self._processes = processes
        self._specs = registered_specs()
        """The bots registered by spec when the pool started; the worker processes register them too."""
        self._templates: dict[tuple[str, int], Any] = {}
        self._games: OrderedDict[tuple[str, int, str, int], Any] = OrderedDict()
        self._games_lock = threading.Lock()
        self._executors: list[concurrent.futures.ProcessPoolExecutor | None] = [None] * processes
        """One executor (of one process) per worker process; None: started on its first move."""
        self._executor_lock = threading.Lock()
        self._workers = workers
        self._started = False
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start the worker threads and the worker processes (which build their ``preload`` bots
        at once); later calls, and calls after :meth:`stop`, do nothing."""
        with self._cond:
            if self._started or self._stopped:
                return
            self._started = True
        with self._executor_lock:
            for index, executor in enumerate(self._executors):
                if executor is None:
                    self._executors[index] = executor = self._new_executor()
                    executor.submit(os.getpid)  # starts its process, which builds its bots
        self._threads = [
            threading.Thread(target=self._work, name=f"shelfie-bots-{i}", daemon=True) for i in range(self._workers)
        ]
        for t in self._threads:
            t.start()

    # ------------------------------------------------------------ queue
    def schedule(self, game_id: str, delay: float = 0.0, priority: int = 0) -> None:
        """Have the bots of ``game_id`` play in ``delay`` seconds (priority 0 before 1)."""
        due = time.monotonic() + max(0.0, delay)
        with self._cond:
            if self._stopped:
                return
            if game_id in self._running:
                known = self._again.get(game_id)
                if known is None or due < known[0]:
                    self._again[game_id] = (due, priority)
                return
            known = self._queued.get(game_id)
            if known is not None and known[1] <= due:
                return
            seq = next(self._seq)
            self._queued[game_id] = (seq, due)
            heapq.heappush(self._heaps[1 if priority else 0], (due, seq, game_id))
            self._cond.notify()

    def queued(self, game_id: str) -> bool:
        """Whether ``game_id`` waits in the queue (not counting a worker playing it now)."""
        with self._cond:
            return game_id in self._queued

    def pending(self, game_id: str) -> bool:
        """Whether ``game_id`` is queued or being played."""
        with self._cond:
            return game_id in self._queued or game_id in self._running

    def idle(self) -> bool:
        """No game is queued to play now and no worker is busy."""
        now = time.monotonic()
        with self._cond:
            return (
                self._busy == 0
                and not self._again
                and not any(
                    due <= now and self._queued.get(gid, (None,))[0] == seq
                    for heap in self._heaps
                    for due, seq, gid in heap
                )
            )

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until :meth:`idle` (or ``timeout``); True if idle."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.idle():
                return True
            time.sleep(0.005)
        return self.idle()

    def stop(self) -> None:
        """Stop the workers (a move being computed is finished first) and the worker processes."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout=10)
        with self._executor_lock:
            executors, self._executors = self._executors, []
        parts = [_shut_down(e) for e in executors if e is not None]
        deadline = time.monotonic() + STOP_GRACE_S
        for part in parts:
            _close_executor(part, deadline)

    def _next(self) -> str | None:
        with self._cond:
            while not self._stopped:
                now = time.monotonic()
                wait: float | None = None
                for heap in self._heaps:
                    while heap and self._queued.get(heap[0][2], (None,))[0] != heap[0][1]:
                        heapq.heappop(heap)  # superseded by a later schedule
                    if not heap:
                        continue
                    due, _, game_id = heap[0]
                    if due <= now:
                        heapq.heappop(heap)
                        del self._queued[game_id]
                        self._running.add(game_id)
                        self._busy += 1
                        return game_id
                    wait = due - now if wait is None else min(wait, due - now)
                self._cond.wait(timeout=1.0 if wait is None else min(max(wait, 0.001), 1.0))
            return None

    def _work(self) -> None:
        while True:
            game_id = self._next()
            if game_id is None:
                return
            retry: float | None = None
            try:
                retry = self._play(game_id)
            except Exception:
                log.exception("the bots of game %s could not be played", game_id)
                retry = 2.0
            finally:
                with self._cond:
                    self._running.discard(game_id)
                    self._busy -= 1
                    again = self._again.pop(game_id, None)
                    self._cond.notify_all()
            if again is not None:
                self.schedule(game_id, delay=again[0] - time.monotonic(), priority=again[1])
            if retry is not None:
                self.schedule(game_id, delay=retry)

    # ------------------------------------------------------------ moves
    def compute(self, game_id: str, seat: int, name: str, num_players: int, state: dict[str, Any]) -> int:
        """The move of bot ``name`` at seat ``seat`` of game ``game_id`` in ``state``, by the game's own
        instance (here, or in the worker process the game belongs to)."""
        if self._processes > 0 and self._plays_remotely(name):
            return self._compute_remote(game_id, seat, name, num_players, state)
        key = (game_id, seat, name, num_players)
        with self._games_lock:
            bot = self._games.get(key)
            if bot is not None:
                self._games.move_to_end(key)
        if bot is None:
            template = self._template(name, num_players)  # a slow build holds up no other game
            with self._games_lock:
                bot = self._games.setdefault(key, copy.copy(template))
                while len(self._games) > GAME_BOTS:
                    self._games.popitem(last=False)
        return choose(bot, state)

    def _plays_remotely(self, name: str) -> bool:
        """Whether the worker processes know bot ``name``: a shipped bot, or one registered by spec."""
        if name in self._specs:
            return self._specs[name] == registered_specs().get(name)
        return name in bots_module._BUILTIN and name not in bots_module._REGISTRY

    def _template(self, name: str, num_players: int) -> Any:
        """The built bot ``name`` for ``num_players`` (built once per pool; games play copies)."""
        with self._games_lock:
            bot = self._templates.get((name, num_players))
        if bot is None:
            bot = self._build(name, num_players)  # outside the lock
            with self._games_lock:
                bot = self._templates.setdefault((name, num_players), bot)
        return bot

    def _new_executor(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_process_init,
            initargs=(os.getpid(), self._nice, self._preload, self._specs),
        )

    def _compute_remote(
        self, game_id: str, seat: int, name: str, num_players: int, state: dict[str, Any]
    ) -> int:
        index = zlib.crc32(game_id.encode()) % self._processes
        with self._executor_lock:
            if not self._executors:
                raise RuntimeError("the bot pool is stopped")
            executor = self._executors[index]
            if executor is None:
                executor = self._executors[index] = self._new_executor()
        future = executor.submit(_process_act, game_id, seat, name, num_players, state)
        try:
            return int(future.result(timeout=self.move_timeout))
        except concurrent.futures.process.BrokenProcessPool:
            with self._executor_lock:  # the worker process died: a fresh one takes the next moves
                if self._executors and self._executors[index] is executor:
                    self._executors[index] = None
            _close_executor(_shut_down(executor), time.monotonic())
            raise
