"""perfport tune --build-jobs: builds compiled ahead in background processes."""

import dataclasses
import importlib
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest

from conftest import process_alive
from perfport import PerfportError, RunSettings, Timing, load_kernel, tune
from perfport.store import Store
from perfport.tune.prebuild import Prebuild, PrebuildError

EXAMPLES = Path(__file__).parents[2] / "examples"
TUNE_MODULE = importlib.import_module("perfport.tune.tune")  # the package exports tune()
FAST = RunSettings(timing=Timing.fixed(2))


def test_builds_compile_in_the_background_and_failures_are_counted(cpu, tmp_path):
    spec = load_kernel(EXAMPLES / "saxpy.toml")
    builds = [{"ITEMS": str(i)} for i in (1, 2, 4, 8)]
    ahead = Prebuild(spec, cpu, builds, 2)
    try:
        assert ahead.wait() == (4, 0)
    finally:
        ahead.close()
    broken = dataclasses.replace(spec, source="#if ITEMS == 8\nbroken\n#endif\n" + spec.source)
    ahead = Prebuild(broken, cpu, builds, 1)  # one process suffices to count a failure
    try:
        assert ahead.wait() == (3, 1)
    finally:
        ahead.close()


def test_builds_ahead_find_a_header_beside_the_spec(cpu, tmp_path, monkeypatch):
    """The processes compiling ahead search the spec's folder for includes as the run does:
    from another working directory, each of their builds failed."""
    folder = tmp_path / "kernels"
    folder.mkdir()
    for name in ("saxpy.toml", "saxpy.py"):
        shutil.copy(EXAMPLES / name, folder)
    shutil.copy(EXAMPLES / "saxpy.cl", folder / "saxpy.h")
    (folder / "saxpy.cl").write_text('#include "saxpy.h"\n')
    spec = load_kernel(folder / "saxpy.toml")
    monkeypatch.chdir(tmp_path)
    ahead = Prebuild(spec, cpu, [{"ITEMS": "1"}, {"ITEMS": "2"}], 1)
    try:
        assert ahead.wait() == (2, 0)
    finally:
        ahead.close()


def test_tuning_with_builds_ahead_measures_the_same(cpu, tmp_path):
    # saxpy's every build (4 ITEMS) at two of its five work-group sizes: 8 configurations
    saxpy = load_kernel(EXAMPLES / "saxpy.toml")
    kernel = dataclasses.replace(saxpy, restrictions=(*saxpy.restrictions, "wg in (32, 64)"))
    runs = [
        tune(kernel, device=cpu.id, strategy="brute_force", db=tmp_path / f"{jobs}.db",
             settings=FAST, build_jobs=jobs, problem={"n": 4096})
        for jobs in (0, 1)
    ]  # fmt: skip
    seen = [{(m.config, m.outcome) for m in r.measurements} for r in runs]
    assert seen[0] == seen[1] and len(seen[0]) == 8
    assert len({config["ITEMS"] for config, _ in seen[1]}) == 4
    assert runs[1].status.value == "complete"


def test_a_strategy_that_chooses_as_it_goes_cannot_build_ahead(cpu, tmp_path):
    with pytest.raises(PerfportError, match="chooses as it goes"):
        tune(EXAMPLES / "saxpy.toml", device=cpu.id, db=tmp_path / "r.db", build_jobs=2)


class _Recorded(Prebuild):
    """A Prebuild that compiles nothing and remembers what it was given."""

    seen: ClassVar[list[tuple[int, float | None]]] = []

    def __init__(self, spec, device, builds, jobs):
        self.builds = builds

    def wait(self, timeout=None):
        _Recorded.seen.append((len(self.builds), timeout))
        return len(self.builds), 0

    def close(self) -> None:
        pass


def test_only_the_builds_the_budget_reaches_are_compiled_and_the_time_budget_holds(
    cpu, tmp_path, monkeypatch
):
    monkeypatch.setattr(TUNE_MODULE, "Prebuild", _Recorded)
    _Recorded.seen.clear()
    kernel, db = EXAMPLES / "saxpy.toml", tmp_path / "r.db"
    from perfport.tune.result import Budget

    first = tune(kernel, device=cpu.id, strategy="brute_force", db=db, settings=FAST,
                 build_jobs=1, problem={"n": 4096}, budget=Budget(3, 60.0))  # fmt: skip
    assert first.status.value == "budget"
    # 3 evaluations, of 20 configurations: at most 3 builds (the CPU waits, within 60 s).
    assert 1 <= _Recorded.seen[0][0] <= 3 and _Recorded.seen[0][1] == 60.0
    tune(kernel, device=cpu.id, strategy="brute_force", db=db, settings=FAST,
         build_jobs=1, problem={"n": 4096}, budget=5)  # fmt: skip
    assert 1 <= _Recorded.seen[1][0] <= 2  # the campaign's 3 stored results count


def test_ctrl_c_while_compiling_ahead_stops_cleanly(cpu, tmp_path, monkeypatch):
    def interrupted(self, timeout=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(_Recorded, "wait", interrupted)
    monkeypatch.setattr(TUNE_MODULE, "Prebuild", _Recorded)
    from perfport.store import Store

    result = tune(EXAMPLES / "saxpy.toml", device=cpu.id, strategy="brute_force",
                  db=tmp_path / "r.db", settings=FAST, build_jobs=2, problem={"n": 4096})  # fmt: skip
    assert result.status.value == "interrupted" and not result.measurements
    with Store(tmp_path / "r.db") as store:
        assert store.campaign(result.campaign).status.value == "interrupted"


def test_too_many_compiling_processes_are_refused(cpu, tmp_path):
    with pytest.raises(PerfportError, match="per core"):
        tune(EXAMPLES / "saxpy.toml", device=cpu.id, strategy="brute_force",
             db=tmp_path / "r.db", build_jobs=10**6)  # fmt: skip
    with pytest.raises(PerfportError, match="chooses as it goes"):
        tune(EXAMPLES / "saxpy.toml", device=cpu.id, db=tmp_path / "r.db", build_jobs=1)


@pytest.mark.slow  # seconds of subprocesses; ./dev test --slow runs it
def test_compiling_processes_end_when_the_run_is_killed(tmp_path):
    # A run killed outright shuts no pool down: its compiling processes must notice and end.
    script = (
        "import os, sys, time\n"
        "from perfport import load_kernel, get_device\n"
        "from perfport.tune.prebuild import Prebuild\n"
        f"spec = load_kernel({str(EXAMPLES / 'saxpy.toml')!r})\n"
        "ahead = Prebuild(spec, get_device('opencl:0:0'), [{'ITEMS': '1'}, {'ITEMS': '2'}], 2)\n"
        "ahead.wait()\n"
        "print(' '.join(str(p) for p in ahead._pool._processes), flush=True)\n"
        "os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert pids
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(process_alive(p) for p in pids):
        time.sleep(0.2)
    assert not any(process_alive(p) for p in pids)


def test_a_compiling_process_that_starts_after_the_run_is_gone_ends():
    # A pool process may start only once the run has finished and exited; it then has an
    # adopted parent, and must still see that the run is gone.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    script = (
        "import time\n"
        "from perfport import load_kernel, get_device\n"
        "from perfport.tune.prebuild import _start\n"
        f"_start(load_kernel({str(EXAMPLES / 'saxpy.toml')!r}), get_device('opencl:0:0'), {gone})\n"
        "time.sleep(30)\n"
        "print('still here')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "still here" not in done.stdout


def test_a_script_without_a_main_guard_gets_one_line(tmp_path):
    """Each compiling process (spawned) imports the script again and ran its tune: the pool
    broke and a raw BrokenProcessPool came back. The campaign stays, marked failed."""
    script = tmp_path / "plain.py"
    db = tmp_path / "r.db"
    script.write_text(
        "import perfport\n"
        f"perfport.tune('vector_add', problem={{'n': 4096}}, strategy='brute_force', "
        f"build_jobs=1, db={str(db)!r})\n"
    )
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    # A compiling process refuses its own tune, before any write, saying why; the run whose
    # processes died ends in one line naming the fix.
    assert run.returncode == 1
    assert "in a spawned process as it imported the main script again" in run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("perfport.tune.prebuild.PrebuildError: the processes compiling ahead")
    assert 'if __name__ == "__main__":' in last and "build_jobs=0" in last
    with Store(db) as store:
        assert [r[0] for r in store.query("SELECT status FROM campaigns")] == ["failed"]


def test_tune_is_refused_in_a_process_importing_the_script(monkeypatch, tmp_path):
    """multiprocessing's own test: the process is still importing the main script."""
    import multiprocessing

    monkeypatch.setattr(multiprocessing.process.current_process(), "_inheriting", True, False)
    with pytest.raises(PrebuildError, match='under `if __name__ == "__main__":`'):
        tune("vector_add", db=tmp_path / "r.db")
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize("jobs", [-2, 1.5, "2"])
def test_a_bad_build_jobs_is_refused_before_the_store(tmp_path, jobs):
    with pytest.raises(PerfportError, match=f"build_jobs {jobs!r}: give a number"):
        tune("vector_add", strategy="brute_force", db=tmp_path / "r.db", build_jobs=jobs)
    assert not (tmp_path / "r.db").exists()
