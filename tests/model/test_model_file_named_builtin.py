"""A kernel file named like a built-in application (``matmul-prefetch.py``) is stored as
``app-matmul-prefetch`` too: ``model evaluate`` tells its measurements from the built-in's by
the code's source hash, skips them with a warning and keeps the built-in's, even where the
file's point is faster."""

from __future__ import annotations

import json
import warnings

import pytest
from model_support import LOOPY

from perfport._core.records import Problem

pytest.importorskip("loopy", reason=LOOPY)

KERNEL = "app-matmul-prefetch"


def _builtin_hash() -> str:
    from perfport.model.apps import load_program
    from perfport.model.measure import kernel_spec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel_spec(load_program("matmul-prefetch"), KERNEL, Problem.of(n=64)).source_hash


def _rows(tmp_path, builtin: str) -> list:
    from perfport.model.dataset import read_data

    # the file's run is far faster at the same size: it used to be the one point kept
    rows = [{"device": "d", "kernel": KERNEL, "problem": {"n": 64}, "time_ms": 5.0,
             "kernel_hash": builtin},
            {"device": "d", "kernel": KERNEL, "problem": {"n": 64}, "time_ms": 0.0004,
             "kernel_hash": "f" * 64}]  # fmt: skip
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(rows))
    return read_data(path)


def test_a_file_named_like_a_built_in_is_skipped_and_the_built_in_kept(tmp_path):
    from perfport.model.dataset import KernelFeatures

    builtin = _builtin_hash()
    runs = _rows(tmp_path, builtin)
    assert sorted(r.time_ms for r in runs) == [0.0004, 5.0]  # both kept: other code
    kept, skipped = KernelFeatures().usable(runs)
    assert [(r.kernel_hash, r.time_ms) for r in kept] == [(builtin, 5.0)]
    (file,) = skipped
    assert file.kernel == KERNEL and file.n_runs == 1
    assert "other code than the built-in matmul-prefetch" in file.reason
    assert "--kernel FILE.py" in file.reason


def test_runs_without_a_hash_are_taken_by_name_as_before(tmp_path):
    from perfport.model.dataset import KernelFeatures, TimedKernel

    run = TimedKernel("d", "d", KERNEL, Problem.of(n=64), 5.0)
    kept, skipped = KernelFeatures().usable([run])
    assert kept == [run] and not skipped
