"""Each built-in kernel runs and verifies on PoCL, across parameter values and problem options."""

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from perfport._core import Config, Outcome, Problem
from perfport.devices import open_session
from perfport.devices.dialect import CUDA_PRELUDE
from perfport.kernels import BUILTINS, builtin
from perfport.measure import RunSettings, Timing, TrialEngine
from perfport.measure.data import reference_outputs
from perfport.space import kernel_space

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))

CASES = [
    ("vector_add", {"n": 1000}, [{"wg": 1}, {"wg": 64}, {"wg": 1024}]),
    ("convolution", {"n": 5000, "mask": 33}, [{"wg": 1}, {"wg": 32}, {"wg": 512}]),
    ("convolution", {"n": 300, "mask": 1, "dtype": "double"}, [{"wg": 16}]),
    (
        "stencil",
        {"width": 67, "height": 45},
        [{"wc": 1, "wr": 1}, {"wc": 16, "wr": 8}, {"wc": 96, "wr": 2}],
    ),
    (
        "stencil",
        {
            "width": 40,
            "height": 33,
            "north": 3,
            "south": 0,
            "east": 5,
            "west": 2,
            "boundary": "pad",
            "pad": 7,
            "dtype": "int",
        },
        [{"wc": 8, "wr": 4}, {"wc": 4, "wr": 16}],
    ),
    (
        "stencil",
        {
            "width": 30,
            "height": 30,
            "north": 0,
            "south": 0,
            "east": 0,
            "west": 0,
            "dtype": "double",
        },
        [{"wc": 8, "wr": 8}],
    ),
    (
        "matmul",
        {"M": 33, "N": 17, "K": 29, "batch": 3},
        [
            {"row_tile": 1, "acc_tile": 1, "col_tile": 1, "wg_rows": 8, "wg_cols": 8},
            {"row_tile": 8, "acc_tile": 4, "col_tile": 2, "wg_rows": 1, "wg_cols": 64},
            {"row_tile": 2, "acc_tile": 8, "col_tile": 8, "wg_rows": 16, "wg_cols": 16},
        ],
    ),
    (  # a non-square filter and a size no tile divides; every variant of the code
        "convolution2d",
        {"width": 37, "height": 21, "filter_width": 5, "filter_height": 3},
        [
            {
                "block_size_x": 16,
                "block_size_y": 16,
                "tile_size_x": 1,
                "tile_size_y": 1,
                "read_only": 0,
                "use_padding": 1,
                "use_shmem": 1,
            },
            {
                "block_size_x": 48,
                "block_size_y": 2,
                "tile_size_x": 3,
                "tile_size_y": 2,
                "read_only": 1,
                "use_padding": 1,
                "use_shmem": 1,
            },
            {
                "block_size_x": 32,
                "block_size_y": 4,
                "tile_size_x": 4,
                "tile_size_y": 3,
                "read_only": 1,
                "use_padding": 0,
                "use_shmem": 0,
            },
            {
                "block_size_x": 16,
                "block_size_y": 1,
                "tile_size_x": 2,
                "tile_size_y": 4,
                "read_only": 0,
                "use_padding": 0,
                "use_shmem": 0,
            },
        ],
    ),
    (
        "matmul",
        {"M": 20, "N": 12, "K": 9, "trans_a": True, "trans_b": True},
        [
            {"row_tile": 4, "acc_tile": 2, "col_tile": 4, "wg_rows": 8, "wg_cols": 16},
        ],
    ),
]


@pytest.mark.parametrize(("name", "problem", "configs"), CASES)
def test_builtin_verifies(cpu, name, problem, configs):
    spec = builtin(name)
    session = open_session(cpu)
    engine = TrialEngine(session, spec, Problem.of(problem), QUICK)
    engine.use_expected(reference_outputs(spec, engine.problem, QUICK.seed), "numpy reference")
    for values in configs:
        m = engine.run(Config.of(values))
        assert m.outcome is Outcome.OK, (values, m.message)


def test_every_builtin_default_is_legal(cpu):
    for name in BUILTINS:
        spec = builtin(name)
        assert kernel_space(spec, None, cpu).index(spec.default) is not None, name


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("name", list(BUILTINS))
def test_builtin_compiles_as_cuda(tmp_path, name):
    """The portable sources are valid CUDA C (checked with nvcc; CI without it skips)."""
    spec = builtin(name)
    defines = spec.build_defines(spec.env(spec.default, {}))
    source = tmp_path / "k.cu"
    source.write_text(CUDA_PRELUDE + spec.source)
    cmd = [
        "nvcc",
        "--ptx",
        "-o",
        str(tmp_path / "k.ptx"),
        *(f"-D{k}={v}" for k, v in defines.items()),
        str(source),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


SCENARIOS = [
    ("synthetic", {"width": 37, "height": 29, "north": 3, "south": 0, "east": 5, "west": 2}),
    (
        "synthetic",
        {"width": 40, "height": 24, "complex": True, "dtype": "int", "boundary": "pad", "pad": 3},
    ),
    (
        "synthetic",
        {
            "width": 33,
            "height": 17,
            "complex": True,
            "dtype": "float",
            "out_dtype": "double",
            "north": 0,
            "east": 0,
        },
    ),
    (
        "synthetic",
        {"width": 20, "height": 20, "dtype": "int", "out_dtype": "float", "north": 30, "south": 30},
    ),
    ("synthetic", {"width": 24, "height": 24, "dtype": "double", "complex": True}),
    ("gaussian", {"width": 45, "height": 31, "radius": 3}),
    ("gaussian", {"width": 30, "height": 30, "radius": 0, "dtype": "double"}),
    ("gol", {"width": 50, "height": 41}),
    ("heat", {"width": 33, "height": 65}),
    ("nms", {"width": 47, "height": 39}),
    ("sobel", {"width": 60, "height": 22, "boundary": "pad"}),
    ("threshold", {"width": 31, "height": 19}),
]


@pytest.mark.parametrize(("name", "problem"), SCENARIOS)
def test_stencil_scenarios_verify(cpu, name, problem):
    spec = builtin(name)
    engine = TrialEngine(open_session(cpu), spec, Problem.of(problem), QUICK)
    engine.use_expected(reference_outputs(spec, engine.problem, QUICK.seed), "numpy reference")
    for values in ({"wc": 8, "wr": 4}, {"wc": 16, "wr": 16}, {"wc": 1, "wr": 32}):
        m = engine.run(Config.of(values))
        assert m.outcome is Outcome.OK, (name, problem, values, m.message)


def test_scenario_restrictions_reject_bad_types(cpu):
    space = kernel_space(builtin("gol"), builtin("gol").problem.merged({"dtype": "float"}), cpu)
    assert len(space) == 0 and any(
        "dtype == 'int'" in label for label, _, _ in space.report.removed_by
    )


HUB = Path(__file__).resolve().parents[3] / "shared/data/kerneltuner-benchmark_hub"


def test_convolution2d_space_is_the_hubs(cpu):
    """The 4,362 configurations the benchmark hub brute-forced for convolution_milo (15x15
    filter), and its padded local-memory rows as the kernel declares them."""
    spec = builtin("convolution2d")
    space = kernel_space(spec, None, cpu)
    assert len(space) == 4362
    env = spec.env(
        {"block_size_x": 48, "block_size_y": 4, "tile_size_x": 3, "tile_size_y": 2,
         "read_only": 0, "use_padding": 1, "use_shmem": 1},
        spec.problem,
    )  # fmt: skip
    assert env["sh_w"] == 176 and env["sh_w"] % 32 == 48 % 32 and env["sh_w"] >= 48 * 3 + 14
    assert spec.build_defines(env)["READ_ONLY"] == "0" and "read_only" not in spec.build_defines(
        env
    )
    cache_file = HUB / "convolution_milo" / "A100.json.gz"
    if cache_file.is_file():
        cache = json.loads(gzip.decompress(cache_file.read_bytes()))
        names = spec.param_names
        hub = {tuple(e[n] for n in names) for e in cache["cache"].values()}
        ours = {tuple(c[n] for n in names) for c in space}
        assert ours == hub
