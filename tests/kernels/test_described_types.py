"""A described stencil says what it is: its element types (the problem can still override
them) and a reference, a safe numpy expression of the neighbours or a Python function beside
the JSON file, so a mistake that stays inside the borders (an axis swap) fails verification."""

import json
import re

import pytest

from perfport._core import Config, Outcome, Problem, SpecError
from perfport.features import dataset_features
from perfport.kernels import described_stencil, resolve_kernel
from perfport.measure import Runner, RunSettings, Timing

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))
SMALL = Problem.of({"width": 40, "height": 24})
SOUTH_DIFF = {
    "name": "south_diff", "south": 1, "east": 1,
    "body": "return (OUT)(GET(0, 1) - GET(0, 0));", "reference": "S - C",
}  # fmt: skip


@pytest.fixture
def outcomes(cpu):
    def measure(spec, sizes=((32, 4), (8, 8))):
        with Runner(spec, SMALL, cpu, QUICK) as runner:
            return [runner.measure(Config.of(wc=wc, wr=wr)) for wc, wr in sizes]

    return measure


def test_the_description_carries_its_types_and_the_problem_overrides_them():
    spec = described_stencil({**SOUTH_DIFF, "dtype": "int", "out_dtype": "double"})
    assert spec.problem["dtype"] == "int" and spec.problem["out_dtype"] == "double"
    features = dataset_features(spec, {})  # what wg predict answers for
    assert features["data_in_float"] == 0.0 and features["data_in_bytes"] == 4.0
    assert features["data_out_bytes"] == 8.0
    assert dataset_features(spec, {"dtype": "float"})["data_in_float"] == 1.0
    assert described_stencil(SOUTH_DIFF).problem["dtype"] == "float"  # as before


@pytest.mark.parametrize("dtype", ["float", "int"])
def test_a_correct_body_passes_its_reference(outcomes, dtype):
    ms = outcomes(described_stencil({**SOUTH_DIFF, "dtype": dtype}))
    assert all(m.outcome is Outcome.OK and m.verified_against == "numpy reference" for m in ms)


def test_an_axis_swap_inside_the_borders_fails_verification(outcomes):
    swapped = {**SOUTH_DIFF, "body": "return (OUT)(GET(1, 0) - GET(0, 0));"}  # east, not south
    ms = outcomes(described_stencil(swapped))
    assert all(m.outcome is Outcome.WRONG_RESULT for m in ms), ms
    # Without a reference the sizes only agree with each other: the swap passes.
    unchecked = {k: v for k, v in swapped.items() if k != "reference"}
    assert all(m.ok for m in outcomes(described_stencil(unchecked)))


def test_nb_and_problem_values_in_a_reference(outcomes):
    description = {
        "name": "mean5", "north": 2, "east": 1, "west": 1,
        "body": "return (OUT)((GET(0, -2) + GET(0, -1) + GET(-1, 0) + GET(1, 0) + GET(0, 0)) / 5);",
        "reference": "(nb(0, -2) + N + W + E + C) / 5",
    }  # fmt: skip
    assert all(m.outcome is Outcome.OK for m in outcomes(described_stencil(description)))


def test_a_reference_function_beside_the_json_file(outcomes, tmp_path):
    (tmp_path / "refs.py").write_text(
        "def south_diff(get, problem):\n    return get(0, 1) - get(0, 0)\n"
    )
    description = {k: v for k, v in SOUTH_DIFF.items() if k != "reference"}
    path = tmp_path / "south_diff.json"
    path.write_text(json.dumps({**description, "reference_file": "refs.py:south_diff"}))
    assert all(m.outcome is Outcome.OK for m in outcomes(resolve_kernel(path)))
    path.write_text(json.dumps({**description, "reference_file": "../refs.py:south_diff"}))
    with pytest.raises(SpecError, match="outside the spec's folder"):
        resolve_kernel(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"dtype": "half"}, "dtype must be one of int, float, double, got 'half'"),
        ({"out_dtype": 3}, "out_dtype must be one of int, float, double, same"),
        ({"reference": "nb(0, 2) - C"}, "the reference's nb(0, 2) reads 2 rows south"),
        ({"reference": "nb(0, dy)"}, "nb takes two integer constants"),
        ({"reference": "S - foo"}, "reference names foo"),
        ({"reference": "__import__('os')"}, "reference"),
        ({"reference": ""}, "reference must be an expression"),
        ({"reference_file": "refs.py:f"}, "reference or reference_file, not both"),
    ],
)
def test_malformed_types_and_references_are_refused(change, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        described_stencil({**SOUTH_DIFF, **change})


def test_a_reference_file_needs_a_file():
    description = {k: v for k, v in SOUTH_DIFF.items() if k != "reference"}
    with pytest.raises(SpecError, match="only read from a JSON file"):
        described_stencil({**description, "reference_file": "refs.py:f"})


def test_the_daemon_takes_the_types_too():
    pytest.importorskip("pydantic")
    from perfport.service.schemas import Stencil

    given = Stencil(name="s", body="return GET(0, 0);", dtype="int").model_dump(exclude_none=True)
    assert described_stencil(given).problem["dtype"] == "int"
    assert "out_dtype" not in given  # absent stays absent: old requests keep their cache keys
    with pytest.raises(ValueError, match="dtype"):
        Stencil(name="s", body="return GET(0, 0);", dtype="half")
