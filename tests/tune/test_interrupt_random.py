"""Ctrl-C and SIGTERM at random moments: every interrupt ends in exit 130, the campaign says
``interrupted`` (never ``running``), ``--json`` still prints the result, nothing is lost and the
rerun resumes exactly (issue 30, item 1; issue 23, SIGTERM)."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tune.cli_in_process import run_cli

PERFPORT = [sys.executable, "-m", "perfport"]
# --confirm 0: re-timing the winners at the end adds samples to stored results on purpose,
# which this test, comparing stored results byte for byte across reruns, must not see.
TUNE = [
    *PERFPORT, "tune", "stencil", "--problem", "width=128", "height=128",
    "--strategy", "brute_force", "--budget", "40", "--repeats", "3", "--confirm", "0", "--json",
]  # fmt: skip
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _read(db: Path, sql: str) -> list[tuple]:
    """Rows read without taking any lock a writer could wait on."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:  # the schema is not there yet
        return []
    finally:
        conn.close()


def _results(db: Path) -> list[tuple]:
    return _read(
        db,
        "SELECT r.id, r.campaign_id, r.config_id, r.outcome, r.created, s.times FROM results r "
        "LEFT JOIN samples s ON s.result_id = r.id ORDER BY r.id",
    )


def _statuses(db: Path) -> list[str]:
    return [s for (s,) in _read(db, "SELECT status FROM campaigns ORDER BY id")]


def _interrupt(cmd: list[str], db: Path, rng: random.Random, sig: int, spread: float):
    """Start ``cmd``, wait until its campaign is open, then send ``sig`` after a random delay
    of up to ``spread`` seconds; the finished process, or None when it ended first."""
    proc = subprocess.Popen(
        [*cmd, "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while "running" not in _statuses(db):
        assert proc.poll() is None or proc.returncode == 0, proc.stderr.read()
        assert time.monotonic() < deadline, "campaign too slow to start"
        time.sleep(0.01)
    time.sleep(rng.uniform(0, spread))
    if proc.poll() is not None:
        proc.communicate()
        return None
    proc.send_signal(sig)
    proc.out, proc.err = proc.communicate(timeout=120)  # type: ignore[attr-defined]
    return proc


def _check_tune_interrupt(proc: subprocess.Popen, db: Path) -> bool:
    """True for an interrupt that stopped the campaign: exit 130, ``interrupted`` printed and
    stored. False for one that came after the final status was stored (too late to stop
    anything): the run reported its result normally, and that is what the store holds."""
    assert "Traceback" not in proc.err  # type: ignore[attr-defined]
    printed = json.loads(proc.out)  # type: ignore[attr-defined]
    assert printed["measured"] == len(_results(db))  # what it reports is what is stored
    if printed["status"] != "interrupted":
        assert _statuses(db) == [printed["status"]] == ["budget"]
        return False
    assert proc.returncode == 130, proc.err  # type: ignore[attr-defined]
    assert _statuses(db) == ["interrupted"]
    return True


def _tune_rounds(tmp_path: Path, seed: int, interrupts: int) -> int:
    """``interrupts`` interrupted tune sessions of one campaign, then a rerun to the end:
    every earlier result kept byte for byte, none measured twice. Returns interrupts sent."""
    rng = random.Random(seed)
    db = tmp_path / f"interrupt-{seed}.db"
    sent = 0
    for n in range(interrupts):
        before = _results(db)
        proc = _interrupt(TUNE, db, rng, SIGNALS[n % 2], spread=0.6)
        if proc is None:
            break  # the campaign finished first: nothing left to interrupt
        stopped = _check_tune_interrupt(proc, db)
        sent += stopped
        assert _results(db)[: len(before)] == before
        if not stopped:
            break  # the signal came after the campaign ended: a rerun opens no campaign to stop
    before = _results(db)
    done = subprocess.run([*TUNE, "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "budget"
    after = _results(db)
    assert after[: len(before)] == before
    assert len(after) == 40 and len({r[2] for r in after}) == 40
    return sent


@pytest.mark.slow  # a random stress test; test_interrupt.py keeps the deterministic cases fast
def test_tune_interrupts_at_random_moments(tmp_path):
    assert _tune_rounds(tmp_path, seed=1, interrupts=3) >= 1


@pytest.mark.slow
def test_fifty_tune_interrupts(tmp_path):
    sent, seed = 0, 100
    while sent < 50:
        sent += _tune_rounds(tmp_path, seed, interrupts=5)
        seed += 1


def _problems(tmp_path: Path) -> Path:
    path = tmp_path / "problems.csv"
    path.write_text("n\n" + "\n".join(str(4096 * k) for k in range(1, 25)) + "\n")
    return path


def test_sweep_interrupts_then_resumes(tmp_path, capfd):
    cmd = [*PERFPORT, "sweep", "vector_add", "--problems", str(_problems(tmp_path)), "--json"]
    db = tmp_path / "sweep.db"
    rng = random.Random(7)
    for sig in SIGNALS:
        before = _results(db)
        proc = _interrupt(cmd, db, rng, sig, spread=1.0)
        if proc is None:
            break
        assert proc.returncode == 130, proc.err  # type: ignore[attr-defined]
        assert "Traceback" not in proc.err  # type: ignore[attr-defined]
        assert "running" not in _statuses(db)
        assert _results(db)[: len(before)] == before
    before = _results(db)
    done = run_cli(capfd, *cmd[len(PERFPORT) :], "--db", db)  # the rerun, in this process
    assert done.returncode == 0, done.stderr
    after = _results(db)
    assert after[: len(before)] == before
    assert _statuses(db) == ["complete"] * 24
    assert len({(r[1], r[2]) for r in after}) == len(after) == 24 * 11  # vector_add: 11 sizes


def test_wg_collect_interrupt_leaves_no_running_campaign(tmp_path):
    cmd = [
        *PERFPORT, "wg", "collect", "--scenarios", "2", "--sizes", "64", "--repeats", "1",
        "--no-real-world", "--json",
    ]  # fmt: skip
    db = tmp_path / "collect.db"
    proc = _interrupt(cmd, db, random.Random(3), signal.SIGTERM, spread=2.0)
    assert proc is not None
    assert proc.returncode == 130, proc.err  # type: ignore[attr-defined]
    assert "Traceback" not in proc.err  # type: ignore[attr-defined]
    assert _statuses(db) == ["interrupted"]


def _kt_cache(path: Path, entries: int) -> Path:
    cache = {}
    for x in range(entries):
        times = [0.01 * (x + 1) + i * 0.001 for i in range(4)]
        cache[str(x)] = {"block_size_x": x, "time": sum(times) / 4, "times": times}
    path.write_text(json.dumps({
        "device_name": "Test GPU", "kernel_name": "kern", "problem_size": [1024],
        "tune_params_keys": ["block_size_x"],
        "tune_params": {"block_size_x": list(range(entries))}, "cache": cache,
    }))  # fmt: skip
    return path


ENTRIES = 8000


def test_import_interrupts_leave_all_or_nothing(tmp_path):
    """One SIGINT and one SIGTERM; the slow twin sends more, at more moments."""
    _import_rounds(tmp_path, random.Random(5), rounds=2)


@pytest.mark.slow
def test_many_import_interrupts_leave_all_or_nothing(tmp_path):
    _import_rounds(tmp_path, random.Random(6), rounds=8)


def _import_rounds(tmp_path: Path, rng: random.Random, rounds: int) -> None:
    """``rounds`` imports of one large cache, each interrupted at a random moment (SIGINT and
    SIGTERM in turn): each store holds all of the cache or none of it."""
    # Large enough that its store takes longer than the moments a signal is sent at (an
    # import holds an interrupt until its one transaction has committed or rolled back).
    source = _kt_cache(tmp_path / "cache.json", ENTRIES)
    for n in range(rounds):
        db = tmp_path / f"import-{n}.db"
        proc = subprocess.Popen(
            [*PERFPORT, "import", str(source), "--db", str(db)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        # From the moment the command opens its store: a signal during the interpreter's start
        # comes before perfport can hold it, and a loaded machine can make that start slow.
        deadline = time.monotonic() + 120
        while not db.exists() and proc.poll() is None:
            assert time.monotonic() < deadline, "import too slow to start"
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.7))
        proc.send_signal(SIGNALS[n % 2])
        _out, err = proc.communicate(timeout=120)
        assert "Traceback" not in err
        assert _statuses(db) in ([], ["complete"])
        assert len(_results(db)) in (0, ENTRIES)
        if proc.returncode == -SIGNALS[n % 2]:
            # Python restores the default handlers while the interpreter shuts down: a signal
            # in that last moment ends a command whose work is already done and stored.
            assert _statuses(db) == ["complete"], err
        else:
            assert proc.returncode in (0, 130), err
