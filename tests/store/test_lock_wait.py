"""A store write that finds the database locked by another process (a long import) waits for
it, saying so once, instead of failing after SQLite's busy timeout (user audit item 1)."""

import sqlite3
import threading

from conftest import vector_add_campaign
from perfport import Config, Measurement, Outcome
from perfport.store import CampaignStatus, Store
from perfport.store import connection as store_connection


def _hold_lock(db, release: threading.Event, held: threading.Event) -> threading.Thread:
    def hold() -> None:
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # as an import's one long transaction does
        held.set()
        release.wait()
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    return thread


def test_a_write_waits_for_another_process_lock_and_says_so_once(db, cpu, monkeypatch):
    monkeypatch.setattr(store_connection, "LOCK_NOTICE_S", 0.05)  # SQLite's wait per attempt
    told: list[str] = []
    monkeypatch.setattr(store_connection.WaitingConnection, "notice", staticmethod(told.append))
    with Store(db) as store:
        _, c = vector_add_campaign(store, cpu)
        release, held = threading.Event(), threading.Event()
        holder = _hold_lock(db, release, held)
        # Let the write wait several attempts past the busy timeout, then free the lock.
        threading.Timer(0.4, release.set).start()
        m = Measurement(Config.of(wg=64), Outcome.OK, times_ms=(1.0,))
        assert store.record(c, m)  # BEGIN IMMEDIATE waited
        holder.join()
        held.clear()
        holder = _hold_lock(db, release := threading.Event(), held)
        threading.Timer(0.3, release.set).start()
        store.set_status(c, CampaignStatus.BUDGET)  # an autocommit write waited too
        holder.join()
        assert store.campaign("c1").status is CampaignStatus.BUDGET
        assert len(store.measurements(c)) == 1
    assert len(told) == 2 and all("locked by another process" in t for t in told)
    assert "waiting" in told[0]
