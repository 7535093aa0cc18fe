"""Shared by the model tests: loopy's statistics of the built-in matmul kernels, gathered
once per session (the test extra installs loopy; without it these tests skip, saying so)."""

from __future__ import annotations

from functools import cache

import pytest

LOOPY = "perfport.model needs loopy: pip install 'perfport[model]'"


@cache
def matmul_stats() -> dict:
    pytest.importorskip("loopy", reason=LOOPY)
    from perfport.model import APPLICATIONS, gather

    return {
        name: gather(app.make()) for name, app in APPLICATIONS.items() if name.startswith("matmul")
    }


# A model of three terms every loopy kernel of the tests has, with costs we chose.
GUIDED_EXPRESSION = (
    "p_launch * f_sync_kernel_launch + p_gload * f_mem_access_global_float32_load "
    "+ p_group * f_thread_groups"
)
GUIDED_COSTS = {"p_launch": 1e-5, "p_gload": 1e-9, "p_group": 1e-6}


def calibration_file(path, device: str, costs: dict | None = None) -> str:
    """A calibration as 'perfport model calibrate --out' writes it, with GUIDED_COSTS (or
    ``costs``; those below 0 are listed as negative, as calibrate lists them)."""
    from perfport.model import Model
    from perfport.model.calibrate import Calibration

    costs = costs or GUIDED_COSTS
    negative = tuple(p for p, v in costs.items() if v < 0)
    Calibration(model=Model("f_cl_wall_time", GUIDED_EXPRESSION), device=device,
                parameters=costs, residual=0.0, residuals=(), n_measurements=0,
                nonnegative=not negative, negative=negative, scaled=True,
                iterations=0).save(path)  # fmt: skip
    return str(path)
