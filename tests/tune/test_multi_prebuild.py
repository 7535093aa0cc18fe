"""perfport tune --build-jobs on several local devices: one pool compiles every campaign's
planned builds ahead; the sessions find them built. With --cluster it is refused."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
from pathlib import Path
from typing import ClassVar

import pytest

from perfport import KernelSpec, PerfportError, RunSettings, Timing, load_kernel
from perfport.devices import get_device
from perfport.tune import multi
from perfport.tune.multi import Slot, tune_many
from perfport.tune.prebuild import Prebuild
from perfport.tune.progress import Board
from tune.cli_in_process import run_cli

EXAMPLES = Path(__file__).parents[2] / "examples"
SAXPY = EXAMPLES / "saxpy.toml"  # 20 configurations, ITEMS (4 values) a build define
FAST = RunSettings(timing=Timing.fixed(2))
PROBLEM = {"n": 4096}


class _Counted(Prebuild):
    """The real pool, remembering what it was given and what it had built when closed."""

    plans: ClassVar[list[list[tuple[str, int]]]] = []
    closed: ClassVar[list[tuple[int, int]]] = []

    @classmethod
    def for_devices(cls, spec, plans, jobs):
        cls.plans.append([(device.id, len(builds)) for device, builds in plans])
        return super().for_devices(spec, plans, jobs)

    def close(self) -> None:
        _Counted.closed.append(self.wait(0))
        super().close()


@pytest.fixture
def counted(monkeypatch):
    monkeypatch.setattr(multi, "Prebuild", _Counted)
    _Counted.plans.clear()
    _Counted.closed.clear()
    return _Counted


def _slot(device_id: str) -> Slot:
    return Slot(get_device(device_id), device_id)


def _builds(results) -> list[int]:
    """Distinct define sets (ITEMS) among each campaign's measured configurations."""
    return [len({m.config["ITEMS"] for m in r.measurements}) for r in results]


def _two_work_groups() -> KernelSpec:
    """saxpy at two of its five work-group sizes: its every build (ITEMS) in 8 configurations,
    not 20 (each work-group size is a compile of its own for PoCL on a fresh machine)."""
    spec = load_kernel(SAXPY)
    return dataclasses.replace(spec, restrictions=(*spec.restrictions, "wg in (32, 64)"))


def test_two_kinds_of_device_find_their_builds_compiled_ahead(db: Path, counted) -> None:
    results = tune_many(
        _two_work_groups(), [_slot("opencl:0:0"), _slot("opencl:0:0.0")], problem=PROBLEM,
        strategy="brute_force", db=db, settings=FAST, board=Board(io.StringIO(), live=False),
        build_jobs=2,
    )  # fmt: skip
    assert [r.status.value for r in results] == ["complete", "complete"]
    assert [len(r.measurements) for r in results] == [8, 8] and _builds(results) == [4, 4]
    assert all(m.outcome.value == "ok" for r in results for m in r.measurements)
    # One pool for both campaigns, each device's every build; all built before the CPU's
    # sessions ran their trials (they wait for the pool).
    (plan,) = counted.plans
    assert plan == list(zip(["opencl:0:0", "opencl:0:0.0"], _builds(results), strict=True))
    assert counted.closed == [(sum(_builds(results)), 0)]


def test_a_shared_campaign_compiles_only_what_its_budget_reaches(db: Path, counted) -> None:
    results = tune_many(
        SAXPY, [_slot("opencl:0:0.0"), _slot("opencl:0:0.1")], problem=PROBLEM,
        strategy="brute_force", budget=5, db=db, settings=FAST,
        board=Board(io.StringIO(), live=False), build_jobs=1,
    )  # fmt: skip
    (result,) = results
    assert result.status.value == "budget" and len(result.measurements) == 5
    (plan,) = counted.plans
    assert plan[0][0] == "opencl:0:0.0" and 1 <= plan[0][1] <= 5 and len(plan) == 1
    assert counted.closed == [(plan[0][1], 0)]
    # Again with a larger budget: only the builds of configurations not stored yet.
    tune_many(
        SAXPY, [_slot("opencl:0:0.0"), _slot("opencl:0:0.1")], problem=PROBLEM,
        strategy="brute_force", budget=7, db=db, settings=FAST,
        board=Board(io.StringIO(), live=False), build_jobs=1,
    )  # fmt: skip
    assert 1 <= counted.plans[1][0][1] <= 2


def test_a_strategy_that_chooses_as_it_goes_is_refused(db: Path) -> None:
    with pytest.raises(PerfportError, match="chooses as it goes"):
        tune_many(SAXPY, [_slot("opencl:0:0.0"), _slot("opencl:0:0.1")], db=db, build_jobs=1)
    assert not db.exists()


def _cli(capfd, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(capfd, "tune", SAXPY, "--problem", "n=4096", "--strategy", "brute_force", *args)


def test_cli_builds_ahead_for_several_devices(db: Path, counted, capfd) -> None:
    done = _cli(
        capfd, "--device", "opencl:0:0.0", "--device", "opencl:0:0.1", "--budget", "4",
        "--repeats", "2", "--build-jobs", "1", "--db", str(db), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (campaign,) = json.loads(done.stdout)["campaigns"]
    assert campaign["measured"] == 4 and campaign["measured_this_session"] == 4
    (plan,) = counted.plans  # one pool compiled the shared campaign's builds ahead
    assert plan[0][0] == "opencl:0:0.0" and 1 <= plan[0][1] <= 4 and len(plan) == 1


def test_cli_refuses_build_jobs_with_a_cluster(db: Path, capfd) -> None:
    done = _cli(capfd, "--cluster", "local", "--device", "opencl:0:0.0", "--build-jobs", "2",
                "--db", str(db))  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--build-jobs does not work with --cluster" in done.stderr
    assert not db.exists()
