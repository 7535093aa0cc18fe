"""Shared fixtures. Tests run on PoCL's CPU device (pip install 'perfport[pocl]')."""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from perfport import Measurement, Outcome, builtin
from perfport._core import DeviceInfo
from perfport.devices import get_device
from perfport.space import kernel_space
from perfport.store import CampaignStatus

# A suite started as a background job (as CI may start it) inherits SIGINT ignored, and a
# Python process that starts with SIGINT ignored never turns Ctrl-C into KeyboardInterrupt.
# The interrupt tests need Ctrl-C's usual meaning here and in the commands they start (a
# handler, unlike "ignored", is reset to the default when a child process starts).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

DATA = Path(__file__).parent / "data"
BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
EXPERIMENTS = Path(__file__).parents[1] / "experiments"

# A stencil described as data (perfport.kernels.described_stencil): the sum of a 5 x 3 box,
# 2 columns east and west, 1 row north and south.
BOX_STENCIL = {
    "name": "box5x3",
    "body": "ELEM s = 0; for (int dy = -1; dy <= 1; ++dy) for (int dx = -2; dx <= 2; ++dx) "
    "s += GET(dx, dy); return (OUT)s;",
    "north": 1, "south": 1, "east": 2, "west": 2,
}  # fmt: skip


def load_benchmark(name: str) -> ModuleType:
    """A script of benchmarks/ imported as a module."""
    return load_script(BENCHMARKS / f"{name}.py")


def experiment_script(name: str) -> Path:
    """experiments/<date>-<slug>/<name>.py, found by the script's name alone (names are unique
    across experiments, so a test need not repeat the folder's date)."""
    (path,) = EXPERIMENTS.glob(f"*/{name}.py")
    return path


def load_experiment(name: str) -> ModuleType:
    """A script of experiments/ imported as a module."""
    return load_script(experiment_script(name))


def load_script(path: Path) -> ModuleType:
    """A script imported as a module, registered under its name: dataclasses look their module
    up, and sibling scripts import each other by name."""
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs: a zombie is dead (it waits only for its gone parent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    return False


def compile_shared(source: Path, lib: Path) -> ctypes.CDLL:
    """Generated C built as strictly as a user's compiler may (C99, all warnings as errors)."""
    subprocess.run(
        ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared",
         "-fPIC", "-o", str(lib), str(source)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return ctypes.CDLL(str(lib))


# Third-party tuning data beside the checkout (see ../shared/data/README.md); tests that need
# it skip where it is absent.
SHARED = Path(os.environ.get("PERFPORT_SHARED_DATA", Path(__file__).parents[2] / "shared" / "data"))
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"no third-party data at {SHARED}")
if SHARED.is_dir():  # perfport finds it only this way (never beside the working directory)
    os.environ.setdefault("PERFPORT_SHARED_DATA", str(SHARED.resolve()))


@pytest.fixture(scope="session")
def cpu() -> DeviceInfo:
    """The default device (PoCL's CPU device in CI), or PERFPORT_TEST_DEVICE."""
    return get_device(os.environ.get("PERFPORT_TEST_DEVICE"))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


def fill_wg_campaign(store, cpu, kernel, problem, scale, samples=2):
    """Store a fake exhaustive campaign of a built-in stencil: smooth times (``samples`` equal
    ones per size), 8x8 refused."""
    spec = builtin(kernel)
    full = spec.problem.merged(problem)
    space = kernel_space(spec, full, cpu)
    ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(full))
    campaign = store.open_campaign(f"{kernel}-{scale}", ids, "brute_force", 0, {}, space.report)
    out = []
    for config in (c for c in space if c["wc"] in (4, 8, 16, 32, 64) and c["wr"] in (1, 4, 8, 16)):
        t = scale * (1 + abs(np.log2(config["wc"] / 32)) + abs(np.log2(config["wr"] / 4)))
        if config["wc"] == 8 and config["wr"] == 8:
            out.append(Measurement(config, Outcome.LAUNCH_REFUSED, "refused"))
        else:
            out.append(Measurement(config, Outcome.OK, times_ms=(t,) * samples))
    store.record_many(campaign, out)
    store.set_status(campaign, CampaignStatus.COMPLETE)


def tiny_wg_dataset(sizes, runtimes, names, features):
    """A hand-made work-group dataset: ``names`` are (device, kernel, dataset) per scenario, the
    features are two numbers ("a", "b"); a scenario is synthetic when its kernel is."""
    from perfport.wg import WgDataset

    s = len(runtimes)
    return WgDataset(
        sizes=np.asarray(sizes), runtimes=np.array(runtimes, dtype=np.float64),
        max_wg=np.full(s, 1024), features=np.array(features, dtype=np.float64),
        feature_names=("a", "b"), device=np.array([n[0] for n in names]),
        kernel=np.array([n[1] for n in names]), dataset=np.array([n[2] for n in names]),
        synthetic=np.array([n[1] == "synthetic" for n in names]),
    )  # fmt: skip


@pytest.fixture(scope="session")
def daemon_model(cpu, tmp_path_factory):
    """A small work-group-size model file (two measured stencils) for the daemon's tests: built
    once per session (tests only read it; each keeps its own database)."""
    from perfport.store import Store
    from perfport.wg import dataset_from_store
    from perfport.wg.model import train

    tmp_path = tmp_path_factory.mktemp("daemon_model")
    with Store(tmp_path / "results.db") as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0)
        fill_wg_campaign(store, cpu, "gaussian", {"width": 1024, "height": 1024, "radius": 3}, 2.0)
        data = dataset_from_store(store)
    path = tmp_path / "wg.model"
    train(data, "performance_forest+novel").save(path)  # the default model's method
    return path


def vector_add_campaign(store, cpu, key="c1"):
    """A random-search campaign of vector_add at n = 100 on ``cpu``: (spec, campaign)."""
    from perfport import builtin
    from perfport.space import kernel_space

    spec = builtin("vector_add")
    problem = spec.problem.merged({"n": 100})
    ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(problem))
    return spec, store.open_campaign(
        key, ids, "random", 0, {}, kernel_space(spec, problem, cpu).report
    )
