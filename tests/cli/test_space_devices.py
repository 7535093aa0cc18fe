"""``perfport space`` with several devices: each device once."""

import json
import subprocess
import sys


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
