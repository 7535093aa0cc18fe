"""A described stencil rebuilt from what a results database keeps of it (its code and
``describe()``): the same kernel, or a one-line reason where the row is not one's."""

import pytest

from perfport._core import SpecError
from perfport.kernels import builtin, described_stencil
from perfport.kernels.stored_stencil import rebuilt_stencil, stored_body

OWN = [
    {"name": "cross", "body": "return (OUT)(GET(0, -2) + GET(3, 0));", "north": 2, "east": 3},
    # Not constant offsets: the guarded template; and its own types.
    {"name": "ring", "body": "ELEM s = 0;\nfor (int d = 1; d <= 2; ++d) s += GET(d, 0);\n"
     "return (OUT)s;", "east": 2, "dtype": "int", "out_dtype": "double"},
]  # fmt: skip


def _stored(spec):
    return spec.name, spec.source, spec.source_hash, spec.describe()


@pytest.mark.parametrize("description", OWN, ids=lambda d: d["name"])
def test_a_stored_described_stencil_is_rebuilt_as_it_was(description):
    spec = described_stencil(description)
    again = rebuilt_stencil(*_stored(spec))
    assert again.source_hash == spec.source_hash and again.launch_hash == spec.launch_hash
    assert again.problem == spec.problem and again.defines == spec.defines
    assert stored_body(spec.source) == description["body"]


def test_a_row_that_is_not_a_whole_described_stencil_is_refused_saying_why():
    spec = described_stencil(OWN[0])
    name, source, digest, description = _stored(spec)
    damaged = {
        "missing or damaged": (source, digest, {}),
        "not this perfport version's stencil template": (
            source.replace("SkelCL-style stencil", "SkelCL stencil"), digest, description),
        "is not a number of cells": (source, digest, {
            **description, "defines": {**description["defines"], "NORTH": "radius"}}),
        "does not match its stored hash": (source.replace("GET(3, 0)", "GET(2, 0)"), digest,
                                           description),
        "not those of its borders": (source, digest, {
            **description, "defines": {**description["defines"], "PAD": "1"}}),
    }  # fmt: skip
    for why, (code, stored_hash, stored) in damaged.items():
        with pytest.raises(SpecError, match=why) as info:
            rebuilt_stencil(name, code, stored_hash, stored)
        assert "\n" not in str(info.value)
    # A kernel of another template is no stencil's.
    with pytest.raises(SpecError, match="stencil template"):
        rebuilt_stencil(*_stored(builtin("matmul_tiled")))


def test_a_python_stencil_is_rebuilt_where_a_description_gives_it():
    from perfport.kernels import make_stencil

    body = "return (OUT)(GET(-1, 0) + GET(1, 0));"
    spec = make_stencil("pair", body, None, borders=("0", "0", "1", "1"))
    assert rebuilt_stencil(*_stored(spec)).source_hash == spec.source_hash
    # No description gives it: its border is a problem value, or its loop is not guarded.
    radius = make_stencil(
        "wide", body, None, problem={"radius": 1}, borders=("0", "0", "radius", "radius")
    )
    with pytest.raises(SpecError, match="east border 'radius' is not a number of cells"):
        rebuilt_stencil(*_stored(radius))
    loop = make_stencil("loop", "ELEM s = 0; for (int d = 0; d < 2; ++d) s += GET(d, 0); return (OUT)s;",
                        None, borders=("0", "0", "1", "0"))  # fmt: skip
    with pytest.raises(SpecError, match="not what a description of it gives"):
        rebuilt_stencil(*_stored(loop))
