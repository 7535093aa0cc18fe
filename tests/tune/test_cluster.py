"""Campaigns on Dask workers: a local cluster of two worker processes on PoCL sub-devices,
a worker killed mid-campaign, and the one-line errors of a wrong address or worker."""

from __future__ import annotations

import dataclasses
import io
import os
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfport import RunSettings, Timing
from perfport._core import PerfportError
from perfport._core.version import __version__
from perfport.devices import get_device
from perfport.store import CampaignStatus, Store
from perfport.tune import cluster
from perfport.tune.cluster import DaskMeasurer, cluster_slots, connect
from perfport.tune.multi import Slot, tune_many
from perfport.tune.progress import Board
from tune.cli_in_process import run_cli

pytest.importorskip("distributed")

FAST = RunSettings(timing=Timing.fixed(2))
SUBS = ("opencl:0:0.0", "opencl:0:0.1")


def _rows(db: Path) -> list[tuple[str, str]]:
    with Store(db) as store:
        return [
            (r["campaign"], r["config"])
            for r in store.query(
                "SELECT k.key AS campaign, c.key AS config FROM results r "
                "JOIN configs c ON c.id = r.config_id JOIN campaigns k ON k.id = r.campaign_id"
            )
        ]


def _tune(client, db: Path, settings: RunSettings, problem: dict, **kw):
    return tune_many(
        "vector_add", cluster_slots(client), problem=problem, strategy="brute_force", db=db,
        settings=settings, board=Board(io.StringIO(), live=False),
        make_measurer=partial(DaskMeasurer, client), **kw,
    )  # fmt: skip


def test_local_cluster_end_to_end(db: Path) -> None:
    with connect("local", [get_device(i) for i in SUBS]) as client:
        slots = cluster_slots(client)
        assert sorted(s.device.id for s in slots) == list(SUBS)
        # A terminal's Ctrl-C reaches the workers too: they leave it to their nannies (it
        # stopped them mid-trial, with tracebacks, and the driver waited on them for good).
        pids = client.run(os.getpid)
        for pid in pids.values():
            os.kill(pid, signal.SIGINT)
        time.sleep(0.5)
        assert client.run(os.getpid) == pids
        (result,) = _tune(client, db, FAST, {"n": 4096}, budget=6)
    assert result.status is CampaignStatus.BUDGET
    assert result.measured_here == 6 and result.verification == "numpy reference"
    rows = _rows(db)
    assert len(rows) == 6 and len(set(rows)) == 6


def _kill_one_worker(client, db: Path, after: int, killed: list[int]) -> None:
    """SIGKILL one worker process once ``after`` results are stored (its nanny restarts it)."""
    pids = client.run(os.getpid)
    deadline = time.monotonic() + 60
    while len(_rows(db)) < after and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = sorted(pids.values())[0]
    os.kill(pid, signal.SIGKILL)
    killed.append(pid)


@pytest.mark.slow
def test_worker_killed_mid_campaign_completes_exactly(db: Path) -> None:
    slow = RunSettings(timing=Timing.fixed(200))  # trials long enough to be killed inside
    killed: list[int] = []
    with connect("local", [get_device(i) for i in SUBS]) as client:
        killer = threading.Thread(target=_kill_one_worker, args=(client, db, 3, killed))
        killer.start()
        (result,) = _tune(client, db, slow, {"n": 1048576})
        killer.join()
    assert killed
    assert result.status is CampaignStatus.COMPLETE
    rows = _rows(db)
    assert len(rows) == 11 and len(set(rows)) == 11  # every configuration, each once
    assert {m.outcome.value for m in result.measurements} <= {"ok", "crashed"}


def test_unreachable_scheduler_is_one_line_within_30_s(db: Path, monkeypatch) -> None:
    monkeypatch.setattr(cluster, "CONNECT_S", 0.5)
    started = time.monotonic()
    with (
        pytest.raises(PerfportError, match="cannot reach a Dask scheduler"),
        connect("tcp://127.0.0.1:9"),
    ):
        pass
    assert time.monotonic() - started < 30
    assert not db.exists()


def test_a_server_that_is_not_a_scheduler_is_one_line_within_its_bound(monkeypatch) -> None:
    """A listener that accepts and never answers (a web server): Dask's Client waited on it
    for good, deaf to Ctrl-C."""
    import socket

    monkeypatch.setattr(cluster, "CONNECT_S", 0.5)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        started = time.monotonic()
        with (
            pytest.raises(PerfportError, match="no answer within 1 s"),
            connect(f"tcp://127.0.0.1:{port}"),
        ):
            pass
    assert time.monotonic() - started < 10


class _FakeClient:
    """What cluster_slots asks a client: each worker's version and devices."""

    def __init__(self, described: dict) -> None:
        self.described = described

    def run(self, fn):
        return self.described


def test_worker_of_another_version_is_refused() -> None:
    dev = get_device("opencl:0:0")
    with pytest.raises(PerfportError, match=r"runs perfport 0\.0\.1, this driver"):
        cluster_slots(
            _FakeClient({"tcp://a:1": ("0.0.1", (dev,)), "tcp://b:1": (__version__, (dev,))})
        )


def test_no_worker_with_a_usable_device_is_refused() -> None:
    with pytest.raises(PerfportError, match="no worker on the cluster serves a usable device"):
        cluster_slots(_FakeClient({"tcp://a:1": (__version__, ())}))
    dev = get_device("opencl:0:0")
    with pytest.raises(PerfportError, match="of cuda:0"):
        cluster_slots(_FakeClient({"tcp://a:1": (__version__, (dev,))}), ["cuda:0"])


def test_worker_command_refuses_a_device_it_does_not_have(capfd) -> None:
    done = run_cli(capfd, "worker", "--scheduler", "tcp://127.0.0.1:9", "--device", "opencl:7:7")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no device 'opencl:7:7'" in done.stderr


class _FakeWorker:
    """The part of a Dask worker the preload hook touches."""

    def __init__(self) -> None:
        self.state = SimpleNamespace(total_resources={}, available_resources={})


def test_preload_advertises_the_devices_of_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(cluster.ENV_DEVICES, "opencl:0:0.0")
    worker = _FakeWorker()
    cluster.dask_setup(worker)
    name = cluster.resource_name(get_device("opencl:0:0.0"))
    assert worker.state.total_resources == {name: 1} == worker.state.available_resources


@pytest.mark.slow
def test_worker_command_with_no_scheduler_is_one_line_within_30_s() -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "worker", "--scheduler", "tcp://127.0.0.1:9",
         "--device", "opencl:0:0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert time.monotonic() - started < 30
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cannot reach a Dask scheduler" in done.stderr


def test_a_local_clusters_workers_inherit_quiet_logging_and_the_environment_is_restored(
    monkeypatch,
) -> None:
    """Workers set up logging before a nanny's env applies: 38 INFO lines per --cluster local."""
    import os

    monkeypatch.delenv("DASK_LOGGING__DISTRIBUTED", raising=False)
    with cluster._inherited(cluster._QUIET):
        assert os.environ["DASK_LOGGING__DISTRIBUTED"] == "warning"
    assert "DASK_LOGGING__DISTRIBUTED" not in os.environ
    monkeypatch.setenv("DASK_LOGGING__DISTRIBUTED", "debug")  # the user's own: kept
    with cluster._inherited(cluster._QUIET):
        assert os.environ["DASK_LOGGING__DISTRIBUTED"] == "debug"
    assert os.environ["DASK_LOGGING__DISTRIBUTED"] == "debug"


# A Python spec whose reference calls a helper: of the spec file's module, or of CALLS.
PY_SPEC = '''
import numpy as np
from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg
{imports}

def twice(a, y):
    return np.float32(a) * y

def reference(problem, inputs):
    return {{"y": {calls}(problem["a"], inputs["y"])}}

kernel = KernelSpec(
    name="scale",
    source="""__kernel void scale(__global float* y, float a, int n) {{
        int i = get_global_id(0); if (i < n) y[i] = a * y[i]; }}""",
    entry="scale",
    params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),),
    global_size=("round_up(n, wg)",), local_size=("wg",),
    args=(ArrayArg("y", "float", ("n",), output=True), ScalarArg("a", "float", "a"),
          ScalarArg("n", "int", "n")),
    problem={{"n": 1024, "a": 2.0}}, default={{"wg": 16}}, reference=reference,
    restrictions=(lambda c: c["wg"] <= 32,),
)
'''


def _py_spec(folder: Path, imports: str = "", calls: str = "twice") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "scale.py"
    path.write_text(PY_SPEC.format(imports=imports, calls=calls))
    return path


def test_a_python_specs_functions_travel_by_value(tmp_path: Path) -> None:
    """A Python spec file is a module under a made-up name: its reference went to the workers
    by reference to that name, which no other process can import."""
    from perfport.kernels import load_kernel

    payload = cluster.spec_payload(load_kernel(_py_spec(tmp_path)))
    code = (
        "import pickle, sys; import numpy as np; spec = pickle.loads(sys.stdin.buffer.read()); "
        "assert not [m for m in sys.modules if m.startswith('perfport_user_')]; "
        "print(spec.reference(spec.problem, {'y': np.ones(2, np.float32)})['y'].tolist())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=payload, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "[2.0, 2.0]"


def test_a_workers_spec_searches_the_spec_folder_for_includes(tmp_path: Path) -> None:
    """A worker compiles with the folder the spec was loaded from (docs/cluster.md: it must
    exist there too), as the run's own processes do."""
    import pickle

    from perfport.kernels import load_kernel

    spec = pickle.loads(cluster.spec_payload(load_kernel(_py_spec(tmp_path))))
    assert spec.include_dirs == (str(tmp_path.resolve()),)


def _bounded(fn, seconds: float):
    """``fn()`` in a thread: its result, or a failure (not a hung suite) after ``seconds``."""
    out: dict = {}

    def call() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:  # handed to the test, KeyboardInterrupt too
            out["error"] = exc

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["result"]


def test_python_specs_on_worker_processes(tmp_path: Path, db: Path, monkeypatch) -> None:
    """A Python spec file tuned on worker processes (it hung: the workers could not unpickle
    it, and the driver waited for good); one whose functions need a module the workers lack
    ends in one line, what was stored kept; a trial no worker takes is left once stopping."""

    def tune(spec: Path):
        return tune_many(
            str(spec), cluster_slots(client), strategy="brute_force", db=db, settings=FAST,
            budget=2, board=Board(io.StringIO(), live=False),
            make_measurer=partial(DaskMeasurer, client),
        )  # fmt: skip

    with connect("local", [get_device("opencl:0:0")]) as client:
        (result,) = _bounded(lambda: tune(_py_spec(tmp_path / "ok")), 60)
        assert result.measured_here == 2 and result.verification == "numpy reference"
        # Added after the workers started: only the driver can import it.
        (tmp_path / "lib").mkdir()
        (tmp_path / "lib" / "driver_only.py").write_text("def twice(a, y):\n    return a * y\n")
        monkeypatch.syspath_prepend(str(tmp_path / "lib"))
        bad = _py_spec(tmp_path / "bad", "import driver_only", "driver_only.twice")
        with pytest.raises(PerfportError, match="cannot load the kernel spec") as caught:
            _bounded(lambda: tune(bad), 60)
        assert "\n" not in str(caught.value) and "driver_only" in str(caught.value)
        assert len(_rows(db)) == 2

        # Ctrl-C with a trial in flight that no worker ever takes: left after the grace.
        monkeypatch.setattr(cluster, "STOP_GRACE_S", 0.5)
        nowhere = get_device("opencl:0:0")
        nowhere = dataclasses.replace(nowhere, name="served by no worker")
        submitted, returned = threading.Event(), threading.Event()

        class Measurer(DaskMeasurer):
            def measure(self, config):
                submitted.set()
                return super().measure(config)

        def ctrl_c() -> None:
            if submitted.wait(30):
                time.sleep(0.3)  # the driver waits on its sessions
                os.kill(os.getpid(), signal.SIGINT)
            if not returned.wait(20):  # a second Ctrl-C leaves the trial: a failure, not a hang
                os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=ctrl_c, daemon=True).start()
        started = time.monotonic()
        (stopped,) = tune_many(
            str(_py_spec(tmp_path / "ok")), [Slot(nowhere, "nowhere")], strategy="brute_force",
            db=db, settings=FAST, board=Board(io.StringIO(), live=False),
            make_measurer=partial(Measurer, client),
        )  # fmt: skip
        returned.set()
        assert stopped.status is CampaignStatus.INTERRUPTED
        assert time.monotonic() - started < 10 and len(_rows(db)) == 2


def test_a_trial_the_cluster_cannot_run_is_one_line(monkeypatch) -> None:
    """The scheduler's error for a task it cannot unpickle was a 60-line traceback."""
    from perfport.kernels import builtin

    cause = ModuleNotFoundError("No module named 'perfport_user_47ab5cf7205d'")
    error = RuntimeError("Error during deserialization of the task graph. This frequently\nocc")
    error.__cause__ = cause

    class Future:
        def result(self):
            raise error

    fake = SimpleNamespace(KilledWorker=type("KilledWorker", (Exception,), {}),
                           wait=lambda future, timeout: None)  # fmt: skip
    monkeypatch.setattr(cluster, "_distributed", lambda: fake)
    client = SimpleNamespace(submit=lambda *a, **kw: Future())
    spec = builtin("vector_add")
    slot = Slot(get_device("opencl:0:0"), "w")
    measurer = DaskMeasurer(client, spec, spec.problem, slot, FAST)
    with pytest.raises(PerfportError) as caught:
        measurer.measure({"wg": 16})
    message = str(caught.value)
    assert "\n" not in message
    assert "deserialization of the task graph" in message and "perfport_user_47ab" in message
