"""Pruning across devices: per-device legal counts and the count legal on all of them."""

from __future__ import annotations

import json

import pytest

import perfport
from perfport._core import Backend, DeviceInfo, DeviceType, Problem
from perfport.kernels import builtin
from perfport.split.pruning import common_space
from tune.cli_in_process import run_cli


def device(name: str, max_wg: int, local_mem: int, units: int = 4) -> DeviceInfo:
    return DeviceInfo(
        f"test:{name}", Backend.OPENCL, name, "v", DeviceType.GPU, "1", "p", "OpenCL 1.2",
        units, max_wg, (max_wg, max_wg, 64), local_mem, 1 << 30,
    )  # fmt: skip


CPU = device("cpu", 8192, 32 << 10)
GPU = device("gpu", 512, 8 << 10)


def test_common_count_is_the_intersection():
    # convolution with mask 625 (the paper's case): the work-group tile of wg + 624 floats must
    # fit local memory, so the small GPU keeps wg <= 1024 only up to 2048 - 624 elements.
    spec, problem = builtin("convolution"), Problem.of(n=1 << 16, mask=625)
    spaces = [perfport.kernel_space(spec, problem, d) for d in (CPU, GPU)]
    result = common_space([CPU, GPU], spaces)
    cpu, gpu = result.per_device
    assert (cpu.cartesian, cpu.legal, cpu.pruned) == (11, 11, 0)
    # GPU: wg <= 512 (max work-group) and (wg + 624) * 4 <= 8192 -> wg <= 1424: 2^0..2^9
    assert (gpu.legal, gpu.pruned) == (10, 1)
    assert result.common == 10 and result.cartesian == 11


def test_common_of_disjoint_limits_is_smaller_than_each():
    # matmul's work-group pairs: one device allows at most 64 work-items, the other only
    # dimension-0 sizes up to 8; the intersection is what both allow.
    spec, problem = builtin("matmul"), Problem.of(M=1024, N=1024, K=1024)
    a = DeviceInfo(**{**device("a", 64, 1 << 16).__dict__})
    b = DeviceInfo(**{**device("b", 1024, 1 << 16).__dict__, "max_work_item_sizes": (8, 1024, 64)})
    spaces = [perfport.kernel_space(spec, problem, d) for d in (a, b)]
    result = common_space([a, b], spaces)
    # 64 tile choices x work-group pairs: a keeps (1,64) (8,8) (64,1); b keeps wg_cols <= 8:
    # (8,8) (16,8) (32,8) (64,1) (128,1); both: (8,8) (64,1).
    assert [d.legal for d in result.per_device] == [64 * 3, 64 * 5]
    assert result.common == 64 * 2


def test_space_two_devices_json_and_single_device_unchanged(capfd):
    done = run_cli(
        capfd, "space", "convolution", "--problem", "n=65536", "mask=625",
        "--device", "opencl:0:0.0", "--device", "opencl:0:0.1", "--min-work-groups", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["devices"] == ["opencl:0:0.0", "opencl:0:0.1"]
    assert [d["legal"] for d in out["per_device"]] == [11, 11]
    assert out["common"] == {"cartesian": 11, "legal": 11}
    one = json.loads(
        run_cli(capfd, "space", "convolution", "--device", "opencl:0:0", "--json").stdout
    )
    assert set(one) == {"kernel", "device", "problem", "cartesian", "legal", "removed_by", "pruned"}
    assert one["device"] == "opencl:0:0"


@pytest.mark.parametrize("bad", ["opencl:0:0.9", "opencl:7:0"])
def test_space_unknown_device_is_one_line(bad: str, capfd):
    done = run_cli(capfd, "space", "convolution", "--device", "opencl:0:0", "--device", bad)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and bad in done.stderr
