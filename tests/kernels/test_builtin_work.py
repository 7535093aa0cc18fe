"""Every built-in that states its work gives a positive byte (and flop) count at its default
problem with its default configuration, and the wide twins state the same work as the kernels
they extend."""

from __future__ import annotations

import pytest

from perfport.kernels import BUILTINS, builtin
from perfport.kernels.work import WORK


@pytest.mark.parametrize("name", sorted(set(WORK) & set(BUILTINS)))
def test_stated_work_evaluates(name):
    spec = builtin(name)
    env = spec.env(spec.default or {}, spec.problem)
    work = spec.metric_set.work(env)
    assert work["bytes"] > 0
    assert spec.flops is None or work["flops"] > 0


@pytest.mark.parametrize(
    ("twin", "base"),
    [
        ("stencil_wide", "stencil"),
        ("stencil_cross", "stencil"),
        ("convolution_wide", "convolution"),
        ("matmul_tiled", "matmul"),
    ],
)
def test_twins_state_their_bases_work(twin, base):
    assert (builtin(twin).bytes, builtin(twin).flops) == (builtin(base).bytes, builtin(base).flops)
