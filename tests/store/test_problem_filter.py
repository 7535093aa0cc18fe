"""--problem as typed on a command line picks stored problems: by text first (a store may hold
a=2 beside a=2.0, two problems, both a user's), else by value (a=2 finds a stored a=2.0)."""

from pathlib import Path

import pytest

from perfport import load_kernel, tune
from perfport._core import SpecError
from perfport._core.problem_check import resolve_problem
from perfport.store import Store
from perfport.store.queries import one_group

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_a_number_finds_the_stored_float_and_text_tells_both_apart(db):
    spec = load_kernel(EXAMPLES / "saxpy.toml")
    tune(spec, problem={"a": 2.0, "n": 4096}, budget=2, db=db)
    with Store(db) as store:
        assert {r.problem["a"] for r in one_group(store, problem={"a": "2"})} == {2.0}
    tune(spec, problem={"a": 2, "n": 4096}, budget=2, db=db)  # kept as given: another problem
    with Store(db) as store:
        assert {repr(r.problem["a"]) for r in one_group(store, problem={"a": "2"})} == {"2"}
        assert {repr(r.problem["a"]) for r in one_group(store, problem={"a": "2.0"})} == {"2.0"}


def test_an_int_past_any_double_for_a_float_is_one_line():
    spec = load_kernel(EXAMPLES / "saxpy.toml")
    with pytest.raises(SpecError, match="problem value a must be a finite number"):
        resolve_problem(spec, {"a": 10**400})
