"""A spec's args against its kernel's parameters, read from the source when a spec is built:
refused only where the source says clearly that they differ."""

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from perfport import ArrayArg, KernelSpec, ScalarArg, SpecError
from perfport._core.args import LocalArg
from perfport._core.records import Language
from perfport._core.signature import read_signature
from perfport.kernels import BUILTINS, builtin, load_kernel

EXAMPLES = Path(__file__).parents[2] / "examples"
SCALE = """
/* y = 2 x */ __kernel void scale(__global const float* x,  // the input
                                  __global float* restrict y,
                                  const int n) {
    const int i = get_global_id(0);
    if (i < n) y[i] = 2.0f * x[i];
}
"""
X, Y = ArrayArg("x", "float", ("n",)), ArrayArg("y", "float", ("n",), output=True)


def _spec(source=SCALE, entry="scale", language="opencl", args=None):
    args = (X, Y, ScalarArg("n", "int", "n")) if args is None else args
    return KernelSpec(
        name="scale", source=source, entry=entry, language=language, global_size=("n",),
        local_size=("16",), args=args, problem={"n": 64},
    )  # fmt: skip


def test_a_matching_spec_loads():
    assert _spec().args[2].name == "n"


@pytest.mark.parametrize(
    "args, words",
    [
        ((X, Y), ["scale takes 3 parameter(s)", "int n", "args declares 2 (x, y)", "in order"]),
        ((X, Y, ScalarArg("n", "int", "n"), ScalarArg("m", "int", "n")), ["declares 4"]),
        ((), ["declares 0 (none)"]),
        ((X, Y, ScalarArg("n", "double", "n")), ["argument n is double", "declare its dtype as int"]),
        ((ArrayArg("x", "double", ("n",)), Y, ScalarArg("n", "int", "n")), ["x holds double", "as float"]),
        ((X, ScalarArg("y", "float", "1"), ScalarArg("n", "int", "n")), ["y is a scalar", "float* restrict y"]),
        ((X, Y, ArrayArg("n", "int", ("n",))), ["n is an array", "'const int n'"]),
        ((X, LocalArg("y", "float", "16"), ScalarArg("n", "int", "n")), ["y is a local buffer", "not __local"]),
    ],
)  # fmt: skip
def test_a_mismatch_is_one_line_before_anything_runs(args, words):
    with pytest.raises(SpecError) as caught:
        _spec(args=args)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("kernel scale: ")
    for word in words:
        assert word in message


@pytest.mark.parametrize(
    "declared, kernel",
    [
        ("float", "uint"),  # the same bytes seen as integers (a radix sort of float keys)
        ("half", "ushort"),  # half data stored as ushort, read with vload_half
        ("float", "float4"),  # vector loads of a float buffer
        ("float", "uchar"),  # a byte view
        ("int", "long"),  # integers of other widths: packing is a choice
        ("float", "ELEM"),  # a -D type macro: not known here
        ("float", "real"),  # a typedef: not known here
        ("uint", "half2"),  # two halves packed in each 32-bit word (review)
        ("double", "float2"),  # a bit view of whole vectors
    ],
)
def test_deliberate_or_unknown_array_types_pass(declared, kernel):
    source = SCALE.replace("__global const float* x", f"__global const {kernel}* x")
    _spec(source=source, args=(ArrayArg("x", declared, ("n",)), Y, ScalarArg("n", "int", "n")))


def test_scalar_types_compare_by_kind_and_size_and_unknown_ones_pass():
    for kernel, declared in [("unsigned int", "int"), ("uint", "uint32"), ("INDEX", "double")]:
        _spec(SCALE.replace("const int n", f"{kernel} n"), args=(X, Y, ScalarArg("n", declared, 1)))
    for kernel, declared in [("float", "int"), ("long", "int"), ("float2", "float")]:
        with pytest.raises(SpecError, match="argument n"):
            _spec(
                SCALE.replace("const int n", f"{kernel} n"),
                args=(X, Y, ScalarArg("n", declared, 1)),
            )


CUDA = """extern "C" __global__ void __launch_bounds__(256)
scale(const float* __restrict__ x, float* __restrict__ y, size_t n) {
    extern __shared__ float tile[];
}"""


def test_cuda_passes_neither_local_buffers_nor_constant_arrays_as_parameters():
    args = (X, LocalArg("tile", "float", "16"), ArrayArg("c", "float", ("4",), constant=True), Y)
    _spec(CUDA, language="cuda", args=(*args, ScalarArg("n", "ulong", "n")))
    with pytest.raises(
        SpecError, match=r"argument n is int, .*'size_t n'; declare its dtype as ulong"
    ):
        _spec(CUDA, language="cuda", args=(*args, ScalarArg("n", "int", "n")))
    with pytest.raises(SpecError, match="takes 3 parameter"):
        _spec(CUDA, language="cuda", args=(X, Y))


PORTABLE = """KERNEL void scale(GLOBAL const ELEM* RESTRICT x, GLOBAL ELEM* RESTRICT y,
                  int n LOCAL_PARAM(ELEM, tile) CONSTANT_PARAM(float, mask)) {
    LOCAL_DECL(ELEM, tile)
}"""


def test_the_portable_dialect_is_read_as_its_opencl_expansion():
    local, mask = LocalArg("tile", "float", "16"), ArrayArg("mask", "float", ("4",), constant=True)
    _spec(PORTABLE, language="portable", args=(X, Y, ScalarArg("n", "int", "n"), local, mask))
    with pytest.raises(SpecError, match=r"tile is an array, .*'__local ELEM\* tile'"):
        tile = ArrayArg("tile", "float", ("16",))
        _spec(PORTABLE, language="portable", args=(X, Y, ScalarArg("n", "int", "n"), tile, mask))
    (*_, tile, constant) = read_signature(PORTABLE, "scale", Language.PORTABLE)
    assert (tile.space, tile.pointer, constant.space, constant.element) == (
        "local", True, "constant", np.dtype("float32"))  # fmt: skip


@pytest.mark.parametrize(
    "source",
    [
        "#define ARGS __global float* x, int n\n__kernel void scale(ARGS) {}",
        "#define MORE , int m\n__kernel void scale(__global float* x MORE) {}",
        "__kernel void scale(__global float* x\n#if WITH_N\n, int n\n#endif\n) {}",
        "__kernel void scale(PARAMS(float)) {}",
        "template <typename T> __global__ void scale(T* x, int n) {}",
        "#define NAME scale\n__kernel void NAME(__global float* x, int n) {}",  # not found
        "#define K(name) __kernel void name\nK(scale)(__global float* x) {}",
        "#if A\n__kernel void scale(__global float* x) {}\n#else\n"
        "__kernel void scale(__global float* x, int n) {}\n#endif",
        "#define T2 PASTE(float, 2)\n__kernel void scale(__global float* x, T2 v) {}",
    ],
)
def test_a_list_that_cannot_be_read_with_certainty_is_not_checked(source):
    assert read_signature(source, "scale", Language.OPENCL) is None
    _spec(source=source, args=(X,))  # not refused


def test_an_attribute_and_definitions_alike_under_if_are_read():
    loopy_like = "__kernel void __attribute__ ((reqd_work_group_size(16, 1, 1))) scale(" \
                 "__global float const *__restrict__ x, int const n) {}"  # fmt: skip
    assert [p.text for p in read_signature(loopy_like, "scale", Language.OPENCL)] == [
        "__global float const *__restrict__ x", "int const n"]  # fmt: skip
    twice = f"#if A\n{loopy_like}\n#else\n{loopy_like.replace('16', '32')}\n#endif"
    assert len(read_signature(twice, "scale", Language.OPENCL)) == 2


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_every_builtin_is_read_and_matches(name):
    spec = builtin(name)
    assert read_signature(spec.source, spec.entry, spec.language) is not None


@pytest.mark.parametrize(
    "path",
    [*sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".toml", ".yaml")),
     EXAMPLES / "saxpy.py", EXAMPLES / "kernel_tuner" / "matmul.py",
     EXAMPLES / "kernel_tuner" / "vector_add.py"],
    ids=lambda p: str(p.relative_to(EXAMPLES)),
)  # fmt: skip
def test_every_example_spec_is_read_and_matches(path):
    spec = load_kernel(path)
    assert read_signature(spec.source, spec.entry, spec.language) is not None


@pytest.mark.skipif(importlib.util.find_spec("loopy") is None, reason="the model extra")
def test_loopy_kernels_are_read_and_match():
    """Each loopy kernel's programs joined in their #if chain, as loopy_spec joins them: here
    of its first and last configuration (matmul without and with prefetch, DG's first and
    last variant), since loopy writes every program of a space in seconds (matmul's 36 in
    ten). The whole DG and FD specs are read in test_model_dg_verify and
    test_model_tune_guided, which build them anyway."""
    from perfport.model.tunable import joined_spec, loopy_kernels
    from perfport.space import Space

    for name, s in loopy_kernels().items():
        configs = s.configs()
        ends = Space.from_configs(s.space.params, [configs[0], configs[-1]])
        spec = joined_spec(dataclasses.replace(s, space=ends), name, "")
        assert spec.source.count("#elif") == 1  # both programs are in the chain
        assert read_signature(spec.source, spec.entry, spec.language) is not None
