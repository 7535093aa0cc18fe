"""stencil_wide's and convolution_wide's vector accesses (``access=vector``, ``vw > 1``): every
legal vector configuration of a small space verifies against numpy on PoCL, aligned rows and
ragged ones, and the rules that restrict vectors remove what they document and nothing of the
scalar space."""

from __future__ import annotations

import pytest

from perfport._core import Config, DeviceInfo, Outcome, Problem
from perfport.devices import open_session
from perfport.kernels import builtin
from perfport.measure import RunSettings, Timing, TrialEngine
from perfport.measure.data import reference_outputs
from perfport.space import kernel_space

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))
# Work-group shapes of the brute-forced space: one work-item, a narrow and a wide group.
SHAPES = {(1, 1), (4, 2), (16, 4)}


def _engine(cpu: DeviceInfo, name: str, problem: dict[str, object]) -> TrialEngine:
    spec = builtin(name)
    engine = TrialEngine(open_session(cpu), spec, spec.problem.merged(problem), QUICK)
    engine.use_expected(reference_outputs(spec, engine.problem, QUICK.seed), "numpy reference")
    return engine


def _vector_configs(cpu: DeviceInfo, name: str, problem: Problem) -> list[Config]:
    spec = builtin(name)
    return [
        c
        for c in kernel_space(spec, problem, cpu)
        if c["access"] == "vector" and (c["wc"], c["wr"]) in SHAPES
    ]


ALIGNED_AND_RAGGED = [
    {"width": 64, "height": 40},  # rows start on vector boundaries: aligned accesses
    {"width": 67, "height": 45},  # ragged: vloadn/vstoren, a last run that does not fit
]


@pytest.mark.slow  # 24 programs per problem: minutes of PoCL compiling on a loaded machine
@pytest.mark.parametrize("problem", ALIGNED_AND_RAGGED)
def test_every_vector_configuration_verifies(cpu, problem):
    spec = builtin("stencil_wide")
    configs = _vector_configs(cpu, "stencil_wide", spec.problem.merged(problem))
    # rows x vw x variant, each at every shape: nothing of the space is left out
    assert {(c["rows"], c["vw"], c["variant"]) for c in configs} == {
        (r, v, t) for r in (1, 2, 4, 8) for v in (2, 4, 8) for t in ("tile", "direct")
    }
    engine = _engine(cpu, "stencil_wide", problem)
    for config in configs:
        m = engine.run(config)
        assert m.outcome is Outcome.OK, (dict(config), m.message)


def _v(wc, wr, rows, vw, variant):
    return {"wc": wc, "wr": wr, "rows": rows, "vw": vw, "variant": variant, "access": "vector"}


@pytest.mark.parametrize("problem", ALIGNED_AND_RAGGED)
def test_each_vector_width_and_variant_verifies(cpu, problem):
    """The fast suite's share of the brute force: every vector width in both variants."""
    engine = _engine(cpu, "stencil_wide", problem)
    for values in [
        _v(16, 4, 1, 2, "direct"),
        _v(4, 2, 4, 4, "direct"),
        _v(1, 1, 2, 8, "direct"),
        _v(4, 2, 2, 2, "tile"),
        _v(16, 4, 1, 4, "tile"),
        _v(1, 1, 8, 8, "tile"),
    ]:
        m = engine.run(Config.of(values))
        assert m.outcome is Outcome.OK, (values, m.message)


@pytest.mark.parametrize(
    ("problem", "configs"),
    [
        (  # uneven borders, padding, integers; an aligned width
            {"width": 48, "height": 21, "north": 3, "south": 0, "east": 5, "west": 2,
             "boundary": "pad", "pad": 7, "dtype": "int"},
            [_v(8, 4, 2, 4, "tile"), _v(4, 2, 4, 8, "direct"), _v(2, 2, 1, 2, "direct")],
        ),
        (  # float in, double out: two-wide output vectors beside four-wide input ones
            {"width": 36, "height": 19, "out_dtype": "double"},
            [_v(4, 4, 2, 4, "direct"), _v(4, 2, 4, 8, "tile")],
        ),
        (  # doubles, a width of odd multiples of 2, borders wider than a run
            {"width": 30, "height": 17, "dtype": "double", "east": 9, "west": 9},
            [_v(4, 4, 1, 2, "direct"), _v(2, 4, 2, 4, "tile")],
        ),
    ],
)  # fmt: skip
def test_vector_accesses_verify_with_other_types_and_borders(cpu, problem, configs):
    engine = _engine(cpu, "stencil_wide", problem)
    for values in configs:
        m = engine.run(Config.of(values))
        assert m.outcome is Outcome.OK, (values, m.message)


def test_vector_rules_remove_only_what_they_document(cpu):
    spec = builtin("stencil_wide")
    space = kernel_space(spec, None, cpu)
    vector = [c for c in space if c["access"] == "vector"]
    assert vector and all(c["vw"] > 1 for c in vector)
    # every scalar configuration has its vector twin once runs are two or more cells wide
    scalar_wide = {
        tuple(sorted(c.items())) for c in space if c["access"] == "scalar" and c["vw"] > 1
    }
    twins = {tuple(sorted({**c, "access": "scalar"}.items())) for c in vector}
    assert twins == scalar_wide
    # two-byte elements get no vectors; a register window over 256 cells only the tile
    short = kernel_space(spec, spec.problem.merged({"dtype": "short"}), cpu)
    assert {c["access"] for c in short} == {"scalar"}
    wide = kernel_space(spec, spec.problem.merged({"north": 8, "south": 8}), cpu)
    big = [c for c in wide if c["access"] == "vector" and c["variant"] == "direct"]
    assert big and all((c["rows"] + 16) * (c["vw"] + 2) <= 256 for c in big)
    assert any(c["rows"] == 8 and c["vw"] == 8 for c in wide if c["access"] == "vector")


def _c(wg, per_item, vw, variant):
    return {"wg": wg, "per_item": per_item, "vw": vw, "variant": variant}


@pytest.mark.parametrize(
    ("problem", "configs"),
    [
        (  # n no run divides, a mask longer than a run: partial runs and the tail
            {"n": 1003, "mask": 7},
            [_c(16, 2, 4, "direct"), _c(8, 4, 8, "tile"), _c(1, 1, 2, "direct"),
             _c(32, 1, 2, "tile"), _c(4, 16, 8, "direct")],
        ),
        (  # doubles: two-wide vectors; a mask of one
            {"n": 517, "mask": 1, "dtype": "double"},
            [_c(8, 2, 4, "direct"), _c(16, 1, 8, "tile")],
        ),
        ({"n": 1 << 12, "mask": 17}, [_c(64, 2, 4, "direct"), _c(32, 4, 4, "tile")]),
    ],
)  # fmt: skip
def test_convolution_vectors_verify(cpu, problem, configs):
    engine = _engine(cpu, "convolution_wide", problem)
    for values in configs:
        m = engine.run(Config.of(values))
        assert m.outcome is Outcome.OK, (values, m.message)


@pytest.mark.slow  # 24 programs: a minute or more of PoCL compiling on a loaded machine
def test_every_convolution_vector_configuration_verifies(cpu):
    spec = builtin("convolution_wide")
    problem = {"n": 999, "mask": 5}
    configs = [
        c
        for c in kernel_space(spec, spec.problem.merged(problem), cpu)
        if c["vw"] > 1 and c["wg"] in (1, 8, 64)
    ]
    assert len({(c["per_item"], c["vw"], c["variant"]) for c in configs}) == 5 * 3 * 2
    engine = _engine(cpu, "convolution_wide", problem)
    for config in configs:
        m = engine.run(config)
        assert m.outcome is Outcome.OK, (dict(config), m.message)


def test_convolution_vector_rules(cpu):
    spec = builtin("convolution_wide")
    assert {c["vw"] for c in kernel_space(spec, spec.problem.merged({"dtype": "short"}), cpu)} == {
        1
    }
    long_mask = kernel_space(spec, spec.problem.merged({"mask": 254}), cpu)
    # a 254-point mask leaves room in 256 registers for two-wide direct runs only
    assert {c["vw"] for c in long_mask if c["variant"] == "direct"} == {1, 2}
    assert {c["vw"] for c in long_mask if c["variant"] == "tile"} == {1, 2, 4, 8}
