"""Kernel Tuner's five OpenCL examples, written as perfport specs (examples/kernel_tuner/):
their spaces are Kernel Tuner's, and every configuration that runs correctly verifies."""

from __future__ import annotations

from pathlib import Path

import pytest

import perfport
from perfport import Outcome
from perfport._core import Check, DeviceInfo
from perfport.space import kernel_space

EXAMPLES = Path(__file__).parents[2] / "examples" / "kernel_tuner"

# Kernel Tuner's space size for each example: the product of its tune_params' lists, less
# what its restrictions remove (only matmul has one, block_size_x == block_size_y *
# tile_size_y: 11 (bx, by, ty) triples x 4 tile_size_x). On a device Kernel Tuner also drops
# configurations over the device's maximum work-group size (PoCL here: 4096), as perfport's
# device rules do: the stencil's 160..256 x 32 work-groups.
KT_SPACE = {
    "vector_add.py": 15,  # 15 block sizes
    "stencil.toml": 48,  # 8 x 6
    "matmul.py": 44,  # 3 x 6 x 4 x 4 = 288, 44 with the restriction
    "convolution.toml": 432,  # 8 x 6 x 3 x 3
    "reduction.toml": 540,  # 6 x 3 x 6 x 5
}
KT_SPACE_MAX_4096 = {**KT_SPACE, "stencil.toml": 44}

# Small problems and budgets: seconds on PoCL.
RUNS = {
    "vector_add.py": ({"n": 65536}, 4),
    "stencil.toml": ({"width": 256, "height": 128}, 5),
    "matmul.py": ({"n": 512}, 3),
    "convolution.toml": ({"width": 128, "height": 96}, 3),
    "reduction.toml": ({"n": 65536}, 8),
}


@pytest.mark.parametrize("name", sorted(KT_SPACE))
def test_space_is_kernel_tuners(name: str, cpu: DeviceInfo) -> None:
    spec = perfport.load_kernel(EXAMPLES / name)
    assert len(kernel_space(spec)) == KT_SPACE[name]
    assert cpu.max_work_group_size == 4096  # what KT_SPACE_MAX_4096 assumes
    assert len(kernel_space(spec, device=cpu)) == KT_SPACE_MAX_4096[name]


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "matmul.py" else n for n in RUNS]
)
def test_tunes_and_every_correct_configuration_verifies(
    name: str, cpu: DeviceInfo, tmp_path: Path
) -> None:
    problem, budget = RUNS[name]
    warnings: list[str] = []
    result = perfport.tune(
        EXAMPLES / name, problem=problem, budget=budget, strategy="random",
        device=cpu, db=tmp_path / "kt.db", warn=warnings.append,
    )  # fmt: skip
    assert not warnings  # every output is compared with something
    ran = [m for m in result.measurements if m.outcome.measured]
    assert len(ran) == budget
    assert all(m.outcome is Outcome.OK for m in ran), [(m.config, m.message) for m in ran]
    assert all(m.check is Check.VERIFIED for m in ran)
    assert result.verification != "not verified"
