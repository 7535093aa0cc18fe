"""Every kept benchmark runs end to end in its seconds-long ``--smoke`` mode, so none rots.

The scripts run side by side as subprocesses (most of their time is waiting on compilers and
child processes); each must exit 0 and print the lines its comparison is read from. Timings
are not checked: the point is that the scripts still work, not what they measure here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BENCHMARKS, SHARED

SRC = Path(__file__).parents[2] / "src"
# The daemon on CPU 0 and its load generator on CPU 1, where this machine has both.
_PINNED = {0, 1} <= os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else False
_PIN = ["--server-cpus", "0", "--client-cpus", "1"] if _PINNED else []
# script -> (extra arguments, what its output must contain)
SCRIPTS: dict[str, tuple[list[str], list[str]]] = {
    "overhead.py": ([], ["ratio cold caches", "ratio warm caches"]),
    "split_launch.py": ([], ["| after |", "ratio before/after per_step_ms"]),
    "space_build.py": (["--data", str(SHARED)], ["ratio"]),
    "strategies.py": (["--data", str(SHARED)], ["Mean fraction of the optimum", "ratio"]),
    "tune_builtins.py": (["--out", "{tmp}/builtins"], ["| stencil |", "speedup"]),
    "daemon_latency.py": ([], ["p99 ratio predict / health"]),
    "daemon_load.py": (
        ["--workers", "1,2", *_PIN],
        ["client CPU ms/answer", "p99 goal", "daemon on CPUs [0]" if _PINNED else "CPU ms"],
    ),
    "select_c_speed.py": ([], ["ratio selector/baseline"]),
    "model_counts.py": ([], ["goal: evaluation at a new size", "ratio counting / evaluation"]),
    "scaling.py": ([], ["| slots | trials |", "ratio wall(1) / wall(2)"]),
    "prior_scale.py": (["--data", str(SHARED)], ["peak RSS MB", "the two priors agree: True"]),
    "store_scale.py": (["--data", str(SHARED)], ["| 2 | 4000 |", "| report |", "goals at 64x"]),
    "model_guided.py": (
        ["all", "--db", "{tmp}/guided.db"],
        ["Evaluations to 95% of the optimum", "goal (model-guided"],
    ),
    "cold_start.py": (
        ["--data", str(SHARED)],
        ["Median evaluations to 95%", "chosen per held-out"],
    ),
    "prior_relatives.py": (["--data", str(SHARED)], ["Median evaluations to 95%", "poor"]),
    "store_open.py": (
        ["--data", str(SHARED)],
        ["| command | runs (s) |", "every-row / incremental"],
    ),
    "report_open.py": (["--data", str(SHARED)], ["| median |", "ratio open(report)"]),
}
NEEDS_SHARED = {
    "space_build.py",
    "strategies.py",
    "prior_scale.py",
    "store_scale.py",
    "cold_start.py",
    "prior_relatives.py",
    "store_open.py",
    "report_open.py",
}


def test_every_kept_benchmark_is_covered():
    assert {p.name for p in BENCHMARKS.glob("*.py")} == set(SCRIPTS)


@pytest.mark.slow
def test_smoke_runs(tmp_path: Path):
    pytest.importorskip("sklearn", reason="daemon_latency and select_c_speed fit models")
    pytest.importorskip("fastapi", reason="daemon_latency starts the daemon")
    pytest.importorskip("loopy", reason="model_counts gathers loopy statistics")
    if shutil.which("gcc") is None:
        pytest.skip("select_c_speed compiles its selector with gcc")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    running = {}
    for script, (extra, _) in SCRIPTS.items():
        if script in NEEDS_SHARED and not SHARED.is_dir():
            continue  # third-party data beside the checkout; absent on a fresh clone
        if script == "report_open.py" and shutil.which("chromium") is None:
            continue  # the browser CI installs (.ci/run); tests/report says so when absent
        argv = [a.replace("{tmp}", str(tmp_path)) for a in extra]
        running[script] = subprocess.Popen(
            [sys.executable, str(BENCHMARKS / script), "--smoke", *argv],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    failures = []
    for script, process in running.items():
        out, _ = process.communicate(timeout=300)
        missing = [m for m in SCRIPTS[script][1] if m not in out]
        if process.returncode != 0 or missing:
            failures.append(
                f"{script}: exit {process.returncode}, missing {missing}\n{out[-2000:]}"
            )
    assert not failures, "\n\n".join(failures)
