"""The legal sizes predict_wg chooses from are exactly kernel_space's, for any problem."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfport import builtin
from perfport.space import kernel_space
from perfport.wg.predict import _member, legal_sizes


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


def test_legal_sizes_remembered_by_the_values_the_constraints_read(cpu):
    from perfport.wg.predict import _legal_sizes

    spec = builtin("sobel")
    small = dataclasses.replace(cpu, max_work_group_size=1024, local_mem_bytes=4096)
    floats = legal_sizes(spec, {"width": 512, "height": 512, "dtype": "float"}, small)
    hits = _legal_sizes.cache_info().hits
    again = legal_sizes(spec, {"width": 999, "height": 333, "dtype": "float"}, small)
    assert _legal_sizes.cache_info().hits == hits + 1  # width and height are not read
    assert np.array_equal(floats[0], again[0]) and np.array_equal(floats[1], again[1])
    # dtype is read (the local-memory footprint): doubles fit fewer sizes into 4 KiB.
    doubles = legal_sizes(spec, {"width": 512, "height": 512, "dtype": "double"}, small)
    assert len(doubles[0]) < len(floats[0])
    columns = kernel_space(spec, spec.problem.merged({"dtype": "double"}), small).columns()
    assert sorted(zip(doubles[0].tolist(), doubles[1].tolist(), strict=True)) == sorted(
        zip(columns["wc"].tolist(), columns["wr"].tolist(), strict=True)
    )


def test_no_legal_size_names_the_device_or_the_kernel_as_its_cause(cpu):
    """A device too small for every size was told to check the problem against the kernel's
    restrictions; it is the device's limits, and the line says so (and which)."""
    from perfport import SpecError
    from perfport.wg.predict import check_scenario

    spec, problem = builtin("sobel"), {"width": 64, "height": 64}
    tiny = dataclasses.replace(cpu, local_mem_bytes=16)  # not one 3 x 3 float tile
    with pytest.raises(SpecError, match=r"device's limits leave none .*local memory 16 bytes"):
        check_scenario(spec, problem, tiny)
    assert len(check_scenario(spec, problem, cpu)[0])


def test_predict_wg_checks_the_problem_as_the_cli_does(daemon_model, cpu):
    """A misspelt name ('widht') was answered for the default width; the CLI refused it."""
    from perfport import SpecError
    from perfport.wg import load_model, predict_wg

    model, spec = load_model(daemon_model), builtin("sobel")
    for problem, message in [
        ({"widht": 64, "height": 64}, "kernel sobel has no problem value widht"),
        ({"width": "64", "height": 64}, "problem value width must be an integer"),
    ]:
        with pytest.raises(SpecError, match=message):
            predict_wg(model, spec, problem, cpu)
    assert predict_wg(model, spec, {"width": 64, "height": 64}, cpu).wg


def test_a_model_of_other_features_names_them():
    # "the model expects other features (31, not the 31 perfport computes)": the counts
    # were equal and nothing said which names were wrong.
    from conftest import tiny_wg_dataset
    from perfport._core import PerfportError
    from perfport.features import FEATURE_NAMES
    from perfport.wg.model import WgModel
    from perfport.wg.predict import check_model_features

    data = tiny_wg_dataset([(4, 4)], [[1.0], [2.0]], [("d", "k", "x")] * 2, [[1, 2], [3, 4]])
    names = (FEATURE_NAMES[0], "devcie_compute_units", "x", "x", "y", "z", "w")
    model = WgModel("m", names, data.sizes, None, 2)  # type: ignore[arg-type]
    with pytest.raises(PerfportError, match="expects other features") as refused:
        check_model_features(model)
    said = str(refused.value)
    assert "'devcie_compute_units', 'x', 'y' and 2 more (of its 7)" in said
    assert repr(FEATURE_NAMES[0]) not in said
    assert check_model_features(dataclasses.replace(model, feature_names=FEATURE_NAMES[:3]))


def test_sizes_never_wider_or_taller_than_the_data(cpu):
    """A work-group wider than the data (256 columns for 1) leaves most of every group idle:
    a 1 x 3000 stencil got 256 x 16 and ran ~200x slower than the best size tried."""
    from perfport.wg.predict import scenario_sizes

    spec = builtin("sobel")
    wc, wr = scenario_sizes(spec, {"width": 1, "height": 3000}, cpu)
    assert len(wc) and set(wc.tolist()) == {1} and wr.max() == 1024
    wc, wr = scenario_sizes(spec, {"width": 4096, "height": 1}, cpu)
    assert len(wc) and set(wr.tolist()) == {1}
    wc, wr = scenario_sizes(spec, {"width": 5, "height": 20}, cpu)  # rounded up: 8 and 24
    assert wc.max() == 8 and wr.max() == 24
    # Square data of 1024 and more: exactly the legal sizes, as before.
    for side in (1024, 2048, 4096):
        legal = legal_sizes(spec, {"width": side, "height": side}, cpu)
        fitting = scenario_sizes(spec, {"width": side, "height": side}, cpu)
        assert all(np.array_equal(a, b) for a, b in zip(legal, fitting, strict=True))


def test_where_no_legal_size_fits_the_data_the_legal_sizes_are_chosen_from(cpu):
    """A kernel whose rule forbids small groups (wc * wr >= 64) was refused at 4x4 data
    ("give larger data"), where an 8x8 group runs and verifies."""
    from perfport.wg.predict import check_scenario

    plain = builtin("stencil")
    spec = dataclasses.replace(plain, restrictions=(*plain.restrictions, "wc * wr >= 64"))
    problem = {"width": 4, "height": 4}
    wc, wr = check_scenario(spec, problem, cpu)
    legal = legal_sizes(spec, problem, cpu)
    assert len(wc) and np.array_equal(wc, legal[0]) and np.array_equal(wr, legal[1])


def test_a_prediction_fits_the_data_and_says_what_it_replaced(daemon_model, cpu):
    from perfport.wg import load_model, predict_wg

    model = load_model(daemon_model)
    spec = builtin("sobel")
    square = predict_wg(model, spec, {"width": 2048, "height": 2048}, cpu)
    assert square.fallback is None and square.to_json()["fallback"] is None
    own = square.wg  # the model's choice where nothing stands in its way
    # This model knows widths 4-64 and heights 1-16 only: 4 is the narrowest it has.
    thin = predict_wg(model, spec, {"width": 3, "height": 3000}, cpu)
    assert thin.wg[0] == 4 and own[0] > 4
    assert thin.to_json()["fallback"] == {
        "model_wg": list(own), "reason": "shape",
        "message": f"{own[0]}x{own[1]} is wider or taller than the data (3x3000)",
    }  # fmt: skip
    wide = predict_wg(model, spec, {"width": 4096, "height": 1}, cpu)
    assert wide.wg[1] == 1 and own[1] > 1
    problem = {"width": 2048, "height": 2048}
    refused = predict_wg(model, spec, problem, cpu, refused={own})
    assert refused.wg != own and refused.fallback is not None
    assert refused.fallback.reason.value == "refused" and refused.fallback.model_wg == own
    small = dataclasses.replace(cpu, max_work_group_size=own[0] * own[1] // 2)
    limited = predict_wg(model, spec, problem, small)
    assert limited.fallback is not None and limited.fallback.reason.value == "device"
    assert "max work-group" in limited.fallback.message
