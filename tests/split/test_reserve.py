"""A CPU beside GPUs runs its part of a split on a sub-device that leaves cores free
(``--cpu-reserve``): which devices are partitioned and by how much, refusals, and a split
with a fissioned CPU part on PoCL verified, its compute units in the JSON."""

from __future__ import annotations

import json

import pytest

from perfport._core import Backend, DeviceInfo, DeviceType, Problem, SpecError
from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.split.reserve import cpu_opening
from perfport.split.split import split_run
from tune.cli_in_process import run_cli


def _device(device_id: str, kind: DeviceType, units: int) -> DeviceInfo:
    return DeviceInfo(
        device_id, Backend.OPENCL, device_id, "v", kind, "1", "p", "1.2",
        units, 1024, (1024, 1024, 1024), 1 << 16, 1 << 30,
    )  # fmt: skip


GPU0, GPU1 = _device("opencl:0:0", DeviceType.GPU, 132), _device("opencl:0:1", DeviceType.GPU, 132)
CPU = _device("opencl:1:0", DeviceType.CPU, 32)


def test_a_cpu_beside_gpus_leaves_one_core_per_gpu_by_default():
    assert cpu_opening([GPU0, CPU]).compute_units == (("opencl:1:0", 31),)
    two = cpu_opening([GPU0, GPU1, CPU])
    assert two.compute_units == (("opencl:1:0", 30),) and two.reserve == 2
    assert two.to_json([GPU0, GPU1, CPU])["cpu_parts"] == [
        {"device": "opencl:1:0", "compute_units": 30, "of": 32}
    ]
    # no GPU: the CPU keeps every core unless told otherwise
    assert cpu_opening([CPU, _device("opencl:2:0", DeviceType.CPU, 8)]).compute_units == ()
    assert cpu_opening([GPU0, CPU], reserve=0).compute_units == ()
    assert cpu_opening([GPU0, CPU], reserve=4).compute_units == (("opencl:1:0", 28),)


def test_sub_devices_and_gpus_are_not_partitioned():
    sub = _device("opencl:1:0.1", DeviceType.CPU, 1)
    assert cpu_opening([GPU0, sub]).compute_units == ()
    assert cpu_opening([GPU0, GPU1]).to_json([GPU0, GPU1])["cpu_parts"] == []
    assert cpu_opening([GPU0, sub], reserve=0).compute_units == ()
    # A reserve asked for where no whole CPU can keep it was ignored without a word.
    for devices in ([GPU0, sub], [GPU0, GPU1]):
        with pytest.raises(
            SpecError, match="partitions a whole OpenCL CPU, and this split has none"
        ):
            cpu_opening(devices, reserve=1)


@pytest.mark.parametrize(("reserve", "says"), [(32, "at most 31"), (-1, "0 or more")])
def test_a_reserve_that_leaves_no_core_is_refused(reserve, says):
    with pytest.raises(SpecError, match=says):
        cpu_opening([GPU0, CPU], reserve=reserve)


def test_a_split_with_a_fissioned_cpu_part_is_verified():
    whole, sub = get_device("opencl:0:0"), get_device("opencl:0:0.1")
    assert whole.compute_units >= 2  # the CI machine's PoCL: 2 cores
    opening = cpu_opening([whole, sub], reserve=whole.compute_units - 1)
    session = opening.one(whole)
    try:  # the part's session really runs on the sub-device, not the whole CPU
        assert session.compute_units == 1  # type: ignore[attr-defined]
    finally:
        session.close()
    out = split_run(builtin("convolution"), Problem.of(n=4096), [whole, sub], target_s=0.0,
                    opening=opening)  # fmt: skip
    assert out.verified and out.mismatch is None
    j = out.to_json()
    assert j["cpu_reserve"] == whole.compute_units - 1
    assert j["cpu_parts"] == [
        {"device": "opencl:0:0", "compute_units": 1, "of": whole.compute_units}
    ]


@pytest.mark.parametrize(
    ("extra", "says"),
    [(["--cpu-reserve", "99"], "--cpu-reserve 99 leaves none"), (["--halo", "host"], "--steps")],
)
def test_cli_refuses_a_bad_reserve_in_one_line(tmp_path, extra, says, capfd):
    db = tmp_path / "r.db"
    done = run_cli(capfd, "split", "convolution", "--device", "opencl:0:0", "--device",
                    "opencl:0:0.1", "--db", str(db), *extra)  # fmt: skip
    assert done.returncode == 2 and says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not db.exists()


def test_cli_json_reports_the_cpu_part(tmp_path, capfd):
    done = run_cli(capfd, "split", "convolution", "--device", "opencl:0:0", "--device", "opencl:0:0.1",
                    "--cpu-reserve", "1", "--problem", "n=2048", "--db", str(tmp_path / "r.db"),
                    "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["verified"] and out["cpu_reserve"] == 1
    assert out["cpu_parts"][0]["device"] == "opencl:0:0"
