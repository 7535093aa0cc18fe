"""The ``tile_halo_pattern`` generator (``perfport.model.generators_tile``): 2-D tile loads with
a halo into local memory, and ``paper-linear-tile.json``, which prices loads of that kind by
a cost per load and per row segment wherever no work-removal cost of their own applies."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_support import LOOPY

from perfport.cli import main
from perfport.model import Model, gather, input_features
from perfport.model.collection import KernelCollection, MatchCondition

pytest.importorskip("loopy", reason=LOOPY)

ROOT = Path(__file__).parents[2]
MODEL = ROOT / "src/perfport/datasets/model/paper-linear-tile.json"
EXPERIMENT = ROOT / "experiments/2026-11-26-model-tile"
TILE = "f_mem_access_global_float32_load_lstrides:{0:1;1:>1}_gstrides:{0:>0;1:>0}_afr:>1"


def _collection(match: MatchCondition = MatchCondition.SUPERSET) -> KernelCollection:
    from perfport.model.generators import all_generators

    return KernelCollection(all_generators(), match)


def _kernel(lsize: int, halo: int, ng: int) -> Any:
    tags = ["tile_halo_pattern", f"lsize:{lsize}", f"halo:{halo}", f"ng:{ng}"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (k,) = _collection().generate_kernels(tags)
    return k


def _stats(program: Any, sizes: dict[str, int]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gather(program).evaluate(sizes)


def test_the_tags_select_only_the_tile_generator() -> None:
    chosen = _collection(MatchCondition.INTERSECT).matching(["gmem_tile"])
    assert [g.name for g in chosen] == ["tile_halo_pattern"]
    assert "tile_halo_pattern" not in [g.name for g in _collection().matching(["gmem"])]
    variants = _collection().variants(["gmem_tile", "lsize:8,27", "halo:1", "ng:3"])
    assert [dict(a)["lsize"] for _, a in variants] == [8, 27]
    with pytest.raises(Exception, match="lsize:7 is not allowed"):
        _collection().variants(["gmem_tile", "lsize:7"])


@pytest.mark.parametrize(("lsize", "halo"), [(16, 1), (11, 1), (8, 2)])
def test_the_tile_load_is_counted_as_a_halo_tile_load(lsize: int, halo: int) -> None:
    ng = 5
    k = _kernel(lsize, halo, ng)
    stats = _stats(k.program, k.sizes)
    inner, pitch = lsize - 2 * halo, (lsize - 2 * halo) * ng + 2 * halo
    (load,) = [
        m for m in stats.mem if m.pattern.mtype == "global" and m.pattern.direction == "load"
    ]
    assert load.count == (lsize * ng) ** 2  # one per work-item
    assert load.lstrides == {0: 1, 1: pitch}
    assert load.gstrides == {0: inner, 1: inner * pitch}
    assert load.afr == pytest.approx((lsize * ng) ** 2 / pitch**2)  # the halo, read twice
    model = Model.load(MODEL)
    features = input_features(model, stats)
    assert features[TILE] == load.count
    assert features["f_thread_groups"] == ng * ng
    assert features["f_mem_access_global_float32_store"] == (lsize * ng) ** 2
    assert features["f_sync_barrier_local"] == 1


def _priced(model: Model, features: dict[str, float], parameter: str) -> float:
    params = dict.fromkeys(model.parameters, 0.0)
    params[parameter] = 1.0
    return float(model.evaluate(params, features))


def test_the_tile_model_prices_tile_loads_without_a_cost_of_their_own() -> None:
    from perfport.model.paper_kernels import finite_diff

    model = Model.load(MODEL)
    assert {"p_tload", "p_trow", "p_gload", "p_uFD16", "p_exposed"} <= set(model.parameters)
    k = _kernel(12, 1, 4)
    tile = input_features(model, _stats(k.program, k.sizes))
    assert _priced(model, tile, "p_tload") == 12 * 12 * 16
    assert _priced(model, tile, "p_trow") == pytest.approx(12 * 16)  # rows: lsize per group
    assert _priced(model, tile, "p_gload") == 0
    for lsize, own in ((16, True), (22, False)):
        n = 5 * (lsize - 2)
        fd = input_features(model, _stats(finite_diff(lsize), {"n": n}))
        loads = fd["f_mem_access_global_float32_load"]
        assert _priced(model, fd, "p_tload") == (0 if own else loads)
        assert _priced(model, fd, "p_trow") == pytest.approx(0 if own else lsize * 25)
        assert _priced(model, fd, "p_gload") == 0
        if own:
            assert _priced(model, fd, f"p_uFD{lsize}") == loads


def test_the_shipped_model_is_what_make_model_writes(tmp_path: Path) -> None:
    sys.path.insert(0, str(EXPERIMENT))
    try:
        import make_model  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(EXPERIMENT))
    base = Model.load(MODEL.with_name("paper-linear-resident.json"))
    assert make_model.tile_model(base) == Model.load(MODEL)


def test_the_kernel_stores_the_tile_it_loaded_on_pocl() -> None:
    cl = pytest.importorskip("pyopencl")
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    lsize, halo, ng = 11, 2, 3
    k = _kernel(lsize, halo, ng)
    inner = lsize - 2 * halo
    u = np.arange((inner * ng + 2 * halo) ** 2, dtype=np.float32).reshape(inner * ng + 2 * halo, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, (out,) = k.program(queue, u=u, ng=ng)
    out = out.get() if hasattr(out, "get") else out
    for gi in range(ng):
        for gj in range(ng):
            tile = u[inner * gi : inner * gi + lsize, inner * gj : inner * gj + lsize]
            got = out[lsize * gi : lsize * (gi + 1), lsize * gj : lsize * (gj + 1)]
            np.testing.assert_array_equal(got, tile[::-1, :])


def test_collect_measures_the_tile_kernels_on_pocl(tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("pyopencl")
    argv = ["model", "collect", "--filter", "gmem_tile", "lsize:8,27", "halo:1", "ng:4",
            "--match", "intersect", "--db", str(tmp_path / "c.db"), "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"] == {"measured": 2, "stored": 0, "failed": 0}
    assert all(r["time_ms"] > 0 for r in report["results"])


@pytest.mark.slow
def test_the_experiment_chain_runs_on_pocl(tmp_path: Path) -> None:
    pytest.importorskip("pyopencl")
    env = {
        **os.environ,
        "OUT": str(tmp_path / "out"),
        "DB": str(tmp_path / "model.db"),
        "DEVICE": os.environ.get("PERFPORT_TEST_DEVICE", "opencl:0:0"),
        "LSIZES": "8 11",
        "SIDES": "64 128",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    }

    def run(*argv: str) -> str:
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("bash", str(EXPERIMENT / "gpu_run.sh"))
    out = tmp_path / "out"
    counts = json.loads((out / "collect-tile-11.json").read_text())["counts"]
    assert counts == {"measured": 2, "stored": 0, "failed": 0}  # ng 6 and 12
    assert "| 11 | 1 | 6 | 4.36e+03 | 16 |" in (out / "analyse.txt").read_text()
    # PoCL rows go onto PoCL's shipped data (one device); the replay on a smoke store
    data, guided = tmp_path / "data.csv", tmp_path / "guided.db"
    pocl = ROOT / "src/perfport/datasets/model/pocl-paper.csv"
    with pocl.open() as f:
        fingerprint = next(csv.DictReader(f))["device_fingerprint"]
    if fingerprint not in run(sys.executable, "-m", "perfport", "devices", "--json"):
        pytest.skip("this PoCL device is not the one pocl-paper.csv was measured on")
    run(sys.executable, str(EXPERIMENT / "make_data.py"), str(out), "--base", str(pocl),
        "--out", str(data))  # fmt: skip
    run(sys.executable, "benchmarks/model_guided.py", "measure", "--smoke", "--db", str(guided))
    text = run(sys.executable, str(EXPERIMENT / "analyse.py"), "--data", str(data),
               "--guided-db", str(guided), "--smoke", "--models", "paper-linear-tile",
               "--out-dir", str(tmp_path / "an"))  # fmt: skip
    assert "| paper-linear-tile | " in text and "| paper-linear-tile-nonnegative | " in text
    assert "p_tload" in text and "FD before any refit" in text
