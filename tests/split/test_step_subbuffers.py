"""Sub-buffers in time-stepping: PoCL's two sub-devices of one CPU (one context, as in CI)
step a split with no halo on one parent per array: inputs uploaded once, no halo exchange
and no rows moved by a re-split (new sub-buffers only), one download; the output equals one
device's and the numpy reference's. A halo, rows off the alignment, a GPU or sessions opened
one by one keep copies and say why."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfport._core import Config, DeviceType, Problem
from perfport.devices import get_device, open_sessions
from perfport.kernels import builtin
from perfport.measure.data import host_arrays
from perfport.split.execute import Part
from perfport.split.split import split_run
from perfport.split.stepping import split_steps
from perfport.split.steps import HaloPath, run_steps

# no halo along the rows (north = south = 0): the parts' rows never overlap
FLAT = {"width": 128, "height": 97, "north": 0, "south": 0, "west": 1, "east": 3}
HALO = {**FLAT, "north": 2, "south": 1}
FIRST, SECOND = Config.of({"wc": 16, "wr": 8}), Config.of({"wc": 32, "wr": 4})
CALLS = ("upload", "download", "sub_buffer", "read_range", "write_range", "copy_range", "copy_from")


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def _counted(counts: dict[str, int], name: str, inner):
    def counted(*args):
        counts[name] += 1
        return inner(*args)

    return counted


def _counting(counts: dict[str, int]):
    """A group opener (one context) whose sessions count every call that makes or moves
    device memory."""

    def group(devices):
        sessions = open_sessions(devices)
        for s in sessions:
            for name in CALLS:
                setattr(s, name, _counted(counts, name, getattr(s, name)))
        return sessions

    return group


def _reference(spec, problem, steps):
    x = host_arrays(spec, spec.env({}, problem), 0)["input"]
    for _ in range(steps):
        x = spec.reference(problem, {"input": x})["output"]
    return x


def _stencil(problem):
    spec = builtin("stencil")
    return spec, spec.problem.merged(problem), spec.split[1]


def test_steps_share_one_parent_per_array_and_equal_one_device(two):
    spec, full, split = _stencil(FLAT)
    one = run_steps(spec, full, [Part(two[0], FIRST, 0, 97)], split, 5)
    counts = dict.fromkeys(CALLS, 0)
    parts = [Part(two[0], FIRST, 0, 32), Part(two[1], SECOND, 32, 97)]
    out = run_steps(spec, full, parts, split, 5, group=_counting(counts))
    assert out.buffers.to_json() == {"kind": "sub-buffers", "why": None}
    assert one.buffers.to_json() == {"kind": "copies", "why": "one part"}
    assert np.array_equal(out.outputs["output"], one.outputs["output"])
    assert np.allclose(out.outputs["output"], _reference(spec, full, 5), atol=1e-5)
    # input and output uploaded once each; one sub-buffer per part of each parent, made in
    # the first steps and reused after every swap; one download; nothing moved in between
    assert counts == {**dict.fromkeys(CALLS, 0), "upload": 2, "sub_buffer": 4, "download": 1}
    assert all(s.exchange_bytes == 0 for s in out.steps) and out.halo_path is HaloPath.NONE


def test_a_resplit_on_shared_parents_moves_no_row_and_stays_right(two):
    spec, full, split = _stencil(FLAT)
    plan = {2: [(0, 64), (64, 97)], 3: [(0, 0), (0, 97)], 4: [(0, 16), (16, 97)]}
    counts = dict.fromkeys(CALLS, 0)
    parts = [Part(two[0], FIRST, 0, 32), Part(two[1], SECOND, 32, 97)]
    out = run_steps(spec, full, parts, split, 6, replan=lambda done: plan.get(len(done)),
                    group=_counting(counts))  # fmt: skip
    one = run_steps(spec, full, [Part(two[0], FIRST, 0, 97)], split, 6)
    assert out.buffers.kind == "sub-buffers"
    assert [s.parts for s in out.steps][2:5] == [tuple(p) for p in plan.values()]
    assert out.steps[3].kernel_ms[0] == 0  # the first device ran nothing that step
    assert np.array_equal(out.outputs["output"], one.outputs["output"])
    assert np.allclose(out.outputs["output"], _reference(spec, full, 6), atol=1e-5)
    assert all(s.moved_bytes == 0 for s in out.steps)
    # no row crossed: only new sub-buffers (4 at first, then 4, 2 and 4 for the new parts)
    assert counts == {**dict.fromkeys(CALLS, 0), "upload": 2, "sub_buffer": 14, "download": 1}


def test_a_halo_keeps_copies_and_exchanges(two):
    spec, full, split = _stencil(HALO)
    parts = [Part(two[0], FIRST, 0, 32), Part(two[1], SECOND, 32, 97)]
    counts = dict.fromkeys(CALLS, 0)
    out = run_steps(spec, full, parts, split, 4, group=_counting(counts))
    assert out.buffers.kind == "copies"
    assert "has a halo (2 before, 1 after)" in out.buffers.why
    assert counts["sub_buffer"] == 0 and sum(s.exchange_bytes for s in out.steps) > 0
    assert np.allclose(out.outputs["output"], _reference(spec, full, 4), atol=1e-5)


@pytest.mark.parametrize(
    ("at", "replan", "kind", "why"),
    [
        (16, False, "sub-buffers", None),  # row 16 of 520 bytes: byte 8320, 65 x 128
        (40, False, "copies", "part 1's input starts at byte 20800"),
        (16, True, "copies", "a row of input is 520 bytes"),  # a move could start anywhere
    ],
)
def test_rows_off_the_alignment_copy(two, at, replan, kind, why):
    spec, full, split = _stencil({**FLAT, "width": 130})
    parts = [Part(two[0], FIRST, 0, at), Part(two[1], SECOND, at, 97)]
    out = run_steps(spec, full, parts, split, 3, group=open_sessions,
                    replan=(lambda done: None) if replan else None)  # fmt: skip
    assert out.buffers.kind == kind
    assert (out.buffers.why is None) if why is None else why in out.buffers.why
    assert np.allclose(out.outputs["output"], _reference(spec, full, 3), atol=1e-5)


def test_a_gpu_or_sessions_opened_alone_copy(two):
    spec, full, split = _stencil(FLAT)
    gpu = dataclasses.replace(two[1], type=DeviceType.GPU)
    parts = [Part(two[0], FIRST, 0, 32), Part(gpu, SECOND, 32, 97)]
    out = run_steps(spec, full, parts, split, 3, group=open_sessions)
    assert out.buffers.kind == "copies" and "is a gpu, not a CPU" in out.buffers.why
    parts = [Part(two[0], FIRST, 0, 32), Part(two[1], SECOND, 32, 97)]
    alone = run_steps(spec, full, parts, split, 3)  # an opener, no group
    assert alone.buffers.kind == "copies" and "one by one" in alone.buffers.why
    for run in (out, alone):
        assert np.allclose(run.outputs["output"], _reference(spec, full, 3), atol=1e-5)


def test_split_steps_json_says_how_buffers_were_made(two):
    spec = builtin("stencil")
    got = {}
    for name, problem in (("flat", FLAT), ("halo", HALO)):
        got[name] = split_steps(spec, Problem.of(problem), two, 6, dimension=1,
                                rebalance=True).to_json()  # fmt: skip
    assert got["flat"]["verified"] and got["halo"]["verified"]
    assert got["flat"]["buffers"] == {"kind": "sub-buffers", "why": None}
    assert got["halo"]["buffers"]["kind"] == "copies" and "halo" in got["halo"]["buffers"]["why"]
    contract = ("devices", "configs", "split_factors", "adjusted_factors", "theoretical_ms",
                "measured_ms", "best_single", "speedup_over_best_single", "verified", "decision")  # fmt: skip
    assert all(k in got["flat"] for k in contract)


def test_sweep_points_and_rebalanced_launches_say_how_buffers_were_made(two):
    spec = builtin("convolution")
    configs = {d.id: Config.of(wg=64) for d in two}
    out = split_run(spec, Problem.of(n=8192, mask=33), two, configs=configs, target_s=0.0,
                    sweep_points=3, iterations=2, plan_from="eq4").to_json()  # fmt: skip
    assert out["verified"] and out["sweep"] and out["iterations"]
    # shares 0 and 1 run one part; share 0.5 (element 4096, byte 16384) shares
    kinds = [p["buffers"]["kind"] for p in out["sweep"]]
    assert kinds == ["copies", "sub-buffers", "copies"]
    assert all(set(i["buffers"]) == {"kind", "why"} for i in out["iterations"])
    assert out["iterations"][0]["buffers"] == out["buffers"]
