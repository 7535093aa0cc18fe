"""kill -9 of the driver or of a device's worker process of a two-device campaign, at ten
random (seeded) moments, each followed by a rerun (issue 28, goals): nothing stored is lost,
no configuration is measured again once its result is stored, and a killed worker's trial is
measured again rather than stored as ``crashed``."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

# 40 configurations of stencil by brute force, split between two PoCL sub-devices; no
# re-timing at the end (--confirm 0): it times the winners again on purpose.
TUNE = [sys.executable, "-m", "perfport", "tune", "stencil", "--problem", "width=256",
        "height=256", "--strategy", "brute_force", "--budget", "40", "--repeats", "100",
        "--confirm", "0",
        "--device", "opencl:0:0.0", "--device", "opencl:0:0.1", "--json"]  # fmt: skip
KILLS = 10

# Every attempt to store a result, kept by the database itself: INSERT OR IGNORE hides a
# second result of one configuration from the results table, not from a BEFORE trigger.
ATTEMPTS = """
CREATE TABLE IF NOT EXISTS attempts (campaign_id INTEGER, config_id INTEGER, outcome TEXT);
CREATE TRIGGER IF NOT EXISTS attempt BEFORE INSERT ON results BEGIN
    INSERT INTO attempts VALUES (new.campaign_id, new.config_id, new.outcome);
END;
"""


def _read(db: Path, sql: str) -> list[tuple]:
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:  # no schema yet
        return []
    finally:
        conn.close()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the driver's device workers)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended while we looked
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _prepared(db: Path) -> None:
    """An empty store with the attempts trigger, before the first run."""
    from perfport.store import Store

    Store(db).close()
    with sqlite3.connect(db) as conn:
        conn.executescript(ATTEMPTS)
    conn.close()


def _round(db: Path, rng: random.Random) -> list[str]:
    """Start the campaign, kill -9 a worker or the driver at a random moment, then the driver;
    what was killed, in order."""
    proc = subprocess.Popen([*TUNE, "--db", str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    killed = []
    time.sleep(rng.uniform(0.5, 5.0))
    if rng.random() < 0.5:
        deadline = time.monotonic() + 20
        while not (workers := _children(proc.pid)) and proc.poll() is None:
            assert time.monotonic() < deadline, "no worker process started"
            time.sleep(0.05)
        if workers:
            os.kill(rng.choice(workers), signal.SIGKILL)
            killed.append("worker")
            time.sleep(rng.uniform(0.5, 3.0))  # the driver carries on with a fresh worker
    if proc.poll() is None:
        proc.kill()
        killed.append("driver")
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    return killed


@pytest.mark.slow
def test_ten_random_kills_lose_nothing_and_measure_nothing_twice(tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    _prepared(db)
    rng = random.Random(28)
    kills: list[str] = []
    while len(kills) < KILLS:
        kills += _round(db, rng)
        stored = _read(db, "SELECT config_id FROM results")
        assert len(stored) == len(set(stored))  # never two results of one configuration
    assert "worker" in kills and "driver" in kills, kills

    done = subprocess.run([*TUNE, "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (campaign,) = json.loads(done.stdout)["campaigns"]
    legal = campaign["measured"]
    assert campaign["status"] == "budget" and legal == 40
    results = _read(db, "SELECT config_id, outcome, message FROM results")
    assert len(results) == len({c for c, _, _ in results}) == legal  # nothing lost
    # A killed worker's trial was measured again, not stored as the kernel crashing.
    assert {outcome for _, outcome, _ in results} == {"ok"}, results
    attempts = _read(db, "SELECT config_id, count(*) FROM attempts GROUP BY config_id")
    assert len(attempts) == legal and {n for _, n in attempts} == {1}, attempts
