"""experiments/2026-11-26-model-pocl-accuracy: the section 8.1 table from the shipped PoCL
data, and the shipped no-add models are paper-linear.json less its add cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import load_experiment
from perfport.model import Model

DATA = Path(__file__).parents[2] / "src/perfport/datasets/model"


def test_the_overlap_table_pairs_each_kernel_with_its_work_removed_parts():
    rows = load_experiment("overlap_test").overlap_rows(DATA / "pocl-paper.csv")
    assert len(rows) == 12  # six two-input variants at two sizes; the stencils keep "all"
    for r in rows:
        assert r["sum_ms"] == pytest.approx(sum(r["work_removed_ms"].values()))
        assert r["max_over_full"] == pytest.approx(r["max_ms"] / r["full_ms"])
    tr = [r for r in rows if r["variant"] == "dg-prefetch-dm-tr"]
    assert {tuple(r["work_removed_ms"]) for r in tr} == {("diff_mat", "u")}
    assert min(r["max_over_full"] for r in tr) > 2  # slower than the kernel it was cut from


def test_the_no_add_models_are_paper_linear_less_its_add_cost():
    linear = Model.load(DATA / "paper-linear.json")
    noadd = Model.load(DATA / "paper-noadd-linear.json")
    assert set(noadd.parameters) == set(linear.parameters) - {"p_add"}
    overlap = Model.load(DATA / "paper-noadd-overlap.json")
    assert set(overlap.parameters) == set(noadd.parameters) | {"p_edge"}
