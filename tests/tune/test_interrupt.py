"""kill -9 and Ctrl-C in the middle of a campaign: nothing measured is lost or duplicated."""

import signal
import subprocess
import sys
import time

from conftest import process_alive
from perfport.store import Store
from tune.cli_in_process import run_cli

CMD = [
    sys.executable, "-m", "perfport", "tune", "stencil", "--problem", "width=128", "height=128",
    "--strategy", "brute_force", "--budget", "20", "--repeats", "3", "--json",
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


def _workers(parent: int) -> list[int]:
    """The measurement worker processes ``parent`` started (its children running
    perfport.measure.worker)."""
    out = subprocess.run(
        ["ps", "-o", "pid=,stat=,args=", "--ppid", str(parent)], capture_output=True, text=True
    ).stdout
    rows = [line.split(None, 2) for line in out.splitlines()]
    return [int(r[0]) for r in rows if len(r) == 3 and "perfport.measure.worker" in r[2]]


def _workers_gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10
    while any(process_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(process_alive(p) for p in pids)


def test_kill_9_then_rerun_loses_and_duplicates_nothing(db, capfd):
    proc = _start_and_wait(db, 6)
    workers = _workers(proc.pid)
    assert workers
    proc.kill()  # SIGKILL: no cleanup of any kind
    proc.wait()
    assert _workers_gone(workers)  # the worker dies with its parent (its pipe, PR_SET_PDEATHSIG)
    before = _rows(db)
    assert 6 <= len(before) < 20
    done = run_cli(capfd, *CMD[3:], "--db", db)  # the rerun: perfport tune, in this process
    assert done.returncode == 0, done.stderr
    after = _rows(db)
    assert after[: len(before)] == before  # every earlier result kept, byte for byte
    assert len(after) == 20 and len({r[1] for r in after}) == 20  # none measured twice


def test_ctrl_c_stops_cleanly_and_keeps_results(db):
    proc = _start_and_wait(db, 5)
    workers = _workers(proc.pid)
    assert workers
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    kept = _rows(db)
    assert len(kept) >= 5
    with Store(db) as store:
        (status,) = store.query("SELECT status FROM campaigns")[0]
    assert status == "interrupted"
    assert _workers_gone(workers)
