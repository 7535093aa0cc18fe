"""``perfport space`` with several devices: each device once, and the same advice as one."""

import json
import subprocess
import sys

GROUPS = """
name = "groups"
entry = "k"
source = "__kernel void k(__global float* out, int n) { out[get_global_id(0)] = 1.0f; }"
global_size = ["ceil_div(n, bx)"]
local_size = ["bx"]
problem = { n = 64 }
params = [{ name = "bx", values = [8, 16, 32, 64], kind = "launch" }]
args = [
  { kind = "array", name = "out", dtype = "float", shape = ["n"], output = true },
  { kind = "scalar", name = "n", dtype = "int", value = "n" },
]
"""


def perfport(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfport", *args], capture_output=True, text=True, timeout=120
    )


def test_a_device_named_by_its_id_and_its_fingerprint_is_one_device():
    """It was listed twice ('legal on all 2 devices'), where split refuses it."""
    devices = json.loads(perfport("devices", "--json").stdout)["devices"]
    first = next(d for d in devices if d["id"] == "opencl:0:0")
    done = perfport(
        "space", "vector_add", "--device", "opencl:0:0", "--device", first["fingerprint"],
        "--device", "opencl:00:0", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["devices"] == ["opencl:0:0"]


def test_an_empty_space_on_several_devices_gets_the_work_items_hint(tmp_path):
    """The hint came with one device only."""
    spec = tmp_path / "groups.toml"
    spec.write_text(GROUPS)
    for json_flag in ([], ["--json"]):
        done = perfport(
            "space", str(spec), "--problem", "n=100", "--device", "opencl:0:0.0",
            "--device", "opencl:0:0.1", *json_flag,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stderr.count("hint: global_size counts work-items") == 1, done.stderr


def test_all_with_another_device_is_one_line():
    done = perfport("space", "vector_add", "--device", "all", "--device", "opencl:0:0.0")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "comes alone, not with opencl:0:0.0" in done.stderr
