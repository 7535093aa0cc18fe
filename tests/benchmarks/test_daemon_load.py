"""benchmarks/daemon_load.py: its CPU lists and the pinning it refuses, without a daemon."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import BENCHMARKS, load_benchmark


def test_cpu_lists_read_single_cpus_and_ranges(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports daemon_latency beside it
    bench = load_benchmark("daemon_load")
    assert bench.cpu_list("0") == {0}
    assert bench.cpu_list("2-5") == {2, 3, 4, 5}
    assert bench.cpu_list("0, 3-4,7") == {0, 3, 4, 7}
    for bad in ("", "a", "3-1", "-1", "1-"):
        with pytest.raises(ValueError):
            bench.cpu_list(bad)


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        (["--server-cpus", "0", "--client-cpus", "0"], "disjoint"),
        (["--server-cpus", "x"], "CPU list"),
        (["--client-cpus", "100000"], "not available"),
    ],
)
def test_bad_pinning_is_one_line_and_exit_2(flags: list[str], names: str):
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("CPU affinity is Linux-only")
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "daemon_load.py"), "--workers", "1", *flags],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert names in done.stderr and "Traceback" not in done.stderr
