"""A cold default search (``prior`` with no prior: ``bayes_sweep``) of stencil_wide's space at
4096x4096 reaches ``access=vector`` in its space-filling start, on PoCL's limits and on a
GPU's max work-group of 1024 (experiments/2026-11-26-roofline-size/README.md)."""

from __future__ import annotations

import dataclasses

import pytest

from perfport import builtin
from perfport._core import Problem
from perfport.space import kernel_space
from perfport.strategies import make_strategy, strategy_class


@pytest.mark.parametrize("max_wg", [None, 1024])
def test_the_cold_default_start_asks_vector_accesses(cpu, max_wg) -> None:
    device = cpu if max_wg is None else dataclasses.replace(
        cpu, max_work_group_size=max_wg, max_work_item_sizes=(max_wg,) * 3
    )  # fmt: skip
    space = kernel_space(builtin("stencil_wide"), Problem.of(width=4096, height=4096), device)
    for seed in range(5):
        strategy = make_strategy(strategy_class(None), space, seed, None)
        asked = []
        for _ in range(4):  # the start never looks at times: any time will do
            i = strategy.ask()
            assert i is not None
            asked.append(space.config(i)["access"])
            strategy.tell(i, 1.0)
        assert "vector" in asked and "scalar" in asked, (seed, asked)
