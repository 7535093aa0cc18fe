"""The ``lmem_hoist_pattern`` generator: the measurement kernel that tests the issued-load rule
(``perfport.model.hoist``) apart from the application kernels. Its three variants do the same
adds; loopy counts ``invariant`` as ``dependent``, the rule counts it as ``manual``."""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_support import LOOPY

from perfport.cli import main
from perfport.model import FeatureSet, Model, gather, input_features
from perfport.model.collection import KernelCollection

pytest.importorskip("loopy", reason=LOOPY)

HOISTED_MODEL = Path(__file__).parents[2] / "src/perfport/datasets/model/paper-linear-hoisted.json"
NEL, M, TRIPS = 1024, 16, 8


def _kernel(index: str, nel: int = NEL, m: int = M, trips: int = TRIPS) -> Any:
    from perfport.model.generators import all_generators

    tags = ["lmem_hoist_pattern", "dtype:float32", f"index:{index}", f"nel:{nel}", f"m:{m}",
            f"trips:{trips}"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (k,) = KernelCollection(all_generators()).generate_kernels(tags)
    return k


def _stats(index: str, trips: int = TRIPS) -> Any:
    return _counted(index, trips)


@functools.cache  # the tests read each variant's counts several times; loopy counts once
def _counted(index: str, trips: int) -> Any:
    k = _kernel(index, trips=trips)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gather(k.program).evaluate(k.sizes)


def _local_load(stats: Any) -> Any:
    (load,) = [m for m in stats.mem if m.pattern.mtype == "local" and m.pattern.direction == "load"]
    return load


@pytest.mark.parametrize("trips", [4, 8])
def test_the_rule_counts_the_invariant_load_once_per_outer_iteration(trips: int) -> None:
    sub_groups = NEL / 32
    loads = {i: _local_load(_stats(i, trips)) for i in ("invariant", "dependent", "manual")}
    # loopy: once per (k, j) for both in-loop reads; once per k for the hand-hoisted one
    assert loads["invariant"].count == loads["dependent"].count == sub_groups * M * trips
    assert loads["manual"].count == sub_groups * M
    # the rule: the invariant read is issued as the hand-hoisted one, the control unchanged
    assert loads["invariant"].issued == loads["manual"].issued == sub_groups * M
    assert loads["dependent"].issued == loads["dependent"].count


def test_the_variants_differ_only_in_local_loads() -> None:
    features = FeatureSet()
    names = ["f_op_float32_add", "f_mem_access_global_float32_load",
             "f_mem_access_global_float32_store", "f_sync_barrier_local", "f_thread_groups",
             "f_mem_access_local_float32_store"]  # fmt: skip
    values = {i: features.values(names, _stats(i)) for i in ("invariant", "dependent", "manual")}
    assert values["invariant"] == values["dependent"] == values["manual"]
    assert values["manual"]["f_op_float32_add"] == NEL / 32 * (M * TRIPS + 8)  # sums, fill


def test_the_hoisted_model_predicts_the_rule_and_the_older_one_does_not() -> None:
    model = Model.load(HOISTED_MODEL)
    params = dict.fromkeys(model.parameters, 1e-12)
    times = {
        i: float(model.evaluate(params, input_features(model, _stats(i))))
        for i in ("invariant", "dependent", "manual")
    }
    assert times["invariant"] == pytest.approx(times["manual"])
    local = (TRIPS - 1) * M * NEL / 32 * 1e-12  # conflict-free: one transaction per load
    assert times["dependent"] - times["invariant"] == pytest.approx(local)
    unhoisted = Model(model.output, model.expression.replace("_float32_hoisted", "_float32"))
    before = {
        i: float(unhoisted.evaluate(params, input_features(unhoisted, _stats(i))))
        for i in ("invariant", "dependent")
    }
    assert before["invariant"] == pytest.approx(before["dependent"])


@pytest.mark.parametrize("index", ["invariant", "dependent", "manual"])
def test_it_sums_the_words_it_says_on_pocl(index: str) -> None:
    cl = pytest.importorskip("pyopencl")
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    nel, m, trips = 512, 5, 3
    k = _kernel(index, nel, m, trips)
    a = (np.arange(nel) % 7).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, (out,) = k.program(queue, a=a, m=m, nel=nel)
    out = out.get() if hasattr(out, "get") else out
    # loc[f, l] = a[g] + f for work-item l of g's group; row k % 8 or (k + j) % 8 read
    rows = [(q + (j if index == "dependent" else 0)) % 8 for q in range(m) for j in range(trips)]
    expected = a.astype(np.float64) * len(rows) + sum(rows)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_collect_measures_every_variant_on_pocl(tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("pyopencl")
    argv = ["model", "collect", "--filter", "lmem_hoist_pattern", "dtype:float32", "nel:1024",
            "m:4", "--db", str(tmp_path / "c.db"), "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"] == {"measured": 3, "stored": 0, "failed": 0}
    assert {r["args"]["index"] for r in report["results"]} == {"invariant", "dependent", "manual"}
