"""A list or mapping argument given as something else is one line naming it and the fix."""

import pytest

from perfport._core import Config, PerfportError, Problem, SpecError
from perfport._core.containers import as_list, as_mapping


def test_a_bare_string_is_not_a_list():
    assert as_list(["a", "b"], "methods") == ("a", "b")
    assert as_list(range(2), "ks") == (0, 1)
    with pytest.raises(PerfportError, match=r"^methods must be a list, e\.g\. \['knn'\], not str"):
        as_list("knn", "methods")
    with pytest.raises(SpecError, match=r"^args must be a list, \(\) for none, not None$"):
        as_list(None, "args", SpecError)


def test_a_problem_or_config_must_be_a_mapping():
    """tune(problem="n=4096") was a raw TypeError: 'str' object is not a mapping."""
    assert as_mapping({"n": 1}, "problem") == {"n": 1}
    message = r"^problem must be a mapping of names to values, e\.g\. \{'n': 4096\}, not str"
    with pytest.raises(SpecError, match=message):
        Problem.of("n=4096")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"^config must be a mapping .*not list"):
        Config.of([("wg", 64)])  # type: ignore[arg-type]
    assert Problem.of(None) == Problem.of({}) == Problem()
