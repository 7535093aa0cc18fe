"""Kernels loopy cannot count: ``lmem_stride_pattern`` at a stride whose local footprint isl
cannot make convex (it failed every evaluation of GPU session d) counts now; and a kernel that
still cannot be counted is skipped, said and listed, while the rest is evaluated."""

from __future__ import annotations

import json
import warnings

import pytest
from model_support import LOOPY
from test_model_fit import APPS, TRAIN, _data_file, _model_file

from perfport._core.records import Problem
from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

CONVEX = "Could not find convex representation of set"


@pytest.mark.parametrize("stride", [2, 32])
def test_lmem_stride_counts_at_the_strides_that_failed(stride):
    from perfport.model import FeatureSet, gather
    from perfport.model.generators import all_generators

    (g,) = [g for g in all_generators() if g.name == "lmem_stride_pattern"]
    k = g.kernel(Problem.of({"dtype": "float32", "lsize_0": 256, "lid_stride_0": stride,
                             "nel": 4096, "m": 64}))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = gather(k.program)
    # symbolic in the sizes, so one count serves every size the collection measures
    assert stats.params == ("m", "nel")
    assert not [n for n in stats.approximations if "footprint" in n]
    assert {m.variable for m in stats.mem if m.footprint} == {"a", "out"}
    features = FeatureSet()
    for nel, m in [(4096, 64), (8192, 256)]:
        at = stats.evaluate({"nel": nel, "m": m})
        local = f"f_mem_access_local_float32_load_lstrides:{{0:{stride}}}"
        assert features.value(local, at) == m * nel / 32


def _failing_features(word: str):
    """Kernel features whose counting raises as loopy did for programs named with ``word``."""
    from perfport.model import StatsCache, gather
    from perfport.model.dataset import KernelFeatures

    def gatherer(program, subgroup_size):
        if word in next(iter(program.entrypoints)):
            raise NotImplementedError(CONVEX)
        return gather(program, subgroup_size)

    return KernelFeatures(StatsCache(gatherer=gatherer))


EXTRA = [("mk-lmem_stride_pattern", {"dtype": "float32", "lsize_0": 256, "lid_stride_0": 2,
                                     "nel": n, "m": 64}) for n in (4096, 8192)]  # fmt: skip


def _with_extra(tmp_path, train_times):
    """The fit tests' data plus two uncountable runs, timed absurdly: were they used, the
    calibration would be off and so would every prediction."""
    from perfport.model.dataset import TimedKernel, read_data, write_data

    path = _data_file(tmp_path, train_times, 1.0)
    rows = read_data(path) + [TimedKernel("Some CPU", "fp1", k, Problem.of(p), 1000.0)
                              for k, p in EXTRA]  # fmt: skip
    write_data(rows, path)
    return path


@pytest.fixture(scope="module")
def train_times():
    from test_model_fit import _times

    return _times(TRAIN)


def test_evaluate_skips_an_uncountable_kernel_and_says_so(tmp_path, capsys, monkeypatch,
                                                           train_times):  # fmt: skip
    import perfport.cli.model_fit as fit

    monkeypatch.setattr(fit, "_features", lambda *_: _failing_features("lmem_stride"))
    data, model = _with_extra(tmp_path, train_times), _model_file(tmp_path)
    assert main(["model", "evaluate", "--data", str(data), "--model", str(model), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    (skipped,) = report["skipped"]
    assert skipped["kernel"] == "mk-lmem_stride_pattern" and skipped["n_runs"] == 2
    assert skipped["variant"]["lid_stride_0"] == 2 and CONVEX in skipped["reason"]
    (line,) = [x for x in captured.err.splitlines() if "skipped" in x]
    assert "mk-lmem_stride_pattern" in line and CONVEX in line
    assert report["geomean_rel_error"] == pytest.approx(0.0, abs=1e-4)
    assert len(report["results"]) == len({k for k, _ in APPS})


def test_an_uncountable_application_is_skipped_and_the_others_evaluated(tmp_path, train_times):
    from perfport.model import Model
    from perfport.model.dataset import read_data
    from perfport.model.evaluate import evaluate

    runs = read_data(_data_file(tmp_path, train_times, 1.0))
    model = Model.load(_model_file(tmp_path))
    found = evaluate(model, runs, _failing_features("prefetch"))
    assert [r.variant for r in found.results] == ["matmul-noprefetch"]
    assert [(k.kernel, k.n_runs) for k in found.skipped] == [("app-matmul-prefetch", 2)]


def test_stats_of_an_uncountable_kernel_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    from perfport.model import cache

    def raising(program, subgroup_size):
        raise NotImplementedError(CONVEX)

    monkeypatch.setattr(cache, "gather", raising)
    rest = cache.StatsCache.__init__.__defaults__[2:]  # the sub-group width's default
    monkeypatch.setattr(cache.StatsCache.__init__, "__defaults__", (None, raising, *rest))
    assert main(["model", "stats", "matmul-prefetch", "--no-cache", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "loopy cannot count" in err and CONVEX in err


def test_the_ranker_ranks_an_uncounted_configuration_last():
    pytest.importorskip("scipy")
    import numpy as np

    from perfport.model import Measurement, Model
    from perfport.model.guided import ModelRanker

    model = Model("f_t", "p_a * f_sync_kernel_launch")
    base = [Measurement(f"mk{i}", {}, {"f_sync_kernel_launch": float(i)}, 1e-3 * i)
            for i in (1, 2, 3)]  # fmt: skip
    ranker = ModelRanker(model, base, [{"f_sync_kernel_launch": 1.0}, None])
    predicted = ranker.predict()
    assert predicted[0] == pytest.approx(1e-3) and np.isnan(predicted[1])
    ranker.refit({0: 1.0, 1: 5.0})  # the uncounted one's time has no features to fit
    assert ranker.refits == 1


NONCONVEX = '''
import loopy as lp
import numpy as np

knl = lp.make_kernel(
    "{[g,k]: 0<=g<nel and 0<=k<m}",
    """
    <float32> acc = 0 {id=zero}
    acc = acc + a[2*(g % 256) + k % 8] {id=sum, dep=zero}
    out[g] = acc {dep=sum}
    """,
    [lp.GlobalArg("a", np.float32, shape=("520",)), lp.GlobalArg("out", np.float32, shape=("nel",)),
     lp.ValueArg("nel,m", np.int32)],
    assumptions="nel mod 256 = 0 and nel >= 256 and m >= 1", lang_version=(2018, 2))
kernel = lp.split_iname(knl, "g", 256, outer_tag="g.0", inner_tag="l.0")
'''


def test_loopys_prints_stay_out_of_json(tmp_path, capsys):
    # loopy prints the pieces of a footprint it cannot make convex to stdout ("PIECES:").
    path = tmp_path / "nonconvex.py"
    path.write_text(NONCONVEX)
    argv = ["model", "stats", str(path), "--problem", "nel=4096", "m=64", "--json", "--no-cache"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["sizes"] == {"nel": 4096, "m": 64}
    assert "PIECES" in captured.err


GATHER = """
import loopy as lp
import numpy as np

knl = lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = x[idx[i]]",
                     [lp.GlobalArg("x", np.float32, shape=("m",)),
                      lp.GlobalArg("y", np.float32, shape=("n",)),
                      lp.GlobalArg("idx", np.int32, shape=("n",)),
                      lp.ValueArg("n,m", np.int32)],
                     assumptions="n >= 1", lang_version=(2018, 2))
kernel = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
"""


def test_an_indirect_access_is_named_as_one_loopy_cannot_count(tmp_path, capsys):
    # loopy's own error was "FlattenMapper encountered invalid foreign object: None"
    path = tmp_path / "gather.py"
    path.write_text(GATHER)
    argv = ["model", "stats", str(path), "--problem", "n=256", "m=5", "--no-cache", "--json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "FlattenMapper" not in err
    assert "indexes x by the values of idx (an indirect access)" in err
    assert "x[idx[" in err
