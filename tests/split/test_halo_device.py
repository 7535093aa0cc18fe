"""Halo exchange device to device: two PoCL sub-devices in one context exchange halo rows
with clEnqueueCopyBuffer (no host staging); the steps equal one device and the numpy
reference, and the run reports the path its halos took."""

from __future__ import annotations

import numpy as np
import pytest

from perfport._core import Config, Problem
from perfport.devices import get_device, open_sessions
from perfport.kernels import builtin
from perfport.measure.data import host_arrays
from perfport.split.execute import Part
from perfport.split.reserve import Opening
from perfport.split.stepping import split_steps
from perfport.split.steps import HaloPath, run_steps

PROBLEM = {"width": 130, "height": 97, "north": 2, "south": 1, "west": 1, "east": 3}
FIRST, SECOND = Config.of({"wc": 16, "wr": 8}), Config.of({"wc": 32, "wr": 4})
ROW = 130 * 4  # bytes of one float row


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def _reference(spec, problem, steps):
    x = host_arrays(spec, spec.env({}, problem), 0)["input"]
    for _ in range(steps):
        x = spec.reference(problem, {"input": x})["output"]
    return x


def _counting(share: bool, counts: dict[str, int]):
    """A group opener whose sessions count host reads and device copies."""

    def group(devices):
        sessions = open_sessions(devices, share_context=share)
        for s in sessions:
            read, copy = s.read_range, s.copy_from

            def reading(buffer, offset, out, read=read):
                counts["read"] += out.nbytes
                read(buffer, offset, out)

            def copying(other, src, so, dst, do, nbytes, copy=copy):
                counts["device"] += nbytes
                return copy(other, src, so, dst, do, nbytes)

            s.read_range, s.copy_from = reading, copying  # type: ignore[method-assign]
        return sessions

    return group


@pytest.mark.parametrize(("share", "path"), [(True, HaloPath.DEVICE), (False, HaloPath.HOST)])
def test_halo_device_path_equals_one_device_and_numpy(two, share, path):
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    one = run_steps(spec, full, [Part(two[0], FIRST, 0, 97)], split, 5)
    counts = {"read": 0, "device": 0}
    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 5, group=_counting(share, counts))
    assert np.array_equal(out.outputs["output"], one.outputs["output"])
    assert np.allclose(out.outputs["output"], _reference(spec, full, 5), atol=1e-5)
    assert out.halo_path is path and one.halo_path is HaloPath.NONE
    moved = 4 * 3 * ROW  # four exchanges of north 2 + south 1 rows
    assert sum(s.exchange_bytes for s in out.steps) == moved
    assert sum(s.exchange_device_bytes for s in out.steps) == (moved if share else 0)
    # the device path reads nothing to the host between steps; the host path all of it
    assert counts == ({"read": 0, "device": moved} if share else {"read": moved, "device": 0})


def test_a_resplit_mid_run_moves_rows_device_to_device_and_stays_right(two):
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    plan = {2: [(0, 64), (64, 97)], 3: [(0, 16), (16, 97)]}
    counts = {"read": 0, "device": 0}
    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 5, replan=lambda done: plan.get(len(done)),
                    group=_counting(True, counts))  # fmt: skip
    assert out.steps[2].moved_bytes > 0 and counts["read"] == 0
    assert np.allclose(out.outputs["output"], _reference(spec, full, 5), atol=1e-5)


def test_split_steps_reports_the_halo_path(two):
    spec = builtin("stencil")
    problem = Problem.of(width=64, height=96)
    got = {}
    for share in (True, False):
        opening = Opening(share_context=share)
        got[share] = split_steps(spec, problem, two, 3, dimension=1, opening=opening).to_json()
    assert got[True]["verified"] and got[False]["verified"]
    assert got[True]["halo_path"] == "device" and got[True]["halo_device_bytes"] > 0
    assert got[False]["halo_path"] == "host" and got[False]["halo_device_bytes"] == 0


def _crossing(counts: list[tuple[int, object, object, int]], uploaded: dict[int, int]):
    """From (session, src, dst, nbytes) of every copy on a queue: the buffers that two
    sessions' queues touched (a shared context moves such a buffer whole between devices)."""
    users: dict[int, set[int]] = {}
    sizes: dict[int, int] = {}
    for session, src, dst, _ in counts:
        for b in (src, dst):
            users.setdefault(id(b), set()).add(session)
            sizes[id(b)] = b.size  # type: ignore[attr-defined]
    foreign = [b for b, who in users.items() if b in uploaded and who != {uploaded[b]}]
    shared = [sizes[b] for b, who in users.items() if len(who) > 1]
    return foreign, shared


def test_only_halo_sized_boxes_cross_devices_in_a_shared_context(two):
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    copies: list[tuple[int, object, object, int]] = []
    uploaded: dict[int, int] = {}
    keep: list[object] = []  # the buffers stay alive, so their ids stay theirs

    def group(devices):
        sessions = open_sessions(devices, share_context=True)
        for i, s in enumerate(sessions):
            upload, copy = s.upload, s.copy_range

            def uploading(array, i=i, upload=upload):
                buffer = upload(array)
                uploaded[id(buffer)] = i
                keep.append(buffer)
                return buffer

            def copying(src, so, dst, do, nbytes, i=i, copy=copy):
                copies.append((i, src, dst, nbytes))
                keep.extend((src, dst))
                return copy(src, so, dst, do, nbytes)

            s.upload, s.copy_range = uploading, copying  # type: ignore[method-assign]
        return sessions

    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 5, group=group)
    assert out.halo_path is HaloPath.DEVICE
    assert np.allclose(out.outputs["output"], _reference(spec, full, 5), atol=1e-5)
    foreign, shared = _crossing(copies, uploaded)
    # no queue touches another device's part buffers; only one box per direction crosses,
    # of the halo's rows: part 0 needs south 1 row from part 1, part 1 north 2 rows from 0
    assert foreign == []
    assert sorted(shared) == [1 * ROW, 2 * ROW]


def test_halo_host_stages_through_the_host_even_where_sessions_could_copy(two):
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    counts = {"read": 0, "device": 0}
    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 3, group=_counting(True, counts),
                    device_halos=False)  # fmt: skip
    assert out.halo_path is HaloPath.HOST
    assert counts == {"read": 2 * 3 * ROW, "device": 0}
    assert np.allclose(out.outputs["output"], _reference(spec, full, 3), atol=1e-5)


def test_a_resplit_keeps_no_box_of_its_moves(two):
    """Halo boxes recur every step and are kept; the boxes of a re-split's moves (any size,
    hundreds of MB on a GPU) are released with the parts they served."""
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    opened: list = []
    kept: list[set[int]] = []  # the boxes' sizes each time the run asks for a re-split

    def group(devices):
        opened.extend(open_sessions(devices, share_context=True))
        return opened[-len(devices) :]

    def replan(done):
        kept.append({nbytes for s in opened for _, nbytes in s._boxes})
        return {2: [(0, 64), (64, 97)], 3: [(0, 16), (16, 97)]}.get(len(done))

    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 6, replan=replan, group=group)
    assert out.steps[2].moved_bytes > 0 and out.steps[3].moved_bytes > 0
    assert np.allclose(out.outputs["output"], _reference(spec, full, 6), atol=1e-5)
    assert kept[-1] and all(k <= {1 * ROW, 2 * ROW} for k in kept), kept
