"""A writer's claims on a campaign's configurations, kept alive while its session runs.

Writers of one campaign (``perfport tune`` processes with the same key) claim a configuration
in the store before measuring it. A claim lapses ``lease_s`` seconds after it was last
renewed; a thread renews this writer's claims well before that, so only a writer that died
(kill -9, a lost machine) loses them, and the others take its configurations over.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field

from perfport._core import PerfportError
from perfport.store import Campaign, Store
from perfport.store.writers import writer_id

# Long enough that a stalled file system does not lose live claims, short enough that a
# killed writer's configurations come back within a minute.
LEASE_S = 60.0


@dataclass
class Lease:
    """Renews ``writer``'s claims in ``campaign`` every quarter lease, from a thread with its
    own connection (an SQLite connection belongs to one thread), a twin of ``store``'s. Use as
    a context manager."""

    store: Store
    campaign: Campaign
    writer: str = field(default_factory=writer_id)
    lease_s: float = LEASE_S
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def __enter__(self) -> Lease:
        self._thread = threading.Thread(target=self._renew, name="perfport-lease", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _renew(self) -> None:
        try:
            # Not a waiting connection: stopping the lease must not wait behind another
            # process's long transaction (an import); a renewal that finds the database locked
            # is tried again next time, and the claims outlive a few missed renewals.
            with self.store.twin(lock_timeout_s=min(1.0, self.lease_s / 8)) as store:
                while not self._stop.wait(self.lease_s / 4):
                    try:
                        store.renew_claims(self.campaign, self.writer, self.lease_s)
                    except sqlite3.OperationalError as exc:
                        if "locked" not in str(exc):
                            raise
        except (PerfportError, sqlite3.Error):
            # The session's own connection reports a broken store; here the only cost is
            # that this writer's claims lapse and another writer may measure them too.
            return
