"""The default campaign key: what a spec states only for reporting (its work and metrics)
does not change it, so stating them keeps older campaigns resumable; what runs does."""

from __future__ import annotations

import dataclasses

from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.measure.settings import RunSettings
from perfport.space import kernel_space
from perfport.tune.tune import campaign_key


def test_work_and_metrics_do_not_change_the_key_but_the_tolerance_does():
    spec = builtin("vector_add")
    assert spec.bytes is not None  # the built-in states its work
    device = get_device("opencl:0:0")
    problem = spec.problem
    space = kernel_space(spec, problem, device)

    def key(s):
        return campaign_key(s, problem, device, space, "brute_force", RunSettings())

    bare = dataclasses.replace(spec, bytes=None, flops=None, metrics={})
    assert key(spec) == key(bare)
    assert key(spec) != key(dataclasses.replace(spec, tolerance=0.125))


def test_keys_of_earlier_releases_still_resume():
    """A campaign resumes only under the key it was made with. Keys computed at e67bd0d:
    bracketing compound sizes in the divisibility rule's label (part of the key) changed
    convolution2d's and matmul_tiled's, and a kernel without parameters gaining its one
    configuration as the default changed its own."""
    from perfport._core import ArrayArg, KernelSpec, ScalarArg
    from perfport._core.records import Backend, DeviceInfo, DeviceType

    device = DeviceInfo(
        id="opencl:0:0", backend=Backend.OPENCL, name="Pinned GPU", vendor="V",
        type=DeviceType.GPU, driver="1", platform="P", version="OpenCL 3.0", compute_units=100,
        max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64), local_mem_bytes=49152,
        global_mem_bytes=1 << 34,
    )  # fmt: skip
    scale = KernelSpec(
        name="scale", entry="scale",
        source="__kernel void scale(__global float* y, int n) { y[get_global_id(0)] *= 2.0f; }",
        global_size=("n",), local_size=("16",), problem={"n": 64},
        args=(ArrayArg("y", "float", ("n",), output=True), ScalarArg("n", "int", "n")),
    )  # fmt: skip
    earlier = {
        "vector_add": "vector_add-9c6442434c7a", "stencil": "stencil-d3e314ba8d9b",
        "convolution2d": "convolution2d-4f571ca06211", "matmul_tiled": "matmul_tiled-44e2aca6b512",
        "scale": "scale-d2ec8b9e263e",
    }  # fmt: skip
    # docs/wg.md's described stencil (computed at bef6bd7): restricting a description's
    # types through its restrictions changed every described stencil's key.
    from perfport.kernels.described import described_stencil

    cross = described_stencil({
        "name": "cross", "north": 2, "south": 2, "east": 3, "west": 3,
        "body": "return (OUT)(GET(0, -2) + GET(0, 2) + GET(-3, 0) + GET(3, 0));",
    })  # fmt: skip
    earlier["cross"] = "cross-92bbc16cdde9"
    for name, key in earlier.items():
        spec = {"scale": scale, "cross": cross}.get(name) or builtin(name)
        space = kernel_space(spec, spec.problem, device)
        assert campaign_key(spec, spec.problem, device, space, "brute_force", RunSettings()) == key
