"""A small store for the report's tests: two devices of one kernel (each with a default, a
best, failures), so every section of the page has something to draw, and one split plan."""

from __future__ import annotations

import json
from pathlib import Path

from perfport import Config, Measurement, Outcome, builtin
from perfport._core import Check
from perfport.space import PruningReport
from perfport.store import CampaignStatus, Store
from perfport.store.formats.imported import external_device
from perfport.store.plans import record_plan

WGS = (8, 16, 32, 64, 128, 256)


def fill(db: Path) -> None:
    spec = builtin("vector_add")
    problem = spec.problem.merged({"n": 4096})
    devices = [external_device("GPU Alpha"), external_device("GPU Beta")]
    with Store(db) as store:
        for d, device in enumerate(devices):
            ids = (store.device_id(device), store.kernel_id(spec), store.problem_id(problem))
            report = PruningReport(len(WGS) + 1, len(WGS) + 1, ())
            campaign = store.open_campaign(f"c{d}", ids, "brute_force", 0, {}, report)
            for i, wg in enumerate(WGS):
                base = 1.0 + abs(i - 3 - d) * 0.5  # each device has its own best
                times = tuple(base + 0.01 * k for k in range(5))
                store.record(campaign, Measurement(Config.of(wg=wg), Outcome.OK, "", times,
                                                   check=Check.VERIFIED, verified_against="numpy"))  # fmt: skip
            store.record(campaign, Measurement(Config.of(wg=1024), Outcome.LAUNCH_REFUSED, "no"))
            store.set_status(campaign, CampaignStatus.COMPLETE)
        plan = {"dimension": 0, "parts": [[0, 3000], [3000, 4096]], "adjusted_theoretical_ms": 0.8}
        record_plan(store, spec, problem, devices, [Config.of(wg=64), Config.of(wg=128)], plan,
                    {"measured_ms": 0.9})  # fmt: skip


def small_store_at(tmp_path: Path) -> Path:
    db = tmp_path / "small.db"
    fill(db)
    return db


# The --json output of each capability's command, run once (commands in tests/data/report/README.md).
FILES = Path(__file__).parents[1] / "data" / "report"
KINDS = ("wg", "select", "model", "split")


def add_capabilities(db: Path) -> None:
    """What the other capabilities store: a calibration of the model on GPU Alpha, and a
    split plan that ran with --sweep (the run of split.json)."""
    from perfport.store.calibrations import record_calibration

    model = json.loads((FILES / "model.json").read_text())
    run = json.loads((FILES / "split.json").read_text())
    spec = builtin("vector_add")
    devices = [external_device("GPU Alpha"), external_device("GPU Beta")]
    with Store(db) as store:
        record_calibration(store, devices[0], model["model"]["output"],
                           model["model"]["expression"], model["calibrations"][0])  # fmt: skip
        plan = {"dimension": 0, "parts": run["parts"], "adjusted_theoretical_ms": 0.2}
        record_plan(store, spec, spec.problem.merged({"n": 4096}), devices,
                    [Config.of(wg=64), Config.of(wg=64)], plan, run)  # fmt: skip


def kt_cache(path: Path, device: str, times: dict[int, float | str]) -> Path:
    """A Kernel Tuner cache of one kernel on ``device``: wg -> time (ms, or a failure name)."""
    cache = {"device_name": "", "kernel_name": "vadd", "tune_params_keys": ["wg"],
             "tune_params": {"wg": sorted(times)},
             "cache": {str(wg): {"wg": wg, "time": t} for wg, t in times.items()}}  # fmt: skip
    cache["device_name"] = device
    path.write_text(json.dumps(cache))
    return path


def imported_store_at(tmp_path: Path, caches: dict[str, dict[int, float | str]]) -> Path:
    """A store holding one imported Kernel Tuner cache per device."""
    from perfport.store.formats.importing import import_file

    db = tmp_path / "imported.db"
    with Store(db) as store:
        for device, times in caches.items():
            import_file(store, kt_cache(tmp_path / f"{device}.json", device, times))
    return db
