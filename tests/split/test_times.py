"""Splits planned from given times (``perfport split --times store|model``, ``split_run(times=)``):
the roofline's prediction, the plan made from the given times with only the fastest device run
alone, and the one-line refusals when the times cannot be had."""

from __future__ import annotations

import dataclasses
import json

import pytest

from perfport._core import Config, Problem, SpecError
from perfport._core.metrics import Ceilings
from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.split import split as split_module
from perfport.split.split import split_run
from perfport.split.times import TimeSource, roofline_ms
from perfport.store import Store, best_results, stored_ceilings
from tune.cli_in_process import run_cli

TWO = ["--device", "opencl:0:0.0", "--device", "opencl:0:0.1"]
PROBLEM = ["--problem", "n=20000", "mask=33"]


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def _ceilings(copy: float, fp32: float, fp64: float | None = None, **kw) -> Ceilings:
    return Ceilings("f", copy, 1.0, 1.0, fp32, fp64, **kw)


def test_roofline_time_is_the_slower_of_memory_and_compute():
    spec = builtin("convolution")
    full = spec.problem.merged(Problem.of(n=10000, mask=65))
    wg = Config.of(wg=64)
    moved = 4 * (2 * 10000 + 2 * 65 - 1)  # the spec's bytes, float
    flops = 2 * 10000 * 65
    # 1 GB/s = 1e6 bytes per ms; 1 GFLOP/s = 1e6 flops per ms
    assert roofline_ms(spec, full, wg, _ceilings(1.0, 1e6)) == pytest.approx(moved / 1e6)
    assert roofline_ms(spec, full, wg, _ceilings(1e6, 2.0)) == pytest.approx(flops / 2e6)
    # a stored copy curve gives the bandwidth at the kernel's own bytes
    curve = ((1e3, 0.5), (1e9, 50.0))
    at = _ceilings(1e6, 1e6, copy_curve=curve).copy_at(moved)
    assert at is not None and at < 50.0
    assert roofline_ms(spec, full, wg, _ceilings(1e6, 1e6, copy_curve=curve)) == pytest.approx(
        moved / at / 1e6
    )


def test_a_double_kernel_is_judged_by_its_fp64_peak():
    spec = builtin("convolution")
    full = spec.problem.merged(Problem.of(n=10000, mask=65, dtype="double"))
    flops = 2 * 10000 * 65
    got = roofline_ms(spec, full, Config.of(wg=64), _ceilings(1e6, 100.0, 4.0))
    assert got == pytest.approx(flops / 4e6)
    with pytest.raises(SpecError, match="no stored fp64 peak"):
        roofline_ms(spec, full, Config.of(wg=64), _ceilings(1e6, 100.0, None))


def test_a_kernel_without_declared_work_has_no_model_time(two, monkeypatch):
    spec = dataclasses.replace(builtin("convolution"), bytes=None, flops=None)
    monkeypatch.setattr(split_module, "run_parts", _never)
    with Store(":memory:") as store, pytest.raises(SpecError, match="neither bytes nor flops"):
        split_run(spec, Problem.of(n=2000), two, store=store, time_source="model")


def _never(*args, **kwargs):
    raise AssertionError("nothing may run when the times cannot be had")


def test_given_times_plan_and_only_the_fastest_device_runs_alone(two, monkeypatch):
    alone: list[str] = []
    real = split_module.run_parts

    def counting(spec, problem, parts, split, **kw):
        if split is None:  # a run of the whole problem alone
            alone.append(parts[0].device.id)
        return real(spec, problem, parts, split, **kw)

    monkeypatch.setattr(split_module, "run_parts", counting)
    times = {"opencl:0:0.0": 3.0, "opencl:0:0.1": 1.0}
    out = split_run(builtin("convolution"), Problem.of(n=20000, mask=33), two,
                    target_s=0.02, plan_from="eq4", times=times)  # fmt: skip
    assert alone == ["opencl:0:0.1"]
    assert out.single[0] is None and out.single[1] is not None
    assert out.verified and out.time_source is TimeSource.GIVEN
    assert out.plan.times_ms == (3.0, 1.0)
    assert out.plan.split_factors == pytest.approx((0.25, 0.75))
    j = out.to_json()
    assert j["times"] == "given" and j["theoretical_ms"] == pytest.approx(0.75)
    assert [c["time_ms"] for c in j["configs"]] == [3.0, 1.0]
    assert [c["time_source"] for c in j["configs"]] == ["given", "given"]
    assert j["configs"][0]["alone_ms"] is None
    assert j["best_single"] == {"device": "opencl:0:0.1", "time_ms": out.single[1].wall_ms}
    with pytest.raises(SpecError, match=r"none for opencl:0:0\.1"):
        split_run(builtin("convolution"), Problem.of(n=2000), two, times={"opencl:0:0.0": 1.0})


def test_a_sweep_that_gave_the_device_planned_slower_everything_can_make_it_the_best(two):
    """With times given, only the device planned faster runs alone; a sweep's end point that
    gives the other device the whole extent is that device alone, and may be the faster."""
    from perfport.split.sweep import SweepPoint

    out = split_run(builtin("convolution"), Problem.of(n=20000, mask=33), two,
                    target_s=0.02, plan_from="eq4", times={"opencl:0:0.0": 3.0, "opencl:0:0.1": 1.0})  # fmt: skip
    alone = out.single[1]
    assert out.single[0] is None and alone is not None
    out = dataclasses.replace(out, verified=False)  # the split itself out of the running
    assert out.decision == "opencl:0:0.1"
    quick = dataclasses.replace(alone, wall_ms=alone.wall_ms / 4, kernel_ms=alone.kernel_ms)
    everything_on_0 = SweepPoint(1.0, ((0, 20000), (20000, 20000)), quick, True)
    swept = dataclasses.replace(out, sweep=(everything_on_0,))
    assert swept.best_single == 0 and swept.decision == "opencl:0:0.0"
    assert swept.to_json()["best_single"] == {"device": "opencl:0:0.0", "time_ms": quick.wall_ms}
    wrong = dataclasses.replace(out, sweep=(dataclasses.replace(everything_on_0, verified=False),))
    assert wrong.decision == "opencl:0:0.1"  # a wrong output never decides


def test_measured_times_run_every_device_alone(two):
    out = split_run(builtin("convolution"), Problem.of(n=20000, mask=33), two, target_s=0.02,
                    plan_from="eq4")  # fmt: skip
    j = out.to_json()
    assert j["times"] == "measured" and all(r is not None for r in out.single)
    for c, r in zip(j["configs"], out.single, strict=True):
        assert c["time_source"] == "measured" and c["time_ms"] == c["alone_ms"] == r.wall_ms


def _split_json(capfd, db: str, times: str) -> dict:
    done = run_cli(
        capfd, "split", "convolution", *TWO, *PROBLEM, "--times", times, "--db", db, "--json"
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_store_times_are_the_tuned_times(tmp_path, two, capfd):
    db = str(tmp_path / "r.db")
    for d in two:
        tuned = run_cli(capfd, "tune", "convolution", "--device", d.id, *PROBLEM,
                        "--budget", "3", "--confirm", "0", "--db", db)  # fmt: skip
        assert tuned.returncode == 0, tuned.stderr
    out = _split_json(capfd, db, "store")
    spec = builtin("convolution")
    with Store(db) as store:
        stored = {
            r.device_fingerprint: (dict(r.best or {}), r.best_ms)
            for r in best_results(store, spec.source_hash)
        }
    assert out["times"] == "store" and out["verified"] is True
    for c, d in zip(out["configs"], two, strict=True):
        assert c["time_source"] == "store" and c["source"] == "store"
        assert (c["config"], c["time_ms"]) == stored[d.fingerprint]
    ran = [c for c in out["configs"] if c["alone_ms"] is not None]
    assert len(ran) == 1 and out["best_single"]["device"] == ran[0]["device"]
    assert out["best_single"]["time_ms"] == ran[0]["alone_ms"]


def test_model_times_are_the_roofline_times(tmp_path, two, capfd):
    db = str(tmp_path / "r.db")
    # The two sub-devices are alike (one fingerprint): the ceilings one roofline run measures
    # and stores are those both are planned from.
    assert two[0].fingerprint == two[1].fingerprint
    done = run_cli(capfd, "roofline", "--device", two[0].id, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    out = _split_json(capfd, db, "model")
    spec = builtin("convolution")
    full = spec.problem.merged(Problem.of(n=20000, mask=33))
    with Store(db) as store:
        ceilings = stored_ceilings(store)
    for c, d in zip(out["configs"], two, strict=True):
        predicted = roofline_ms(spec, full, Config.of(c["config"]), ceilings[d.fingerprint])
        assert c["time_source"] == "model" and c["time_ms"] == pytest.approx(predicted)
    assert out["times"] == "model" and out["verified"] is True
    assert sum(c["alone_ms"] is not None for c in out["configs"]) == 1


@pytest.mark.parametrize(
    ("times", "says"),
    [
        ("store", "no tuned result is stored for convolution on opencl:0:0.0"),
        ("model", "perfport roofline --device opencl:0:0.0"),
    ],
)
def test_times_that_cannot_be_had_are_one_line(tmp_path, times, says, capfd):
    db = tmp_path / "r.db"
    Store(str(db)).close()  # a database without results or ceilings
    done = run_cli(capfd, "split", "convolution", *TWO, *PROBLEM, "--times", times, "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    if times == "store":
        assert "perfport tune convolution --device opencl:0:0.0 --problem" in done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--times", "store"], "does not exist"),
        (["--times", "model", "--steps", "2", "--plan", "eq4"], "drop --times"),
    ],
)
def test_bad_times_write_nothing(tmp_path, args, says, capfd):
    db = tmp_path / "r.db"
    done = run_cli(capfd, "split", "stencil", *TWO, *args, "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert not db.exists()


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_a_time_that_is_not_positive_is_refused_before_anything_runs(two, monkeypatch, bad):
    monkeypatch.setattr(split_module, "run_parts", _never)
    times = {"opencl:0:0.0": bad, "opencl:0:0.1": 1.0}
    with pytest.raises(SpecError, match=r"opencl:0:0\.0's time is .* positive and finite"):
        split_run(builtin("convolution"), Problem.of(n=2000), two, times=times)


def test_a_given_time_for_a_device_not_in_the_split_is_refused_by_its_id():
    a, b = get_device("opencl:0:0.0"), get_device("opencl:0:0.1")
    times = {a.id: 1.0, b.id: 1.0, "opencl:9:9": 1.0}
    with pytest.raises(SpecError, match="opencl:9:9 is not a device of the split"):
        split_run(builtin("vector_add"), {"n": 1000}, [a, b], times=times, plan_from="eq4")
