"""kill -9 and Ctrl-C in the middle of a campaign: nothing measured is lost or duplicated."""

import signal
import subprocess
import sys
import time

from perfport.store import Store

CMD = [
    sys.executable, "-m", "perfport", "tune", "stencil", "--problem", "width=128", "height=128",
    "--strategy", "brute_force", "--budget", "40", "--repeats", "3", "--json",
    "--confirm", "0",  # re-timing the winners adds samples: earlier results are compared bytewise
]  # fmt: skip


def _rows(db):
    if not db.exists():
        return []
    with Store(db) as store:
        return [tuple(r) for r in store.query(
            "SELECT r.id, r.config_id, r.outcome, r.created, s.times FROM results r "
            "LEFT JOIN samples s ON s.result_id = r.id ORDER BY r.id"
        )]  # fmt: skip


def _start_and_wait(db, at_least):
    proc = subprocess.Popen([*CMD, "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(_rows(db)) < at_least:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "campaign too slow"
        time.sleep(0.05)
    return proc


def _workers() -> int:
    """perfport worker processes alive on this machine."""
    out = subprocess.run(["ps", "-eo", "stat,args"], capture_output=True, text=True).stdout
    return sum("spawn_main" in line and not line.startswith("Z") for line in out.splitlines())


def _workers_gone(before: int) -> bool:
    deadline = time.monotonic() + 10
    while _workers() > before and time.monotonic() < deadline:
        time.sleep(0.1)
    return _workers() <= before


def test_kill_9_then_rerun_loses_and_duplicates_nothing(db):
    idle = _workers()
    proc = _start_and_wait(db, 8)
    proc.kill()  # SIGKILL: no cleanup of any kind
    proc.wait()
    assert _workers_gone(idle)  # the worker dies with its parent (PR_SET_PDEATHSIG)
    before = _rows(db)
    assert 8 <= len(before) < 40
    done = subprocess.run([*CMD, "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = _rows(db)
    assert after[: len(before)] == before  # every earlier result kept, byte for byte
    assert len(after) == 40 and len({r[1] for r in after}) == 40  # none measured twice


def test_ctrl_c_stops_cleanly_and_keeps_results(db):
    idle = _workers()
    proc = _start_and_wait(db, 5)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    kept = _rows(db)
    assert len(kept) >= 5
    with Store(db) as store:
        (status,) = store.query("SELECT status FROM campaigns")[0]
    assert status == "interrupted"
    assert _workers_gone(idle)
