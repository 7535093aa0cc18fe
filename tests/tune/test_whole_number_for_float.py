"""A whole number given for a floating problem value is that float: saxpy's a=2 is a=2.0, one
problem, so tuning it again resumes and an export filter finds it. Before, a=2 was stored as
another problem beside a=2.0, measured again from scratch, and --problem a=2 missed a=2.0."""

from pathlib import Path

from perfport import load_kernel, tune
from perfport._core.problem_check import resolve_problem
from perfport.store import Store
from perfport.store.queries import one_group

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_an_int_for_a_float_problem_value_is_the_float():
    spec = load_kernel(EXAMPLES / "saxpy.toml")
    problem = resolve_problem(spec, {"a": 2, "n": 4096})
    assert problem["a"] == 2.0 and isinstance(problem["a"], float)
    assert problem.key == resolve_problem(spec, {"a": 2.0, "n": 4096}).key


def test_tuning_with_a_whole_number_resumes_the_float_campaign(db):
    spec = load_kernel(EXAMPLES / "saxpy.toml")
    first = tune(spec, problem={"a": 2.0, "n": 4096}, budget=2, db=db)
    again = tune(spec, problem={"a": 2, "n": 4096}, budget=2, db=db)
    assert again.campaign == first.campaign and again.measured_here == 0
    with Store(db) as store:
        rows = one_group(store, problem={"a": "2"})
    assert {r.problem["a"] for r in rows} == {2.0}
