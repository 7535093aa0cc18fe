"""experiments/2026-11-26-builtins/builtins_compare.py: the old and new built-ins tuned side
by side, and their ratios to each other and to the vendor's figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import load_experiment

module = load_experiment("builtins_compare")


def test_ratios_compare_on_each_device_and_the_vendor_on_gpus_only() -> None:
    run = module.TuneRun
    runs = [
        run("stencil", "cuda:0", 0.108, {}, 10, 40.0),
        run("stencil_wide", "cuda:0", 0.054, {}, 10, 40.0),
        run("stencil", "opencl:1:0", 2.0, {}, 10, 40.0),
        run("stencil_wide", "opencl:1:0", 1.0, {}, 10, 40.0),
        run("stencil_wide", "opencl:2:0", None, None, 0, 40.0, "timed out"),
    ]
    rows = module.ratios("stencil", runs, {"copy_ms": 0.053}, {"cuda:0"})
    gpu, cpu, failed = rows
    assert gpu["device"] == "cuda:0" and gpu["speedup_new_over_old"] == pytest.approx(2.0)
    assert gpu["fraction_of_vendor"] == pytest.approx(0.053 / 0.054)
    assert cpu["speedup_new_over_old"] == pytest.approx(2.0) and "fraction_of_vendor" not in cpu
    assert failed["new_ms"] is None and "speedup_new_over_old" not in failed
    assert module.part_bytes("stencil", {"width": 4096, "height": 4096}) == 64 << 20


@pytest.mark.slow
def test_tiny_part_on_pocl(tmp_path: Path, cpu) -> None:
    argv = ["--part", "convolution", "--scale", "tiny", "--devices", cpu.id, "--budget", "2",
            "--max-time", "30", "--out", str(tmp_path)]  # fmt: skip
    assert module.main(argv) == 0
    result = json.loads((tmp_path / "convolution.json").read_text())
    assert [r["kernel"] for r in result["runs"]] == ["convolution", "convolution_wide"]
    assert all(r["best_ms"] > 0 and r["error"] == "" for r in result["runs"])
    assert result["comparison"][0]["speedup_new_over_old"] > 0
    rechecked = {r["kernel"]: r for r in result["rechecked"]}
    for run in result["runs"]:  # the same configurations, measured again
        assert rechecked[run["kernel"]]["best_config"] == run["best_config"]
        assert rechecked[run["kernel"]]["best_ms"] > 0
