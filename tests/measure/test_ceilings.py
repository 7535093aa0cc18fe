"""Device ceilings: sized by the device, measured by the Runner, stored per fingerprint."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from rich.console import Console

from perfport import tune
from perfport._core.metrics import Ceilings
from perfport.cli.render import tune_report
from perfport.measure.ceilings import (
    ceiling_problem,
    ceiling_spec,
    copy_ladder,
    measure_ceilings,
)
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
    ladder = copy_ladder(cpu, int(small["n"]))
    # bandwidth with 4- and 16-byte accesses, two FMAs, and the copy's ladder both ways
    assert space.report.legal == 8 + 2 * len(ladder)
    configs = [space.config(i) for i in range(space.report.legal)]
    assert all(
        (c["count"] or int(small["n"])) // c["vec"] % c["wg"] == 0 for c in configs if c["op"] < 3
    )


def test_the_copy_ladder_climbs_by_powers_of_4_from_1_mib_below_the_large_array(cpu) -> None:
    gpu = dataclasses.replace(cpu, compute_units=132, global_mem_bytes=80 << 30)
    n = int(ceiling_problem(gpu)["n"])  # 512 MiB of floats
    assert [c * 4 >> 20 for c in copy_ladder(gpu, n)] == [1, 4, 16, 64, 256]
    assert [c * 4 >> 20 for c in copy_ladder(gpu, (32 << 20) // 4)] == [1, 4, 16]
    assert copy_ladder(gpu, (1 << 20) // 4) == ()  # nothing below a 1 MiB array


def test_stored_ceilings_give_every_result_its_roofline_fraction(cpu, db) -> None:
    first = tune("vector_add", problem={"n": 4096}, budget=2, db=db, device=cpu)
    assert first.best is not None and first.roofline is None  # nothing stored yet
    assert set(first.metrics(first.best)) == {"GBps", "GFLOPs", "roofline", "roofline_same_bytes"}
    rates = first.metrics(first.best)
    ceilings = Ceilings(cpu.fingerprint, 2 * (rates["GBps"] or 0), 1, 1, 1e6, None)
    with Store(db) as store:
        save_ceilings(store, cpu, ceilings, {})
        assert stored_ceilings(store) == {cpu.fingerprint: ceilings}
    again = tune("vector_add", problem={"n": 4096}, budget=2, db=db, device=cpu)
    assert again.roofline == pytest.approx(0.5)  # half the copy bandwidth (fp32 peak is far)
    assert again.to_json()["ceilings"]["copy_GBps"] == ceilings.copy_GBps
    # stored without a curve (as before the ladder): the large-array fraction only
    assert again.metrics(again.best)["roofline_same_bytes"] is None


def test_a_stored_curve_gives_the_fraction_of_a_copy_of_the_same_bytes(cpu, db) -> None:
    first = tune("vector_add", problem={"n": 4096}, budget=2, db=db, device=cpu)
    gbps = first.metrics(first.best)["GBps"] or 0.0
    moved = 3 * 4 * 4096  # a + b read, c written
    curve = ((moved / 4, gbps / 2), (moved * 4, gbps * 8), (moved * 64, 4 * gbps))
    ceilings = Ceilings(cpu.fingerprint, 4 * gbps, 1, 1, 1e6, None, copy_curve=curve)
    with Store(db) as store:
        save_ceilings(store, cpu, ceilings, {})
        assert stored_ceilings(store)[cpu.fingerprint].copy_curve == curve
    again = tune("vector_add", problem={"n": 4096}, budget=2, db=db, device=cpu)
    values = again.metrics(again.best)
    assert values["roofline"] == pytest.approx(0.25)
    # log-log halfway between (moved/4, g/2) and (4 moved, 8 g): a copy of `moved` bytes runs 2 g
    assert values["roofline_same_bytes"] == pytest.approx(0.5)
    assert again.to_json()["ceilings"]["copy_GBps_by_bytes"] == [list(p) for p in curve]
    assert again.to_json()["roofline_same_bytes"] == values["roofline_same_bytes"]
    console = Console(record=True, width=200)
    tune_report(console, again)
    text = console.export_text()
    assert "reaches 25% of this device's measured ceiling, at " in text
    assert "and 50% of a copy of the same bytes on this device (50% is left)" in text
    with Store(db) as store:  # a ceiling below the kernel: it said a bare "at or above ..."
        store._conn.execute("DELETE FROM ceilings")  # a later run keeps the higher stored one
        save_ceilings(store, cpu, Ceilings(cpu.fingerprint, gbps / 4, 1, 1, 1e6, None), {})
    console = Console(record=True, width=200)
    tune_report(console, tune("vector_add", problem={"n": 4096}, budget=2, db=db, device=cpu))
    text = console.export_text()
    assert "roofline: the best reaches 400% of this device's measured ceiling, at " in text
    assert "; at or above it" in text


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
    curve = out["copy_GBps_by_bytes"]
    assert [b for b, _ in curve] == sorted(b for b, _ in curve) and len(curve) >= 2
    assert curve[-1] == [8 * ceiling_problem(cpu)["n"], out["copy_GBps"]]  # ends at the ceiling
    with Store(db) as store:
        stored = stored_ceilings(store)[cpu.fingerprint]
        assert stored.copy_GBps == out["copy_GBps"]
        assert [list(p) for p in stored.copy_curve] == curve


def test_a_failing_benchmark_is_reported_not_stored(cpu, monkeypatch) -> None:
    import perfport.measure.ceilings as module

    monkeypatch.setattr(
        module,
        "_SOURCE",
        "KERNEL void ceiling(GLOBAL float* a, GLOBAL float* b, int n, float m) { oops }",
    )
    ceilings, runs = measure_ceilings(dataclasses.replace(cpu))
    assert ceilings is None and runs[0].outcome == "compile_error" and runs[0].rate is None


def test_ceilings_stored_before_the_curve_migrate_and_still_give_the_large_fraction(
    cpu, db
) -> None:
    import sqlite3

    from perfport.store import SCHEMA_VERSION

    ceilings = Ceilings(cpu.fingerprint, 100.0, 1, 1, 1e6, None, measured=1.0)
    with Store(db) as store:
        save_ceilings(store, cpu, ceilings, {})
    conn = sqlite3.connect(db)  # the database as the version before the curve left it
    conn.execute("ALTER TABLE ceilings DROP COLUMN copy_curve")
    conn.execute("DROP TABLE campaign_specs")  # schema 11's, which version 8 lacked
    conn.execute("PRAGMA user_version = 8")  # migration 8 -> 9 added the curve
    conn.commit()
    conn.close()
    with Store(db) as store:
        assert stored_ceilings(store) == {cpu.fingerprint: ceilings}
        assert store.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION


def test_a_later_run_that_measures_less_keeps_the_stored_ceilings(cpu, db) -> None:
    """A run on a busy machine replaced the stored ceilings with half of them, and every
    roofline fraction of the device doubled (0.96 to 1.98)."""
    idle = Ceilings(cpu.fingerprint, 20.0, 18.0, 15.0, 12.0, 11.0, 1.0, ((1e6, 30.0), (1e8, 20.0)))
    busy = Ceilings(cpu.fingerprint, 9.0, 19.0, 7.0, 5.0, None, 2.0, ((1e6, 12.0), (4e6, 10.0)))
    with Store(db) as store:
        assert save_ceilings(store, cpu, idle, {}) == (idle, ())
        stored, kept = save_ceilings(store, cpu, busy, {})
        assert kept == ("copy_GBps", "write_GBps", "fp32_GFLOPs", "fp64_GFLOPs")
        assert stored == stored_ceilings(store)[cpu.fingerprint]
    assert (stored.copy_GBps, stored.read_GBps, stored.write_GBps) == (20.0, 19.0, 15.0)
    assert (stored.fp32_GFLOPs, stored.fp64_GFLOPs, stored.measured) == (12.0, 11.0, 2.0)
    assert stored.copy_curve == ((1e6, 30.0), (4e6, 10.0), (1e8, 20.0))
