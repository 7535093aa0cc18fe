"""The default campaign key: what a spec states only for reporting (its work and metrics)
does not change it, so stating them keeps older campaigns resumable; what runs does."""

from __future__ import annotations

import dataclasses

from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.measure.settings import RunSettings
from perfport.space import kernel_space
from perfport.tune.tune import campaign_key


def test_work_and_metrics_do_not_change_the_key_but_the_tolerance_does():
    spec = builtin("vector_add")
    assert spec.bytes is not None  # the built-in states its work
    device = get_device("opencl:0:0")
    problem = spec.problem
    space = kernel_space(spec, problem, device)

    def key(s):
        return campaign_key(s, problem, device, space, "brute_force", RunSettings())

    bare = dataclasses.replace(spec, bytes=None, flops=None, metrics={})
    assert key(spec) == key(bare)
    assert key(spec) != key(dataclasses.replace(spec, tolerance=0.125))
