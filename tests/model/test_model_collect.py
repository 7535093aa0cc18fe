"""The bridge from loopy to the measurement layer and ``perfport model collect``: specs from
loopy kernels, results in the store, a rerun measuring nothing, a bad kernel an outcome."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest
from model_support import LOOPY

from perfport.cli import main
from perfport.model.collection import Generator, KernelCollection, VariantArg

pytest.importorskip("loopy", reason=LOOPY)


def test_kernel_spec_takes_loopy_source_arguments_and_ndrange() -> None:
    from perfport._core.records import Problem
    from perfport.model.generators import make_gmem
    from perfport.model.measure import kernel_spec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = kernel_spec(make_gmem("float64", 64, 2, 2), "mk-gmem", Problem.of(nel=256))
    assert [(a.name, type(a).__name__) for a in spec.args] == [
        ("in0", "ArrayArg"), ("in1", "ArrayArg"), ("out", "ArrayArg"), ("nel", "ScalarArg"),
    ]  # fmt: skip
    assert [a.output for a in spec.args[:3]] == [False, False, True]
    assert "__kernel" in spec.source and spec.entry == "perfport_mk_gmem"
    geometry = spec.geometry(spec.env({}, {"nel": 256}))
    assert geometry.global_size == (256,) and geometry.local_size == (64,)


def _collect(capsys, db, *tags):
    assert main(["model", "collect", "--filter", *tags, "--db", str(db), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_collect_stores_results_and_a_rerun_measures_only_what_is_missing(tmp_path, capsys):
    pytest.importorskip("pyopencl")
    db = tmp_path / "c.db"
    first = _collect(capsys, db, "empty_kernel", "ngroups:16,32")
    assert first["counts"] == {"measured": 2, "stored": 0, "failed": 0}
    assert all(r["time_ms"] > 0 for r in first["results"])
    again = _collect(capsys, db, "empty_kernel", "ngroups:16,32,48")
    assert again["counts"] == {"measured": 1, "stored": 2, "failed": 0}
    assert main(["results", "--db", str(db), "--json"]) == 0
    assert "mk-empty_kernel" in capsys.readouterr().out


def test_a_kernel_that_fails_is_an_outcome_and_the_run_goes_on(tmp_path) -> None:
    pytest.importorskip("pyopencl")
    from perfport.devices import get_device
    from perfport.model.generators import make_empty
    from perfport.model.measure import CollectStatus, collect

    def make(lsize_0: int) -> object:
        if lsize_0 == 3:
            raise ValueError("cannot make this one")
        return make_empty(lsize_0)

    gen = Generator(
        "g",
        frozenset({"g"}),
        (VariantArg("lsize_0", (3, 16)), VariantArg("ngroups", (4,), open=True)),
        make,
        frozenset({"ngroups"}),
    )
    variants = KernelCollection([gen]).variants([])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = collect(variants, get_device(None), tmp_path / "c.db")
    assert [r.status for r in results] == [CollectStatus.FAILED, CollectStatus.MEASURED]
    assert "cannot make this one" in results[0].message


def test_a_collection_where_every_kernel_failed_exits_1_naming_the_sizes(tmp_path, capsys):
    # nel:100 under a work-group of 256 launched a global size of 0, and collect exited 0
    # with "0 measured, 0 stored, 1 failed" where 'model measure' exits 1.
    pytest.importorskip("pyopencl")
    tags = ["gmem_pattern", "dtype:float32", "lid_stride_0:1", "n_arrays:1", "nel:100"]
    assert (
        main(["model", "collect", "--filter", *tags, "--db", str(tmp_path / "c.db"), "--json"]) == 1
    )
    captured = capsys.readouterr()
    (result,) = json.loads(captured.out)["results"]
    assert result["status"] == "failed" and "outside the kernel's assumptions" in result["message"]
    assert "multiple of the work-group size" in result["message"]
    assert "no kernel of the collection could be measured" in captured.err


def test_collect_help_lists_every_generator_tag(capsys):
    # It listed flops, gmem, lmem, sync and overlap only: gstore, lmem_stride, lmem_hoist,
    # gmem_tile and work_removal were missing.
    from perfport.cli.model import GENERATOR_TAGS
    from perfport.model.generators import all_generators

    tags = {t for g in all_generators() for t in g.tags if t != g.name}
    assert set(GENERATOR_TAGS) == tags
    with pytest.raises(SystemExit):
        main(["model", "collect", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert all(f"{t}," in shown or f"{t}, or" in shown for t in GENERATOR_TAGS)


def test_bad_filters_are_one_line_errors(tmp_path, capsys) -> None:
    pytest.importorskip("pyopencl")
    assert (
        main(
            ["model", "collect", "--filter", "flops", "dtype:int8", "--db", str(tmp_path / "x.db")]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "dtype:int8 is not allowed" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()


def test_a_db_that_cannot_be_opened_is_one_error_before_anything_runs(tmp_path, capsys) -> None:
    pytest.importorskip("pyopencl")
    db = tmp_path / "missing-folder" / "x.db"
    assert (
        main(["model", "collect", "--filter", "empty_kernel", "ngroups:16", "--db", str(db)]) == 2
    )
    err = capsys.readouterr().err
    assert "folder" in err and "does not exist" in err and "--db" in err  # names the fix
    assert len(err.strip().splitlines()) == 1


def test_a_float_scalar_is_data_and_an_integer_scalar_a_size() -> None:
    import loopy as lp
    import numpy as np

    from perfport._core.records import Problem
    from perfport.model.measure import kernel_spec

    knl = lp.make_kernel(
        "{[i]: 0<=i<n}", "y[i] = a*x[i] + y[i]",
        [lp.ValueArg("a", np.float32), lp.GlobalArg("x,y", np.float32, shape="n"), ...],
        lang_version=(2018, 2),
    )  # fmt: skip
    knl = lp.split_iname(lp.assume(knl, "n mod 64 = 0"), "i", 64, outer_tag="g.0", inner_tag="l.0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = kernel_spec(knl, "app-saxpy", Problem.of(n=1024))
    scalars = {a.name: a.value for a in spec.args if type(a).__name__ == "ScalarArg"}
    assert scalars == {"a": "1", "n": "n"}
    assert spec.env({}, {"n": 1024})  # no size is asked for a


def test_ctrl_c_stops_the_collection_and_a_rerun_resumes(tmp_path, capsys, monkeypatch):
    # tune returns an interrupted campaign on Ctrl-C; the collection went on with the next
    # kernel, calling it a failure.
    pytest.importorskip("pyopencl")
    import perfport.model.measure as measure
    from perfport.store import CampaignStatus

    real, calls = measure.tune, []

    def interrupted_second(*args, **kwargs):
        result = real(*args, **kwargs)
        calls.append(result)
        if len(calls) == 2:  # as if Ctrl-C arrived while the second kernel ran
            return dataclasses.replace(result, status=CampaignStatus.INTERRUPTED)
        return result

    monkeypatch.setattr(measure, "tune", interrupted_second)
    db = tmp_path / "c.db"
    argv = ["model", "collect", "--filter", "empty_kernel", "ngroups:16,32,48", "--db", str(db)]
    assert main([*argv, "--json"]) == 130
    assert len(calls) == 2 and "interrupted" in capsys.readouterr().err
    monkeypatch.setattr(measure, "tune", real)
    again = _collect(capsys, db, "empty_kernel", "ngroups:16,32,48")
    assert again["counts"]["failed"] == 0 and again["counts"]["stored"] >= 1


def test_measure_says_so_when_no_size_could_be_measured(tmp_path, capsys, monkeypatch):
    pytest.importorskip("pyopencl")
    import perfport.model.measure as measure

    def fails(*args, **kwargs):
        raise RuntimeError("the build failed")

    monkeypatch.setattr(measure, "tune", fails)
    argv = [
        "model",
        "measure",
        "matmul-noprefetch",
        "--sizes",
        "n=64",
        "--db",
        str(tmp_path / "m.db"),
    ]
    assert main(argv) == 1
    assert "no size of app-matmul-noprefetch could be measured" in capsys.readouterr().err


def test_a_kernel_another_collection_measured_meanwhile_counts_as_stored(
    tmp_path, capsys, monkeypatch
):
    # Two concurrent collections of one store each reported every kernel as measured, though
    # tune's claims let only one of them measure it: the other found its result stored.
    pytest.importorskip("pyopencl")
    import perfport.model.measure as measure

    db = tmp_path / "c.db"
    first = _collect(capsys, db, "empty_kernel", "ngroups:16,32")
    assert first["counts"] == {"measured": 2, "stored": 0, "failed": 0}
    # As if the other collection stored them after this one read what the store held.
    monkeypatch.setattr(measure, "_stored", lambda db, device: {})
    again = _collect(capsys, db, "empty_kernel", "ngroups:16,32")
    assert again["counts"] == {"measured": 0, "stored": 2, "failed": 0}
    assert [r["time_ms"] for r in again["results"]] == [r["time_ms"] for r in first["results"]]
