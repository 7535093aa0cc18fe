"""Sub-buffers where the platform allows: PoCL's two sub-devices of one CPU share one context,
so a split launch uploads each array once as a parent, gives each part sub-buffers of it and
gathers each output by one download; the output equals one device's. Unaligned slices,
inputs cut along an inner axis, devices that do not share (a GPU, two contexts, CUDA) and
openers without a group copy, and say why."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest
from rich.console import Console

from perfport._core import ArrayArg, Backend, Config, DeviceType, Problem
from perfport.cli.split import _print_buffers
from perfport.devices import get_device, open_session, open_sessions
from perfport.kernels import builtin
from perfport.measure.data import reference_outputs
from perfport.measure.verify import mismatch
from perfport.split.execute import Part, run_parts
from perfport.split.reserve import Opening
from perfport.split.split import split_run
from perfport.split.subbuffers import device_refusal, disjoint, packed

STENCIL = {"width": 128, "height": 97, "north": 2, "south": 1, "west": 1, "east": 3}
CONV = {"n": 5000, "mask": 33}
# kernel, problem, dimension, the two configurations, where the second part starts
STENCIL_ROWS = ("stencil", STENCIL, 1, {"wc": 32, "wr": 4}, {"wc": 16, "wr": 8}, 40)
CONVOLUTION = ("convolution", CONV, 0, {"wg": 64}, {"wg": 16}, 2048)  # 8192 B: aligned


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def _counting(counts: dict[str, int], share: bool = True):
    """A group opener whose sessions count uploads, downloads and sub-buffers."""

    def group(devices):
        sessions = open_sessions(devices, share_context=share)
        for s in sessions:
            upload, download, sub = s.upload, s.download, s.sub_buffer

            def uploading(array, upload=upload):
                counts["upload"] += 1
                return upload(array)

            def downloading(buffer, out, download=download):
                counts["download"] += 1
                download(buffer, out)

            def subbing(parent, offset, nbytes, sub=sub):
                counts["sub"] += 1
                return sub(parent, offset, nbytes)

            s.upload, s.download, s.sub_buffer = uploading, downloading, subbing  # type: ignore[method-assign]
        return sessions

    return group


def _split(case, devices, group=None, opener=open_session, at=None):
    kernel, problem, dim, first, second, cut = case
    spec = builtin(kernel)
    full = spec.problem.merged(problem)
    split = next(s for s in spec.split if s.dimension == dim)
    extent = int(full[split.extent])
    at = cut if at is None else at
    parts = [
        Part(devices[0], Config.of(first), 0, at),
        Part(devices[1], Config.of(second), at, extent),
    ]
    run = run_parts(spec, full, parts, split, target_s=0.0, opener=opener, group=group)
    alone = run_parts(
        spec, full, [Part(devices[0], Config.of(first), 0, extent)], None, target_s=0.0
    )
    return spec, full, run, alone


def _arrays(spec) -> tuple[int, int]:
    arrays = [a for a in spec.args if isinstance(a, ArrayArg)]
    return len(arrays), sum(a.output for a in arrays)


@pytest.mark.parametrize("case", [STENCIL_ROWS, CONVOLUTION], ids=["stencil", "convolution"])
def test_a_split_on_one_context_uploads_each_array_once_and_equals_one_device(two, case):
    counts = {"upload": 0, "download": 0, "sub": 0}
    spec, full, run, alone = _split(case, two, _counting(counts))
    assert run.buffers.to_json() == {"kind": "sub-buffers", "why": None}
    arrays, outputs = _arrays(spec)
    cut = sum(1 for _ in next(s for s in spec.split if s.dimension == case[2]).arrays)
    # one parent per array, one sub-buffer per part of each cut array, one download per output
    assert counts == {"upload": arrays, "download": outputs, "sub": 2 * cut}
    for name, out in run.outputs.items():
        assert np.array_equal(out, alone.outputs[name]), name
    assert mismatch(run.outputs, reference_outputs(spec, full, 0), spec.tolerance) is None


def test_the_default_openers_share_too(two):
    _, _, run, alone = _split(CONVOLUTION, two)
    assert run.buffers.kind == "sub-buffers" and alone.buffers.why == "one part"
    assert np.array_equal(run.outputs["output"], alone.outputs["output"])


def test_an_unaligned_slice_falls_back_to_copies_and_says_why(two):
    counts = {"upload": 0, "download": 0, "sub": 0}
    spec, _, run, alone = _split(CONVOLUTION, two, _counting(counts), at=2000)  # byte 8000
    assert run.buffers.kind == "copies"
    assert "starts at byte 8000" in run.buffers.why and "MEM_BASE_ADDR_ALIGN" in run.buffers.why
    arrays, outputs = _arrays(spec)
    assert counts == {"upload": 2 * arrays, "download": 2 * outputs, "sub": 0}
    assert np.array_equal(run.outputs["output"], alone.outputs["output"])


def test_an_input_cut_along_an_inner_axis_copies(two):
    columns = ("stencil", STENCIL, 0, {"wc": 32, "wr": 4}, {"wc": 16, "wr": 8}, 64)
    _, _, run, alone = _split(columns, two, _counting({"upload": 0, "download": 0, "sub": 0}))
    assert run.buffers.kind == "copies" and "one run of bytes" in run.buffers.why
    assert np.array_equal(run.outputs["output"], alone.outputs["output"])


def test_a_device_that_is_no_cpu_keeps_copies(two):
    """The second sub-device reported as a GPU: no context is shared, each part copies."""
    counts = {"upload": 0, "download": 0, "sub": 0}
    gpu = dataclasses.replace(two[1], type=DeviceType.GPU)
    _, _, run, alone = _split(CONVOLUTION, (two[0], gpu), _counting(counts))
    assert run.buffers.kind == "copies" and "is a gpu, not a CPU" in run.buffers.why
    assert counts["upload"] == 0  # the group opener (one context) is not even used
    assert np.array_equal(run.outputs["output"], alone.outputs["output"])


def test_two_contexts_or_an_opener_alone_copy(two):
    split_contexts = _split(
        CONVOLUTION, two, _counting({"upload": 0, "download": 0, "sub": 0}, False)
    )[2]
    assert split_contexts.buffers.kind == "copies" and "one context" in split_contexts.buffers.why
    wrapped = _split(CONVOLUTION, two, opener=lambda d: open_session(d))[2]
    assert wrapped.buffers.kind == "copies" and "opener" in wrapped.buffers.why


def test_which_devices_may_share():
    cpu = get_device("opencl:0:0")
    assert device_refusal([cpu, dataclasses.replace(cpu, id="opencl:0:0.1")]) is None
    assert device_refusal([cpu]) == "one part"
    cuda = dataclasses.replace(cpu, id="cuda:0", backend=Backend.CUDA, type=DeviceType.GPU)
    assert "CUDA parts always copy" in (device_refusal([cpu, cuda]) or "")
    other = dataclasses.replace(cpu, id="opencl:1:0")
    assert "more than one OpenCL platform" in (device_refusal([cpu, other]) or "")
    gpus = [dataclasses.replace(cpu, id=f"opencl:0:{i}", type=DeviceType.GPU) for i in (1, 2)]
    assert "moves a buffer whole" in (device_refusal(gpus) or "")


def test_outputs_are_packed_aligned_and_never_overlap():
    offsets = packed([520, 1, 256, 0, 130], 128)
    assert offsets == [0, 640, 768, 1024, 1024]
    assert disjoint(list(zip(offsets, [520, 1, 256, 0, 130], strict=True)))
    assert not disjoint([(0, 520), (512, 128)])  # a halo's rows written twice
    assert disjoint([(512, 8), (0, 512)])


def test_split_json_and_text_say_how_buffers_were_made(two):
    spec = builtin("convolution")
    configs = {d.id: Config.of(wg=64) for d in two}
    out = split_run(spec, Problem.of(n=8192, mask=33), two, configs=configs, target_s=0.0,
                    plan_from="eq4").to_json()  # fmt: skip
    assert out["verified"] and out["buffers"] == {"kind": "sub-buffers", "why": None}
    copies = split_run(spec, Problem.of(n=8192, mask=33), two, configs=configs, target_s=0.0,
                       plan_from="eq4", opening=Opening(share_context=False)).to_json()  # fmt: skip
    assert copies["verified"] and copies["buffers"]["kind"] == "copies"
    text = io.StringIO()
    console = Console(file=text, width=200)
    _print_buffers(console, out["buffers"])
    _print_buffers(console, copies["buffers"])
    lines = text.getvalue().splitlines()
    assert lines[0].startswith("buffers: sub-buffers") and lines[1].startswith("buffers: copies")
