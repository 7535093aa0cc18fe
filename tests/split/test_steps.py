"""Time-stepping on two OpenCL devices (PoCL's sub-devices): N steps split, with halo
exchange between steps and a changed split mid-run, equal N steps on one device and the
numpy reference applied N times; only halo and moved rows cross between devices."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfport._core import Config, Problem
from perfport.devices import get_device, open_session
from perfport.devices.session import Session
from perfport.kernels import builtin
from perfport.measure.data import host_arrays
from perfport.split.execute import Part, run_parts
from perfport.split.stepping import split_steps
from perfport.split.steps import run_steps

PROBLEM = {"width": 130, "height": 97, "north": 2, "south": 1, "west": 1, "east": 3}
FIRST, SECOND = Config.of({"wc": 16, "wr": 8}), Config.of({"wc": 32, "wr": 4})


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


class Recording(Session):
    """A session that counts the bytes it moves between host and device, around a real
    one (any backend): the split must work through the Session contract alone."""

    def __init__(self, inner: Session) -> None:
        self.inner, self.device = inner, inner.device
        self.read = self.written = 0
        self.staged: set[int] = set()  # the host arrays halo rows were read into

    def compile(self, *args):
        return self.inner.compile(*args)

    def upload(self, array):
        return self.inner.upload(array)

    def write(self, buffer, array):
        self.inner.write(buffer, array)

    def download(self, buffer, out):
        self.inner.download(buffer, out)

    def read_range(self, buffer, offset, out):
        self.read += out.nbytes
        self.staged.add(id(out))
        self.inner.read_range(buffer, offset, out)

    def write_range(self, buffer, offset, array):
        self.written += array.nbytes
        self.inner.write_range(buffer, offset, array)

    def copy_range(self, *args):
        self.inner.copy_range(*args)

    def launch(self, *args, **kw):
        return self.inner.launch(*args, **kw)

    def close(self):
        self.inner.close()


def _reference(spec, problem, steps):
    x = host_arrays(spec, spec.env({}, problem), 0)["input"]
    for _ in range(steps):
        x = spec.reference(problem, {"input": x})["output"]
    return x


def test_steps_split_equal_one_device_and_the_reference(two):
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    one = run_steps(spec, full, [Part(two[0], FIRST, 0, 97)], split, 5)
    opened: list[Recording] = []

    def opener(device):
        opened.append(Recording(open_session(device)))
        return opened[-1]

    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    split_run = run_steps(spec, full, parts, split, 5, opener=opener)
    assert np.array_equal(split_run.outputs["output"], one.outputs["output"])
    assert np.allclose(one.outputs["output"], _reference(spec, full, 5), atol=1e-5)
    row = 130 * 4  # bytes of one float row; north 2, south 1
    assert [s.exchange_bytes for s in split_run.steps] == [3 * row] * 4 + [0]
    assert sum(r.read for r in opened) == sum(r.written for r in opened) == 4 * 3 * row
    # one host staging array per halo transfer, reused by every exchange
    assert sum(len(r.staged) for r in opened) == 2


def test_parts_are_enqueued_then_waited_for(two, monkeypatch):
    """A split step enqueues every part (Session.start_launch) before waiting for any."""
    from perfport.devices.opencl import OpenCLSession

    calls: list[str] = []
    start, finish = OpenCLSession.start_launch, OpenCLSession.finish_launch

    def started(self, *args):
        calls.append("start")
        return start(self, *args)

    def finished(self, pending):
        calls.append("finish")
        got = finish(self, pending)
        assert got > 0
        return got

    monkeypatch.setattr(OpenCLSession, "start_launch", started)
    monkeypatch.setattr(OpenCLSession, "finish_launch", finished)
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 3)
    assert calls == ["start", "start", "finish", "finish"] * 3
    assert np.allclose(out.outputs["output"], _reference(spec, full, 3), atol=1e-5)


def test_a_changed_split_mid_run_moves_rows_and_stays_right(two):
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    plan = {2: [(0, 64), (64, 97)], 3: [(0, 0), (0, 97)], 4: [(0, 16), (16, 97)]}
    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 6, replan=lambda done: plan.get(len(done)))
    assert [s.parts for s in out.steps][1:5] == [((0, 40), (40, 97)), *map(tuple, plan.values())]
    row = 130 * 4
    # (0, 40) -> (0, 64): the first device fetches rows 40..65 (held to 64 + south 1) of
    # both arrays; (0, 64) -> nothing: the second fetches the rows 0..64 the first owned
    # (its halo rows 62..64 were stale copies: a part's rows come from their owner)
    assert out.steps[2].moved_bytes == 2 * 25 * row
    assert out.steps[3].moved_bytes == 2 * 64 * row and out.steps[3].kernel_ms[0] == 0
    assert np.allclose(out.outputs["output"], _reference(spec, full, 6), atol=1e-5)


def test_without_the_halo_exchange_the_steps_go_wrong(two, monkeypatch):
    from perfport.split import steps

    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    monkeypatch.setattr(steps, "halo_ranges", lambda own, held: ())
    parts = [Part(two[0], FIRST, 0, 40), Part(two[1], SECOND, 40, 97)]
    out = run_steps(spec, full, parts, split, 3)
    assert not np.allclose(out.outputs["output"], _reference(spec, full, 3), atol=1e-5)


def test_split_steps_plans_runs_rebalances_and_reports(two):
    spec = builtin("stencil")
    out = split_steps(spec, Problem.of(width=64, height=96), two, 8, dimension=1,
                      rebalance=True)  # fmt: skip
    assert out.verified and out.mismatch is None
    j = out.to_json()
    assert j["steps"] == 8 and len(j["per_step"]) == 8
    assert j["measured_ms"] == pytest.approx(sum(
        s["step_ms"] + s["exchange_ms"] + s["moved_ms"] for s in j["per_step"]))  # fmt: skip
    assert j["best_single"]["time_ms"] == min(c["time_ms"] for c in j["configs"])
    assert sum(b - a for a, b in j["final_parts"]) == 96
    assert j["decision"] in ("split", *j["devices"])


def test_parts_run_through_any_session(two):
    """A part's session comes from the opener: here one wrapped, one plain, in one run."""
    spec = builtin("stencil")
    full, split = spec.problem.merged(PROBLEM), spec.split[1]
    kinds: list[str] = []

    def opener(device):
        session = open_session(device)
        kinds.append("wrapped" if device.id.endswith(".1") else "plain")
        return Recording(session) if device.id.endswith(".1") else session

    parts = [Part(two[0], FIRST, 0, 50), Part(two[1], SECOND, 50, 97)]
    mixed = run_parts(spec, full, parts, split, target_s=0.0, opener=opener)
    assert kinds == ["plain", "wrapped"]
    assert np.allclose(mixed.outputs["output"], _reference(spec, full, 1), atol=1e-5)


def test_steps_with_one_device_at_work_do_not_decide_split(two):
    # a 1 x 1 stencil: the plan gives one device the one row, so no split ran
    out = split_steps(builtin("stencil"), {"width": 1, "height": 1}, two, 2)
    busy = [[b > a for a, b in s.parts] for s in out.run.steps]
    assert all(sum(row) == 1 for row in busy)
    assert not out.split_ran
    assert out.decision in (two[0].id, two[1].id)
    faster = dataclasses.replace(out.run, steps=tuple(
        dataclasses.replace(s, step_ms=0.0, kernel_ms=tuple(0.0 for _ in s.kernel_ms))
        for s in out.run.steps
    ))  # fmt: skip
    assert dataclasses.replace(out, run=faster).decision != "split"
