"""No generated kernel may take the name of an OpenCL C or CUDA built-in: NVIDIA's OpenCL
refused the collection's kernel named ``barrier`` ("conflicting types for 'barrier'")."""

from __future__ import annotations

import pytest
from model_support import LOOPY

from perfport._core.identifiers import is_builtin_name


def test_the_builtin_list_knows_the_names_that_clashed_and_their_families():
    for name in ("barrier", "mem_fence", "get_local_id", "mad", "select", "convert_float4",
                 "vload4", "atomicAdd", "__syncthreads", "kernel"):  # fmt: skip
        assert is_builtin_name(name), name
    for name in ("perfport_mk_barrier", "matmul", "dg_plain", "finite_diff_16"):
        assert not is_builtin_name(name), name


def test_every_generator_and_application_kernel_has_a_name_no_builtin_takes():
    pytest.importorskip("loopy", reason=LOOPY)
    from perfport.model import APPLICATIONS
    from perfport.model.collection import KERNEL_PREFIX
    from perfport.model.generators import all_generators

    names = {}
    for generator in all_generators():
        args = next(generator.variants({}))
        program = generator.kernel(args).program
        names[generator.name] = program.default_entrypoint.name
    names.update({a: app.make().default_entrypoint.name for a, app in APPLICATIONS.items()})
    clashing = {g: n for g, n in names.items() if is_builtin_name(n)}
    assert not clashing
    generated = [n for g, n in names.items() if g not in APPLICATIONS]
    assert generated and all(n.startswith(KERNEL_PREFIX) for n in generated)
    assert names["barrier_pattern"] == f"{KERNEL_PREFIX}barrier"
