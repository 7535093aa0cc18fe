"""Derived features (products, divisibility): selectors that read them, and the generated C and
Python that compute them, answer exactly what the fitted model predicts."""

from __future__ import annotations

import ctypes
import json
import math
import shutil
import types
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from conftest import compile_shared
from perfport.select import SelectError, fit_selector, load_csv
from perfport.select.bundle import load_bundle, write_bundle
from perfport.select.classify import Classifier, Selector
from perfport.select.derive import (
    Derived,
    DerivedKind,
    default_derived,
    parse_derived,
    with_derived,
)
from perfport.select.normalise import normalise
from perfport.select.prune import choose
from perfport.select.table import PerfTable
from perfport.select.tree import LEAF, SelectorTree, real_cutoff

pytest.importorskip("sklearn.tree", reason="scikit-learn (the models extra)")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
LONG_TOP = (1 << 63) - 1024  # the largest long a double holds exactly


@pytest.fixture(scope="module")
def shipped() -> tuple[PerfTable, np.ndarray]:
    """The shipped H100 table and 8 k-means configurations of it, read and chosen once for
    the three trees (seconds each time)."""
    data = resources.files("perfport").joinpath(
        "datasets", "lawson-gemm", "h100-nvidia-opencl.csv.gz"
    )
    with resources.as_file(data) as path:
        table = load_csv(path)
    return table, choose(normalise(table.times), 8, "kmeans", 0, table.problems)


@pytest.fixture(
    scope="module",
    params=[
        Classifier.DECISION_TREE_A_DERIVED,
        Classifier.DECISION_TREE_REGRET_DERIVED,
        Classifier.DECISION_TREE_DISTILLED_DERIVED,
    ],
)
def fitted(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    shipped: tuple[PerfTable, np.ndarray],
) -> tuple[Selector, Path, np.ndarray]:
    """Tree A with derived features (and the regret and distilled trees, which see the same
    features) among 8 k-means configurations of the shipped H100 table, written as a bundle;
    and the probe rows: every shape of the table, plus inputs at and around every cutoff of
    the tree (products pinned on either side of their cutoff, flags with multiples and
    non-multiples, sizes near 2**53 and 2**63)."""
    table, chosen = shipped
    selector = fit_selector(table, chosen, request.param)
    out = tmp_path_factory.mktemp("derived") / "bundle"
    write_bundle(
        out, "matmul", table.param_names, [table.config_dict(int(j)) for j in chosen],
        table.problem_names, selector,
    )  # fmt: skip
    bundle = load_bundle(out)
    names = table.problem_names
    rows = [table.problems]
    rng = np.random.default_rng(0)
    tree = bundle.tree
    for node in range(len(tree.left)):
        j = tree.feature[node]
        if tree.left[node] == LEAF or j < len(names):
            continue
        d = tree.derived[j - len(names)]
        base = table.problems[rng.integers(table.n_problems)].copy()
        if d.kind is DerivedKind.PRODUCT:
            c = real_cutoff(tree.transform_of(j), tree.threshold[node])
            for v in (math.floor(c) - 1, math.floor(c), math.floor(c) + 1, math.floor(c) + 2):
                row = base.copy()
                for name in d.inputs:
                    row[names.index(name)] = 1.0
                row[names.index(d.inputs[0])] = float(v)
                rows.append(row[None, :])
        else:
            for v in (d.divisor, d.divisor + 1, 3 * d.divisor, 2**53, 2**53 - 1, 2**62, LONG_TOP):
                row = base.copy()
                row[names.index(d.inputs[0])] = float(v)
                rows.append(row[None, :])
    probes = np.concatenate(rows)
    assert tree.derived and len(tree.choices) > 1
    return selector, out, probes


def test_derived_features_are_what_the_selector_reads(fitted):
    selector, out, _ = fitted
    texts = [d.text for d in selector.derived_]
    assert texts[:3] == ["M*N", "M*N*batch", "K*M*N*batch"]
    assert {"M%16", "N%128", "K%64", "batch%32"} <= set(texts)
    assert not any(t.startswith("trans") for t in texts)  # flags are not sizes
    assert load_bundle(out).tree.derived == selector.derived_
    manifest = json.loads((out / "bundle.json").read_text())
    assert manifest["version"] == 2 and manifest["tree"]["derived"][:2] == ["M*N", "M*N*batch"]


def test_bundle_and_generated_python_match_the_model(fitted):
    selector, out, probes = fitted
    expected = selector.predict(probes)
    bundle = load_bundle(out)
    module = types.ModuleType("generated_selector")
    exec(compile((out / "selector.py").read_text(), "selector.py", "exec"), module.__dict__)
    names = bundle.features
    as_python = [{f: int(x) for f, x in zip(names, row, strict=True)} for row in probes]
    np.testing.assert_array_equal([bundle.choose(p) for p in as_python], expected)
    np.testing.assert_array_equal([module.select(**p) for p in as_python], expected)
    as_float = [{f: float(x) for f, x in zip(names, row, strict=True)} for row in probes]
    np.testing.assert_array_equal([module.select(**p) for p in as_float], expected)


@needs_gcc
def test_generated_c_matches_the_model(fitted, tmp_path):
    selector, out, probes = fitted
    dll = compile_shared(out / "selector.c", tmp_path / "libselector.so")
    dll.matmul_select.argtypes = [ctypes.c_long] * probes.shape[1]
    dll.matmul_select.restype = ctypes.c_int
    got = [dll.matmul_select(*(int(x) for x in row)) for row in probes]
    np.testing.assert_array_equal(got, selector.predict(probes))


def test_products_split_what_raw_sizes_cannot():
    """Labels by output size M*N: one split on the product separates them; a depth-1 tree on M
    and N alone cannot."""
    rng = np.random.default_rng(3)
    m, n = rng.integers(1, 200, 400), rng.integers(1, 200, 400)
    x = np.column_stack([m, n, np.full(400, 7), np.ones(400)]).astype(float)
    y = (m * n > 4000).astype(int)
    derived = parse_derived("M*N")
    tree = pytest.importorskip("sklearn.tree").DecisionTreeClassifier(max_depth=1)
    names = ("M", "N", "K", "batch")
    assert (
        tree.fit(with_derived(x, names, derived), y).score(with_derived(x, names, derived), y) == 1
    )
    assert tree.fit(x, y).score(x, y) < 0.95


def test_values_follow_numpy_double_arithmetic():
    cols = {"M": np.array([3.0, 2.0**60, 64.0, 2.0**53 + 2]), "N": np.array([5.0, 3.0, 7.0, 1.0])}
    product, flag = parse_derived(["M*N", "M%64"])
    np.testing.assert_array_equal(product.values(cols), cols["M"] * cols["N"])
    np.testing.assert_array_equal(flag.values(cols), [0.0, 1.0, 1.0, 0.0])
    assert (product.name, flag.name, flag.text) == ("M_x_N", "M_div64", "M%64")


@pytest.mark.parametrize(
    ("spec", "message"),
    [("M+N", "neither a product"), ("M%0", "neither a product"), ("M*N, M*N", "repeat")],
)
def test_bad_specs_are_one_line_errors(spec, message):
    with pytest.raises(SelectError, match=message):
        parse_derived(spec)


def test_trees_refuse_unknown_or_clashing_derived_inputs():
    with pytest.raises(SelectError, match="reads Q"):
        SelectorTree.constant(("M", "N")).__class__(
            ("M", "N"), SelectorTree.constant(("M", "N")).transforms, (LEAF,), (LEAF,), (LEAF,),
            (0.0,), (0,), (Derived(DerivedKind.PRODUCT, ("M", "Q")),),
        )  # fmt: skip
    with pytest.raises(SelectError, match="already taken"):
        SelectorTree(
            ("M", "N", "M_x_N"), SelectorTree.constant(("a", "b", "c")).transforms, (LEAF,),
            (LEAF,), (LEAF,), (0.0,), (0,), parse_derived("M*N"),
        )  # fmt: skip


def test_generic_defaults_for_other_problems():
    rows = np.array([[3.0, 5.0, 9.0, 1.0], [4.0, 6.0, 2.0, 0.0]])
    texts = [d.text for d in default_derived(("x", "y", "z", "flag"), rows)]
    assert texts[:3] == ["y*z", "x*z", "x*y"]
    assert "flag%16" not in texts and "x%16" in texts


@needs_gcc
def test_c_divisibility_of_fractional_doubles_matches_numpy(tmp_path):
    """A double input's divisibility is numpy's np.mod(x, d) == 0: 16.5 is no multiple of 16
    (C once truncated it to 16), values past the range of long included."""
    from perfport.select.deploy import fit_bundle

    v = [0.5, 1.5, 3, 5, 7, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 80, 81, 95, 96]
    times = np.array([[2.0, 1.0] if x % 16 == 0 else [1.0, 2.0] for x in v])
    table = PerfTable(
        ("scale",), np.array([[x] for x in v], float), ("wg",), ((64,), (128,)), times, kernel="rd"
    )
    bundle = fit_bundle(table, 2, tmp_path / "b", classifier="decision_tree_a_derived")
    dll = compile_shared(tmp_path / "b" / "selector.c", tmp_path / "libselector.so")
    dll.rd_select.argtypes = [ctypes.c_double]
    dll.rd_select.restype = ctypes.c_int
    probes = [16.5, 32.25, 64.5, 0.5, -16.5, -16.0, 16.0, 48.0, 2.0**70, 2.0**70 + 2.0**20]
    probes += [1e300, -(2.0**64), 2.0**63 - 1024, 2.0**63 + 16]
    got = [dll.rd_select(x) for x in probes]
    assert got == [bundle.choose({"scale": x}) for x in probes]
    assert got[:7] == [0, 0, 0, 0, 0, 1, 1]
