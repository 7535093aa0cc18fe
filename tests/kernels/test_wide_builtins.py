"""The built-ins with work per work-item and direct loads verify against numpy on PoCL, and
the kernels the papers study keep their identity and their spaces as a subset."""

import numpy as np
import pytest

from perfport._core import Config, Outcome, Problem
from perfport.devices import open_session
from perfport.kernels import builtin
from perfport.kernels.stencil_cross import cross_mean_numpy
from perfport.measure import RunSettings, Timing, TrialEngine
from perfport.measure.data import reference_outputs
from perfport.space import kernel_space

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))

# The code of the kernels behind stored campaigns (the work-group-size data, Lawson's 640):
# a change would orphan their results, so new tunables live in new built-ins.
PAPER_SOURCES = {
    "stencil": "72d720c0bba35ca407425a0bb4828d77b0fa863429af172d6a673e85699e961a",
    "matmul": "3696bf1615a939a866c8b051c675ac8e24971673f0fce57d8c78f53451e85067",
    "convolution": "1092fcbd009d25b254de12d66fa37821d3f06d0c18fc962071629ca5401f195d",
    "convolution2d": "890120651a9038e5af192ab3d9b987da7cbe24885f74848db0cc31daeb460d16",
}


def _verify(cpu, name, problem, configs):
    spec = builtin(name)
    engine = TrialEngine(open_session(cpu), spec, Problem.of(problem), QUICK)
    engine.use_expected(reference_outputs(spec, engine.problem, QUICK.seed), "numpy reference")
    for values in configs:
        m = engine.run(Config.of(values))
        assert m.outcome is Outcome.OK, (values, m.message)


def test_paper_kernels_keep_their_code():
    assert {n: builtin(n).source_hash for n in PAPER_SOURCES} == PAPER_SOURCES


def _sw(wc, wr, rows, vw, variant, access="scalar"):
    return {"wc": wc, "wr": wr, "rows": rows, "vw": vw, "variant": variant, "access": access}


STENCIL_CASES = [
    (  # sizes no tile divides: a ragged last run of columns and rows in every variant
        {"width": 67, "height": 45},
        [
            _sw(32, 4, 1, 1, "tile"),
            _sw(8, 4, 4, 4, "tile"),
            _sw(16, 2, 2, 8, "direct"),
            _sw(4, 8, 8, 2, "direct"),
            _sw(1, 1, 1, 1, "direct"),
        ],
    ),
    (  # uneven borders, padding outside the matrix, integers
        {
            "width": 40,
            "height": 33,
            "north": 3,
            "south": 0,
            "east": 5,
            "west": 2,
            "boundary": "pad",
            "pad": 7,
            "dtype": "int",
        },
        [_sw(8, 4, 2, 4, "tile"), _sw(8, 2, 4, 2, "direct")],
    ),
    (  # borders wider than a work-item's run; float in, double out
        {
            "width": 29,
            "height": 31,
            "north": 4,
            "south": 4,
            "east": 9,
            "west": 9,
            "out_dtype": "double",
        },
        [_sw(4, 4, 8, 1, "direct"), _sw(2, 2, 1, 8, "tile")],
    ),
]


@pytest.mark.parametrize(("problem", "configs"), STENCIL_CASES)
# stencil_cross shares stencil_wide's template: its fast checks are the five-point and integer
# tests below, the whole grid is slow (PoCL builds on a cold cache cost CI seconds each)
@pytest.mark.parametrize(
    "name", ["stencil_wide", pytest.param("stencil_cross", marks=pytest.mark.slow)]
)
def test_wide_stencils_verify(cpu, name, problem, configs):
    _verify(cpu, name, problem, configs)


_NEGATIVE = {"dtype": "int", "boundary": "pad", "pad": -50, "north": 2, "south": 0, "west": 3,
             "east": 0}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "problem"),
    [  # negative sums (a negative pad): C's division truncates where numpy's // floors
        ("stencil_cross", _NEGATIVE),
        ("stencil_wide", {"dtype": "char"}),  # the C sum of cells up to 99 wraps in ELEM
        ("stencil_wide", {"dtype": "uchar", "out_dtype": "int"}),
        # one numpy twin (c_mean) serves both kernels: the rest of the grid is slow
        pytest.param("stencil_wide", _NEGATIVE, marks=pytest.mark.slow),
        pytest.param("stencil_cross", {"dtype": "char"}, marks=pytest.mark.slow),
        pytest.param(
            "stencil_cross", {"dtype": "uchar", "out_dtype": "int"}, marks=pytest.mark.slow
        ),
    ],
)
def test_integer_means_are_c_s(cpu, name, problem):
    _verify(cpu, name, {"width": 24, "height": 10, **problem},
            [_sw(8, 2, 1, 1, "tile"), _sw(4, 2, 2, 4, "direct")])  # fmt: skip


def test_stencil_cross_is_the_five_point_mean(cpu):
    """Not the box: a centre of 5 and its 4 neighbours 0 give 1 (the box mean gives 5 / 9)."""
    a = np.zeros((5, 5))
    a[2, 2] = 5.0
    padded = np.pad(a, 1)

    def get(dx, dy):
        return padded[1 + dy : 6 + dy, 1 + dx : 6 + dx]

    out = cross_mean_numpy(get, Problem.of(north=1, south=1, east=1, west=1))
    assert out[2, 2] == 1.0 and out[1, 2] == 1.0 and out[1, 1] == 0.0
    _verify(cpu, "stencil_cross", {"width": 64, "height": 16, "dtype": "double"},
            [_sw(16, 4, 2, 4, "direct", "vector"), _sw(8, 8, 1, 2, "tile", "vector")])  # fmt: skip


def test_stencil_wide_holds_the_stencil_space(cpu):
    """One cell per work-item from the tile is the old kernel: the same work-group sizes,
    the same local memory, and the old default."""
    old, new = builtin("stencil"), builtin("stencil_wide")
    old_space = kernel_space(old, None, cpu)
    new_space = kernel_space(new, None, cpu)
    narrow = [
        (c["wc"], c["wr"])
        for c in new_space
        if c["rows"] == 1 and c["vw"] == 1 and c["variant"] == "tile" and c["access"] == "scalar"
    ]
    assert sorted(narrow) == sorted((c["wc"], c["wr"]) for c in old_space)
    config = {"wc": 16, "wr": 8}
    wide = {**config, "rows": 1, "vw": 1, "variant": "tile", "access": "scalar"}
    assert new.local_mem_bytes(new.env(wide, {})) == old.local_mem_bytes(old.env(config, {}))
    extra = {"rows": 1, "vw": 1, "variant": "tile", "access": "scalar"}
    assert dict(new.default) == {**dict(old.default), **extra}


def _cw(wg, per_item, variant, vw=1):
    return {"wg": wg, "per_item": per_item, "variant": variant, "vw": vw}


CONVOLUTION_CASES = [
    (  # n no work-group's run divides, a wide mask
        {"n": 5003, "mask": 33},
        [_cw(64, 1, "tile"), _cw(32, 16, "tile"), _cw(16, 4, "direct"), _cw(1, 8, "direct")],
    ),
    ({"n": 301, "mask": 1, "dtype": "double"}, [_cw(16, 8, "tile"), _cw(128, 2, "direct")]),
]


@pytest.mark.parametrize(("problem", "configs"), CONVOLUTION_CASES)
def test_convolution_wide_verifies(cpu, problem, configs):
    _verify(cpu, "convolution_wide", problem, configs)


def test_convolution_wide_holds_the_convolution_space(cpu):
    old, new = builtin("convolution"), builtin("convolution_wide")
    narrow = [
        c["wg"]
        for c in kernel_space(new, None, cpu)
        if c["per_item"] == 1 and c["variant"] == "tile" and c["vw"] == 1
    ]
    assert sorted(narrow) == sorted(c["wg"] for c in kernel_space(old, None, cpu))
    config = {"wg": 128}
    wide = {**config, "per_item": 1, "variant": "tile", "vw": 1}
    assert new.local_mem_bytes(new.env(wide, {})) == old.local_mem_bytes(old.env(config, {}))
    assert dict(new.default) == {**dict(old.default), "per_item": 1, "variant": "tile", "vw": 1}


def _mt(tile_m, tile_n, tile_k, wpt_m, wpt_n, vw, lvw=1):
    names = ("tile_m", "tile_n", "tile_k", "wpt_m", "wpt_n", "vw", "lvw")
    return dict(zip(names, (tile_m, tile_n, tile_k, wpt_m, wpt_n, vw, lvw), strict=True))


MATMUL_CASES = [
    (  # sizes no tile divides, batched; scalar loads
        {"M": 45, "N": 37, "K": 29, "batch": 2},
        [_mt(16, 32, 8, 2, 4, 1), _mt(64, 16, 32, 8, 1, 1)],
    ),
    (  # vector loads: rows a multiple of 4, not of the tiles
        {"M": 50, "N": 36, "K": 44},
        [_mt(32, 32, 16, 4, 4, 4), _mt(16, 64, 8, 1, 8, 2)],
    ),
    pytest.param(  # unrolled 64x64 tiles take PoCL long to compile
        {"M": 70, "N": 66, "K": 20},
        [_mt(64, 64, 16, 4, 4, 1), _mt(128, 64, 8, 8, 8, 2)],
        marks=pytest.mark.slow,
    ),
    ({"M": 20, "N": 12, "K": 9, "trans_a": True, "trans_b": True}, [_mt(16, 16, 8, 2, 2, 1)]),
    ({"M": 24, "N": 16, "K": 12, "dtype": "double"}, [_mt(16, 16, 8, 4, 2, 4)]),
    # Vector reads of the local tiles (lvw=4): every load width, ragged edges, batches.
    (
        {"M": 45, "N": 37, "K": 29, "batch": 2},
        [_mt(16, 32, 8, 2, 4, 1, 4), _mt(32, 16, 16, 1, 4, 1, 4)],
    ),
    (
        {"M": 50, "N": 36, "K": 44},
        [_mt(32, 32, 16, 4, 4, 4, 4), _mt(16, 32, 8, 2, 8, 2, 4), _mt(16, 16, 8, 2, 4, 4, 4)],
    ),
    ({"M": 20, "N": 12, "K": 9, "trans_a": True}, [_mt(16, 16, 8, 2, 4, 1, 4)]),
    ({"M": 20, "N": 12, "K": 9, "trans_b": True, "batch": 3}, [_mt(16, 16, 8, 1, 4, 1, 4)]),
    ({"M": 24, "N": 16, "K": 12, "dtype": "double"}, [_mt(16, 16, 8, 4, 4, 4, 4)]),
]


@pytest.mark.parametrize(("problem", "configs"), MATMUL_CASES)
def test_matmul_tiled_verifies(cpu, problem, configs):
    _verify(cpu, "matmul_tiled", problem, configs)


def test_matmul_tiled_vector_loads_need_whole_vector_rows(cpu):
    spec = builtin("matmul_tiled")
    ragged = kernel_space(spec, spec.problem.merged({"K": 30}), cpu)
    assert {c["vw"] for c in ragged} == {1, 2}
    transposed = kernel_space(spec, spec.problem.merged({"trans_b": True}), cpu)
    assert {c["vw"] for c in transposed} == {1}


def test_matmul_tiled_local_reads_are_whole_column_runs(cpu):
    """lvw=4 needs columns in runs of 4; lvw=1 keeps the kernel's first space, local memory
    and default."""
    spec = builtin("matmul_tiled")
    space = kernel_space(spec, None, cpu)
    assert {c["wpt_n"] for c in space if c["lvw"] == 4} == {4, 8}
    wide = {c.merged({"lvw": 1}) for c in space if c["lvw"] == 4}
    assert wide and wide <= {c for c in space if c["lvw"] == 1}
    config = _mt(64, 32, 16, 4, 2, 1)
    assert spec.local_mem_bytes(spec.env(config, {})) == 16 * (64 + 1 + 32) * 4
    assert (
        spec.local_mem_bytes(spec.env({**config, "wpt_n": 4, "lvw": 4}, {}))
        == (64 * (16 + 4) + 16 * 32 + 4) * 4
    )
    assert spec.default["lvw"] == 1


def test_lawsons_640_stay_in_matmul(cpu):
    assert len(kernel_space(builtin("matmul"), None, cpu)) == 640
