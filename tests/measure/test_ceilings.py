"""Device ceilings: sized by the device, measured by the Runner, stored per fingerprint."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from perfport import tune
from perfport._core.metrics import Ceilings
from perfport.measure.ceilings import ceiling_problem, ceiling_spec, measure_ceilings
from perfport.space import kernel_space
from perfport.store import Store, save_ceilings, stored_ceilings

KEYS = {"device", "copy_GBps", "read_GBps", "write_GBps", "fp32_GFLOPs", "fp64_GFLOPs"}


def test_sizes_follow_the_device(cpu) -> None:
    gpu = dataclasses.replace(cpu, compute_units=132, global_mem_bytes=80 << 30)
    small, big = ceiling_problem(cpu), ceiling_problem(gpu)
    assert small["n"] * 4 >= 32 << 20 and big["n"] * 4 == 512 << 20  # capped at 512 MiB
    assert big["lanes"] == 2048 * 132 and small["lanes"] == 2048 * cpu.compute_units
    tight = dataclasses.replace(gpu, global_mem_bytes=1 << 30)
    assert ceiling_problem(tight)["n"] * 4 <= (1 << 30) // 8  # an eighth of global memory
    space = kernel_space(ceiling_spec(cpu), small, cpu)
    assert space.report.legal == 8  # bandwidth with 4- and 16-byte accesses, and two FMAs
    assert all(int(small["n"]) // c["vec"] % c["wg"] == 0 for c in map(space.config, range(8)))


def test_stored_ceilings_give_every_result_its_roofline_fraction(cpu, db) -> None:
    first = tune("vector_add", problem={"n": 4096}, budget=2, db=db, device=cpu)
    assert first.best is not None and first.roofline is None  # nothing stored yet
    assert set(first.metrics(first.best)) == {"GBps", "GFLOPs", "roofline"}
    rates = first.metrics(first.best)
    ceilings = Ceilings(cpu.fingerprint, 2 * (rates["GBps"] or 0), 1, 1, 1e6, None)
    with Store(db) as store:
        save_ceilings(store, cpu, ceilings, {})
        assert stored_ceilings(store) == {cpu.fingerprint: ceilings}
    again = tune("vector_add", problem={"n": 4096}, budget=2, db=db, device=cpu)
    assert again.roofline == pytest.approx(0.5)  # half the copy bandwidth (fp32 peak is far)
    assert again.to_json()["ceilings"]["copy_GBps"] == ceilings.copy_GBps


@pytest.mark.slow
def test_roofline_measures_stores_and_prints_json(cpu, db) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "roofline", "--device", cpu.id, "--db", str(db), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) >= KEYS and out["device"] == cpu.id
    assert all(out[k] > 0 for k in KEYS - {"device", "fp64_GFLOPs"})
    with Store(db) as store:
        assert stored_ceilings(store)[cpu.fingerprint].copy_GBps == out["copy_GBps"]


def test_a_failing_benchmark_is_reported_not_stored(cpu, monkeypatch) -> None:
    import perfport.measure.ceilings as module

    monkeypatch.setattr(module, "_SOURCE", "KERNEL void ceiling(GLOBAL float* a) { oops }")
    ceilings, runs = measure_ceilings(dataclasses.replace(cpu))
    assert ceilings is None and runs[0].outcome == "compile_error" and runs[0].rate is None
