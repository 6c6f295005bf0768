"""Housekeeping: expired games deleted and idle games let out of memory, every few minutes, in a
thread of its own (started and stopped with the service)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from shelfie_env.play.web.sessions import SessionTable
from shelfie_env.play.web.store import GameStore, StoreBusyError

log = logging.getLogger("shelfie_env.play.web")

HOUSEKEEPING_S = 600.0
"""How often expired games are deleted and idle games leave memory."""


@dataclass(frozen=True)
class Expiry:
    """How long games are kept: an unfinished game ``active_s`` seconds after its last move, a
    finished one ``over_s`` seconds (None: for ever)."""

    active_s: float | None = None
    over_s: float | None = None


KEEP_ALL = Expiry()
"""Games kept for ever."""


class Housekeeper:
    """Deletes expired games and lets idle sessions leave memory: once per :meth:`sweep`, and
    every ``every_s`` seconds (the first at once) between :meth:`start` and :meth:`stop`."""

    def __init__(
        self,
        store: GameStore,
        sessions: SessionTable,
        busy: Callable[[str], bool],
        expiry: Expiry = KEEP_ALL,
        every_s: float = HOUSEKEEPING_S,
    ) -> None:
        """``busy(game_id)`` says whether a game's bots are due (such a game stays in memory)."""
        self.store = store
        self.sessions = sessions
        self.busy = busy
        self.expiry = expiry
        self.every_s = every_s
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self, expire_active_s: float | None, expire_over_s: float | None) -> int:
        """Delete games past their expiry (see :meth:`GameStore.expire`) and let idle sessions
        leave memory; return how many games were deleted."""
        now = time.time()
        deleted = self.store.expire(
            None if expire_active_s is None else now - expire_active_s,
            None if expire_over_s is None else now - expire_over_s,
        )
        self.sessions.evict_idle(self.busy)
        if deleted:
            log.info("deleted %d expired game(s)", deleted)
        return deleted

    def start(self) -> None:
        """Sweep in a thread of its own until :meth:`stop` (further calls do nothing)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="shelfie-housekeeping", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sweeping (a sweep under way is finished first)."""
        self._stopping.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._sweep_logged()
            self._stopping.wait(self.every_s)

    def _sweep_logged(self) -> None:
        """One sweep with the configured expiry; its failure is logged (the next one tries again)."""
        try:
            self.sweep(self.expiry.active_s, self.expiry.over_s)
        except StoreBusyError as exc:  # a database locked elsewhere: next time
            log.warning("housekeeping postponed: %s", exc)
        except Exception:
            log.exception("housekeeping failed")


__all__ = ["HOUSEKEEPING_S", "KEEP_ALL", "Expiry", "Housekeeper"]
