"""A compile-time parameter the kernel never reads multiplies the space for nothing: tune
warns before it starts (a user's UNUSED of 3 values tripled a space and was reported best)."""

from __future__ import annotations

from perfport._core import ArrayArg, KernelSpec, Param, ParamKind
from perfport.tune.checks import unused_parameters

SOURCE = "__kernel void k(__global float* a) { a[0] = TILE; }\n"


def _spec(source: str = SOURCE, **more: object) -> KernelSpec:
    fields: dict[str, object] = dict(
        name="k", source=source, entry="k",
        params=(Param("TILE", (1, 2)), Param("UNUSED", (1, 2, 3)), Param("wg", (1, 2), ParamKind.LAUNCH),
                Param("ONE", (4,))),
        global_size=("n",), local_size=("wg",), problem={"n": 8},
        args=(ArrayArg("a", "float", ("n",), output=True),),
    )  # fmt: skip
    fields.update(more)
    return KernelSpec(**fields)  # type: ignore[arg-type]


def test_a_parameter_the_source_never_reads_is_named():
    (warning,) = unused_parameters(_spec())
    assert warning.startswith("parameter UNUSED: the source never reads UNUSED")
    assert "3 values" in warning


def test_a_parameter_read_through_a_define_or_a_size_is_used():
    assert unused_parameters(_spec(defines={"HALF": "UNUSED // 2"})) == ()
    assert unused_parameters(_spec(local_mem="UNUSED * 4")) == ()


def test_a_source_that_includes_files_is_not_judged():
    assert unused_parameters(_spec(source='#include "tile.h"\n' + SOURCE)) == ()


def test_a_parameter_passed_as_an_argument_or_a_local_size_is_used():
    """TS sized a local buffer and was passed as a scalar: it was called unread (review)."""
    from perfport._core import LocalArg, ScalarArg

    source = "__kernel void k(__global float* a, __local float* t, int ts) { a[0] = TILE; }\n"
    args = (ArrayArg("a", "float", ("n",), output=True), LocalArg("t", "float", "UNUSED"),
            ScalarArg("ts", "int", "UNUSED"))  # fmt: skip
    assert unused_parameters(_spec(source=source, args=args)) == ()
