"""A built-in stencil's borders are numbers of cells: a negative one is refused in one line
naming it and the fix, before anything runs or is written (not by numpy inside the reference),
and without a restriction, which would change every stencil's campaign key."""

from __future__ import annotations

import pytest

from perfport import tune
from perfport._core import SpecError
from perfport._core.problem_check import resolve_problem
from perfport.cli import main
from perfport.kernels import builtin

NEGATIVE = [
    ("stencil", "west", -2),
    ("stencil", "north", -1),
    ("stencil_wide", "south", -1),
    ("stencil_cross", "east", -3),
    ("synthetic", "west", -1),
    ("gaussian", "radius", -1),
]


@pytest.mark.parametrize(("name", "value", "given"), NEGATIVE)
def test_a_negative_border_is_refused_naming_it_and_the_fix(name, value, given):
    with pytest.raises(SpecError) as refused:
        resolve_problem(builtin(name), {value: given})
    text = str(refused.value)
    assert f"problem value {value}={given} is a negative border" in text
    assert f"give {value}=0 or more" in text and "\n" not in text


def test_borders_of_zero_are_still_a_problem():
    problem = resolve_problem(builtin("stencil"), {"north": 0, "south": 0, "east": 0, "west": 0})
    assert problem["west"] == 0


def test_tune_refuses_before_anything_is_written(tmp_path, capsys):
    """`tune stencil --problem west=-2` stored a campaign and ended in numpy's 'index can't
    contain negative values', naming neither the value nor the fix."""
    db = tmp_path / "r.db"
    with pytest.raises(SpecError, match="west=-2"):
        tune("stencil", problem={"west": -2}, budget=2, db=db)
    assert main(["tune", "stencil", "--problem", "west=-2", "--budget", "2", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "negative values" not in err and "give west=0" in err
    assert not db.exists()
