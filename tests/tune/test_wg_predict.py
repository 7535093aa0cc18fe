"""The legal sizes predict_wg chooses from are exactly kernel_space's, for any problem."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfport import builtin
from perfport.space import kernel_space
from perfport.tune.wg_predict import _member, legal_sizes


@pytest.mark.parametrize(
    ("kernel", "problem", "max_wg"),
    [
        ("sobel", {"width": 2048, "height": 2048}, None),
        ("gaussian", {"width": 600, "height": 200, "radius": 5}, 256),
        ("heat", {"width": 48, "height": 40}, 64),
        ("synthetic", {"width": 1000, "height": 1000, "north": 3}, 1024),
    ],
)
def test_legal_sizes_match_kernel_space(cpu, kernel, problem, max_wg):
    spec = builtin(kernel)
    device = cpu if max_wg is None else dataclasses.replace(cpu, max_work_group_size=max_wg)
    columns = kernel_space(spec, spec.problem.merged(problem), device).columns()
    wc, wr = legal_sizes(spec, problem, device)
    assert sorted(zip(wc.tolist(), wr.tolist(), strict=True)) == sorted(
        zip(columns["wc"].tolist(), columns["wr"].tolist(), strict=True)
    )
    assert len(wc) and (wc * wr <= device.max_work_group_size).all()


def test_member():
    sizes = np.array([[4, 4], [32, 4], [4, 32], [8, 8]])
    assert _member(sizes, np.array([[32, 4], [8, 8], [1, 1]])).tolist() == [
        False,
        True,
        False,
        True,
    ]
    assert not _member(sizes, np.zeros((0, 2), dtype=np.int64)).any()
