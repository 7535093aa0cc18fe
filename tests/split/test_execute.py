"""Split runs on two OpenCL devices (PoCL's sub-devices by fission): every built-in kernel
that declares a split, cut unevenly with a different configuration per part, gathers to the
numpy reference's output; without its halo a stencil's split is caught."""

from __future__ import annotations

import dataclasses

import pytest

from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg, SplitArray, SplitDim
from perfport._core import Config, Problem
from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.measure.data import reference_outputs
from perfport.measure.verify import mismatch
from perfport.split.execute import Part, run_parts
from perfport.split.split import split_run

TILES = {"row_tile": 4, "acc_tile": 2, "col_tile": 4, "wg_rows": 8, "wg_cols": 8}
OTHER = {"row_tile": 2, "acc_tile": 4, "col_tile": 1, "wg_rows": 16, "wg_cols": 8}
WIDE = {"wc": 8, "wr": 4, "rows": 2, "vw": 4, "variant": "tile", "access": "scalar"}
WIDE_DIRECT = {"wc": 16, "wr": 2, "rows": 4, "vw": 2, "variant": "direct", "access": "vector"}
BORDERS = {"width": 130, "height": 97, "north": 2, "south": 1, "west": 1, "east": 3}
CASES = [
    ("convolution", {"n": 5000, "mask": 33}, 0, {"wg": 64}, {"wg": 16}),
    ("vector_add", {"n": 5001}, 0, {"wg": 32}, {"wg": 128}),
    ("stencil", BORDERS, 0, {"wc": 32, "wr": 4}, {"wc": 16, "wr": 8}),
    ("stencil", BORDERS, 1, {"wc": 32, "wr": 4}, {"wc": 16, "wr": 8}),
    (
        "stencil",
        {**BORDERS, "boundary": "pad", "pad": 7},
        1,
        {"wc": 8, "wr": 8},
        {"wc": 8, "wr": 1},
    ),
    ("stencil_wide", BORDERS, 0, WIDE, WIDE_DIRECT),
    ("stencil_wide", BORDERS, 1, WIDE, WIDE_DIRECT),
    (
        "convolution_wide",
        {"n": 5000, "mask": 33},
        0,
        {"wg": 64, "per_item": 4, "variant": "tile", "vw": 1},
        {"wg": 16, "per_item": 8, "variant": "direct", "vw": 4},
    ),
    ("matmul", {"M": 70, "N": 52, "K": 24}, 0, TILES, OTHER),
    ("matmul", {"M": 70, "N": 52, "K": 24, "trans_b": True, "batch": 2}, 0, TILES, OTHER),
    ("matmul", {"M": 70, "N": 52, "K": 24, "trans_a": True}, 1, TILES, OTHER),
]


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def _run(spec, problem, dim, first, second, devices, cut=0.4):
    full = spec.problem.merged(problem)
    split = next(s for s in spec.split if s.dimension == dim)
    extent = int(full[split.extent])
    at = int(extent * cut)
    parts = [
        Part(devices[0], Config.of(first), 0, at),
        Part(devices[1], Config.of(second), at, extent),
    ]
    result = run_parts(spec, full, parts, split, target_s=0.0)
    return mismatch(result.outputs, reference_outputs(spec, full, 0), spec.tolerance), result


@pytest.mark.parametrize(("kernel", "problem", "dim", "first", "second"), CASES)
def test_split_gathers_the_reference_output(kernel, problem, dim, first, second, two):
    wrong, result = _run(builtin(kernel), problem, dim, first, second, two)
    assert wrong is None
    assert len(result.kernel_ms) == 2 and result.rounds >= 3


def test_a_stencil_split_without_its_halo_is_wrong(two):
    spec = builtin("stencil")
    splits = tuple(dataclasses.replace(s, halo=("0", "0")) for s in spec.split)
    wrong, _ = _run(dataclasses.replace(spec, split=splits), BORDERS, 1, {"wc": 8, "wr": 8},
                    {"wc": 8, "wr": 8}, two)  # fmt: skip
    assert wrong is not None


def test_an_empty_part_is_skipped(two):
    wrong, result = _run(builtin("convolution"), {"n": 3000}, 0, {"wg": 64}, {"wg": 64}, two, 0.0)
    assert wrong is None and len(result.kernel_ms) == 1


def test_split_run_plans_runs_verifies_and_decides(two):
    spec = builtin("convolution")
    out = split_run(spec, Problem.of(n=20000, mask=65), two, target_s=0.02)
    assert out.verified and out.mismatch is None
    assert sum(b - a for a, b in out.plan.parts) == 20000
    assert out.config_sources == ("default", "default")
    best = min(r.wall_ms for r in out.single)
    # The decision from modelled times: a loaded machine's plan may give one device every
    # element (a run of one part is no split), so both parts are given a time here.
    two_parts = dataclasses.replace(out.run, kernel_ms=(1.0, 1.0))
    faster = dataclasses.replace(out, run=dataclasses.replace(two_parts, wall_ms=best * 0.5))
    slower = dataclasses.replace(out, run=dataclasses.replace(two_parts, wall_ms=best * 1.01))
    single = out.devices[out.best_single].id
    assert faster.decision == "split" and slower.decision == single
    assert dataclasses.replace(faster, verified=False).decision == single
    j = out.to_json()
    assert j["best_single"]["time_ms"] == best
    assert j["speedup_over_best_single"] == pytest.approx(best / out.run.wall_ms)


# acc[i] += x[i] + 1: an in-place kernel, whose every launch changes what the next one reads
ACCUM = KernelSpec(
    name="accum",
    source="__kernel void accum(__global const int* x, __global int* acc, int n) {\n"
    "  const int i = get_global_id(0); if (i < n) acc[i] += x[i] + 1;\n}\n",
    entry="accum",
    params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),),
    global_size=("round_up(n, wg)",),
    local_size=("wg",),
    args=(
        ArrayArg("x", "int", ("n",)),
        ArrayArg("acc", "int", ("n",), output=True),
        ScalarArg("n", "int", "n"),
    ),
    problem={"n": 1000},
    default={"wg": 32},
    reference=lambda p, i: {"acc": i["acc"] + i["x"] + 1},
    split=(SplitDim(0, "n", (SplitArray("x"), SplitArray("acc"))),),
)


def test_an_in_place_kernel_gathers_one_launch_from_the_seeded_data(two):
    """The timing rounds ran on the same buffers and the outputs were gathered after the
    last, so acc held the sum of 4 to 51 launches (alone and split alike): 'output acc[0] is
    618, expected 450', and the expected value was itself wrong."""
    want = reference_outputs(ACCUM, ACCUM.problem, 0)
    alone = run_parts(
        ACCUM, ACCUM.problem, [Part(two[0], Config.of(wg=32), 0, 1000)], None, target_s=0.0
    )
    assert mismatch(alone.outputs, want, None) is None and alone.rounds >= 3
    parts = [Part(two[0], Config.of(wg=32), 0, 480), Part(two[1], Config.of(wg=16), 480, 1000)]
    run = run_parts(ACCUM, ACCUM.problem, parts, ACCUM.split[0], target_s=0.0)
    assert mismatch(run.outputs, want, None) is None
    out = split_run(ACCUM, {}, two, target_s=0.0, plan_from="eq4")
    assert out.verified, out.mismatch
