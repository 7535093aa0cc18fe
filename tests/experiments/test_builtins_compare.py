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


@pytest.mark.parametrize(
    ("part", "problem"),
    [
        ("stencil", {"width": 4096, "height": 4096}),
        ("convolution", {"n": 1 << 24, "mask": 17}),
        ("stencil", {"width": 96, "height": 80}),  # the smoke mode's
    ],
)
def test_focus_lists_are_legal_and_lead_with_the_scalar_winners(part, problem, cpu) -> None:
    from perfport.kernels import builtin
    from perfport.space import kernel_space

    spec = builtin(module.PAIRS[part][1])
    legal = {
        tuple(sorted(c.items())) for c in kernel_space(spec, spec.problem.merged(problem), cpu)
    }
    focus = module.focus_configs(part)
    keys = [tuple(sorted(c.items())) for c in focus]
    assert len(set(keys)) == len(keys) and set(keys) <= legal
    first_vector = next(i for i, c in enumerate(focus) if c["vw"] > 1)
    assert first_vector > 0 and all(c["vw"] == 1 for c in focus[:first_vector])
    assert all(c["vw"] > 1 for c in focus[first_vector:])


def test_problem_values_replace_the_scales(tmp_path: Path) -> None:
    args = module.parse(["--problem", "n=4096", "mask=3", "--only-new", "--focus", "vector"])
    assert dict(args.problem) == {"n": 4096, "mask": 3} and args.only_new
    with pytest.raises(SystemExit):
        module.parse(["--problem", "mask"])


@pytest.mark.slow
def test_vector_gpu_script_smoke_mode_on_pocl(tmp_path: Path, cpu) -> None:
    """experiments/2026-11-26-builtins-vec/gpu_run.sh with SMOKE=1: every step's JSON."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    script = root / "experiments/2026-11-26-builtins-vec/gpu_run.sh"
    env = {**os.environ, "SMOKE": "1", "DEVICES": cpu.id, "OUT": str(tmp_path),
           "PYTHON": sys.executable, "STENCIL_TIME": "10", "CONV_TIME": "5"}  # fmt: skip
    subprocess.run(["bash", str(script)], cwd=root, env=env, check=True, timeout=400)
    stencil = json.loads((tmp_path / "stencil/stencil.json").read_text())
    assert stencil["focus"] == "vector" and stencil["runs"][0]["best_ms"] > 0
    for mask in (3, 7, 17):
        conv = json.loads((tmp_path / f"conv-mask{mask}/convolution.json").read_text())
        assert conv["problem"]["mask"] == mask and conv["rechecked"][0]["best_ms"] > 0
    assert (tmp_path / f"roofline-{cpu.id.replace(':', '_')}.json").stat().st_size > 0
