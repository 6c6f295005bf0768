"""Housekeeping: rated games left too long ended as the resignation of the person on turn, expired
games deleted and idle games let out of memory, every few minutes, in a thread of its own
(started and stopped with the service)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from shelfie_env.play.rated_games import could_rate
from shelfie_env.play.web.records import DamagedRowError
from shelfie_env.play.web.refusals import Refused
from shelfie_env.play.web.sessions import SessionTable
from shelfie_env.play.web.store import GameStore, StoreBusyError

log = logging.getLogger("shelfie_env.play.web")

HOUSEKEEPING_S = 600.0
"""How often left games are ended, expired games deleted and idle games leave memory (more often
with a short inactivity limit: a tenth of it, at least every second)."""
INACTIVE_S = 86400.0
"""Default: a game that can move a rating, with no move for this long, ends as the resignation of
the person on turn."""


@dataclass(frozen=True)
class Expiry:
    """How long games are kept: an unfinished game ``active_s`` seconds after its last move, a
    finished one ``over_s`` seconds (None: for ever). An unfinished game that can move a rating is
    ended instead, as the resignation of the person on turn, ``inactive_s`` seconds after its last
    move (or when it would expire, whichever comes first)."""

    active_s: float | None = None
    over_s: float | None = None
    inactive_s: float | None = None

    @property
    def left_s(self) -> float | None:
        """Seconds without a move after which a game that can move a rating is ended (None: never)."""
        limits = [s for s in (self.inactive_s, self.active_s) if s is not None]
        return min(limits) if limits else None


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
        leave: Callable[[str, int], bool] | None = None,
    ) -> None:
        """``busy(game_id)`` says whether a game's bots are due (such a game stays in memory);
        ``leave(game_id, num_moves)`` ends a game left after ``num_moves`` moves as the resignation
        of the person on turn (False when it did not)."""
        self.store = store
        self.sessions = sessions
        self.busy = busy
        self.expiry = expiry
        left_s = expiry.left_s
        self.every_s = every_s if left_s is None else min(every_s, max(1.0, left_s / 10))
        self.leave = leave
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self, expire_active_s: float | None, expire_over_s: float | None) -> int:
        """End the rated games left too long (:meth:`end_left`), delete games past their expiry (see
        :meth:`GameStore.expire`) and let idle sessions leave memory; return how many games were deleted."""
        now = time.time()
        limits = [s for s in (self.expiry.inactive_s, expire_active_s) if s is not None]
        if limits:
            self.end_left(now - min(limits))
        deleted = self.store.expire(
            None if expire_active_s is None else now - expire_active_s,
            None if expire_over_s is None else now - expire_over_s,
        )
        self.sessions.evict_idle(self.busy)
        if deleted:
            log.info("deleted %d expired game(s)", deleted)
        return deleted

    def end_left(self, before: float) -> int:
        """End every game that can move a rating (:func:`could_rate`) with no move since ``before``
        as the resignation of the person on turn (it is rated then); return how many were ended."""
        if self.leave is None:
            return 0
        ended = 0
        for game_id, num_moves in self.store.left_with_people(before):
            try:
                row = self.store.get_game(game_id)
                if row is None or row.status != "active" or not could_rate(row.seats, len(row.seats)):
                    continue
                ended += self.leave(game_id, num_moves)
            except (DamagedRowError, Refused) as exc:  # a damaged game, a locked database: next time
                log.warning("game %s was left but could not be ended: %s", game_id, exc)
        if ended:
            log.info("ended %d rated game(s) left without a move", ended)
        return ended

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


__all__ = ["HOUSEKEEPING_S", "INACTIVE_S", "KEEP_ALL", "Expiry", "Housekeeper"]
