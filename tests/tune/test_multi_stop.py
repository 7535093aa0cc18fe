"""Stopping a many-device run: Ctrl-C ends every device's session (exit 130, interrupted),
kill -9 of the driver loses nothing stored, and a rerun resumes with nothing measured twice;
on local worker processes and on a local Dask cluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perfport.store import Store

SLOW_TRIALS = ["--problem", "n=1048576", "--repeats", "200", "--strategy", "brute_force"]
SUBS = ["--device", "opencl:0:0.0", "--device", "opencl:0:0.1"]


def _count(db: Path) -> tuple[int, int]:
    """(results, distinct configurations) stored; 0s before the database exists."""
    if not db.exists():
        return 0, 0
    with Store(db) as store:
        rows = [r["config_id"] for r in store.query("SELECT config_id FROM results")]
    return len(rows), len(set(rows))


def _start(db: Path, extra: list[str]) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "perfport", "tune", "vector_add", *SLOW_TRIALS, *SUBS,
           "--db", str(db), "--json", *extra]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _when_stored(db: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while _count(db)[0] < n:
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--cluster", "local"]], ids=["local", "dask"])
def test_interrupt_kill_and_resume(tmp_path: Path, extra: list[str]) -> None:
    db = tmp_path / "stop.db"
    proc = _start(db, extra)
    _when_stored(db, 2, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    (campaign,) = json.loads(out)["campaigns"]
    assert campaign["status"] == "interrupted"
    stored, distinct = _count(db)
    assert stored == distinct == campaign["measured"] < 11

    proc = _start(db, extra)
    _when_stored(db, stored + 2, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    killed_at = _count(db)
    assert killed_at[0] == killed_at[1] >= stored + 2

    proc = _start(db, extra)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    (campaign,) = json.loads(out)["campaigns"]
    assert campaign["status"] == "complete" and campaign["measured"] == 11
    assert campaign["measured_this_session"] == 11 - killed_at[0]
    assert _count(db) == (11, 11)


def test_a_second_ctrl_c_leaves_a_trial_in_flight_that_never_ends(monkeypatch):
    """With --cluster local the first Ctrl-C killed the Dask workers too: the driver waited for
    their trials for good, and took no second Ctrl-C."""
    import threading

    from perfport.tune import multi

    never = threading.Event()
    monkeypatch.setattr(multi, "_session", lambda *args: never.wait())
    run = type("Run", (), {"stop": threading.Event()})()
    slot = type("Slot", (), {"label": "a"})()
    kind = type("Kind", (), {"slots": [slot], "statuses": []})()
    board = type("Board", (), {"stream": sys.stderr, "lane": lambda self, label: None})()
    for delay in (0.3, 0.6):  # the first asks to stop; the second leaves the trial
        threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    multi._run_sessions(None, run, [kind], board, [])
    assert run.stop.is_set() and kind.statuses == [multi.CampaignStatus.INTERRUPTED]
    assert not never.is_set() and time.monotonic() - started < 5
    never.set()
