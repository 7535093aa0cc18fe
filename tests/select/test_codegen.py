"""Generated selectors (C compiled with gcc, and Python) answer exactly what the fitted
scikit-learn tree predicts, on the lawson-gemm shapes and on inputs at and around every
threshold."""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
import types
from pathlib import Path

import numpy as np
import pytest

from conftest import compile_shared
from perfport.kernels import load_problems
from perfport.select import SelectError
from perfport.select.emit_c import generate_c
from perfport.select.emit_python import generate_python
from perfport.select.tree import (
    LEAF,
    SelectorTree,
    Transform,
    long_cutoff,
    model_inputs,
    real_cutoff,
)

tree_module = pytest.importorskip("sklearn.tree", reason="scikit-learn (the models extra)")

FEATURES = ("M", "N", "K", "batch", "trans_a", "trans_b")
PARAMS = ("row_tile", "acc_tile", "col_tile", "wg_rows", "wg_cols")
CONFIGS = [
    {"row_tile": 1, "acc_tile": 2, "col_tile": 4, "wg_rows": 8, "wg_cols": 8},
    {"row_tile": 4, "acc_tile": 4, "col_tile": 4, "wg_rows": 16, "wg_cols": 16},
    {"row_tile": 8, "acc_tile": 1, "col_tile": 2, "wg_rows": 1, "wg_cols": 64},
    {"row_tile": 2, "acc_tile": 8, "col_tile": 8, "wg_rows": 128, "wg_cols": 1},
]
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


def gemm_rows() -> np.ndarray:
    return np.array(
        [[float(p[f]) for f in FEATURES] for p in load_problems("lawson-gemm")], dtype=np.float64
    )


def synthetic_labels(rows: np.ndarray) -> np.ndarray:
    """Which of 4 configurations is 'best': by output size and depth, flipped by transposes."""
    m, n, k = rows[:, 0], rows[:, 1], rows[:, 2]
    size = np.log2(m * n) // 5 + (k > 2000) + rows[:, 4]
    return (size % len(CONFIGS)).astype(int)


def fit(transform: Transform, **limits: int) -> tuple[object, SelectorTree, np.ndarray]:
    rows = gemm_rows()
    model = tree_module.DecisionTreeClassifier(random_state=0, **limits)
    model.fit(model_inputs(rows, [transform] * len(FEATURES)), synthetic_labels(rows))
    return model, SelectorTree.from_sklearn(model, FEATURES, [transform] * len(FEATURES)), rows


def probe_rows(tree: SelectorTree, rows: np.ndarray, integer: bool) -> np.ndarray:
    """The dataset, plus, for every split, a dataset row with the split's feature set just
    below, at and just above its cutoff (and at the raw threshold and its float32 rounding)."""
    rng = np.random.default_rng(1)
    out = [rows]
    for node in range(len(tree.left)):
        if tree.left[node] == LEAF:
            continue
        j, t = tree.feature[node], tree.threshold[node]
        transform = tree.transforms[j]
        if integer:
            c = long_cutoff(transform, t)
            values = [c - 2, c - 1, c, c + 1, c + 2, math.floor(t), math.ceil(t)]
        else:
            c = real_cutoff(transform, t)
            values = [c, math.nextafter(c, -math.inf), math.nextafter(c, math.inf), t]
            values += [float(np.float32(t)), float(np.nextafter(np.float32(t), np.float32(1e9)))]
        for v in values:
            row = rows[rng.integers(len(rows))].copy()
            row[j] = v
            out.append(row[None, :])
    return np.concatenate(out)


def compile_c(tree: SelectorTree, tmp_path: Path) -> ctypes.CDLL:
    code = generate_c(tree, "gemm", PARAMS, CONFIGS)
    (tmp_path / "gemm.h").write_text(code.header)
    (tmp_path / "gemm.c").write_text(code.source)
    dll = compile_shared(tmp_path / "gemm.c", tmp_path / "libgemm.so")
    dll.gemm_select.argtypes = [ctypes.c_long] * len(FEATURES)
    dll.gemm_select.restype = ctypes.c_int
    return dll


def python_module(tree: SelectorTree) -> types.ModuleType:
    module = types.ModuleType("generated_selector")
    exec(compile(generate_python(tree, PARAMS, CONFIGS), "selector.py", "exec"), module.__dict__)
    return module


def sklearn_choices(model: object, tree: SelectorTree, rows: np.ndarray) -> np.ndarray:
    return model.predict(model_inputs(rows, tree.transforms))


TREES = {
    "identity-16-leaves": (Transform.IDENTITY, {"max_leaf_nodes": 16}),
    "log2-12-leaves": (Transform.LOG2, {"max_leaf_nodes": 12}),
    "identity-unlimited": (Transform.IDENTITY, {}),
    "log2-depth-6": (Transform.LOG2, {"max_depth": 6, "min_samples_leaf": 3}),
}


@needs_gcc
@pytest.mark.parametrize("name", TREES)
def test_c_matches_sklearn_everywhere(name, tmp_path):
    transform, limits = TREES[name]
    model, tree, rows = fit(transform, **limits)
    probes = probe_rows(tree, rows, integer=True)
    expected = sklearn_choices(model, tree, probes)
    dll = compile_c(tree, tmp_path)
    got = np.array([dll.gemm_select(*(int(x) for x in row)) for row in probes])
    assert len(set(expected[: len(rows)])) > 1  # a real selector, not a constant
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", TREES)
def test_python_and_tree_walk_match_sklearn_everywhere(name):
    transform, limits = TREES[name]
    model, tree, rows = fit(transform, **limits)
    module = python_module(tree)
    for integer in (True, False):
        probes = probe_rows(tree, rows, integer)
        expected = sklearn_choices(model, tree, probes)
        as_python = [
            {f: (int(x) if integer else float(x)) for f, x in zip(FEATURES, row, strict=True)}
            for row in probes
        ]
        np.testing.assert_array_equal([module.select(**p) for p in as_python], expected)
        np.testing.assert_array_equal([tree.choose(p) for p in as_python], expected)
    assert module.config(**dict(zip(FEATURES, rows[0], strict=True)), dtype="float") in CONFIGS


def goes_left(transform: Transform, threshold: float, x: float) -> bool:
    return float(np.float32(transform.apply(np.float64(x)))) <= threshold


@pytest.mark.parametrize("transform", Transform)
@pytest.mark.parametrize("t", [0.5, 3.0000001, 10.000123, 17.3, -2.5, 40.25])
def test_cutoffs_are_exact_bounds(transform, t):
    c = long_cutoff(transform, t)
    assert goes_left(transform, t, c) and not goes_left(transform, t, c + 1)
    r = real_cutoff(transform, t)
    assert goes_left(transform, t, r) and not goes_left(transform, t, math.nextafter(r, math.inf))


def test_cutoffs_at_the_ends():
    assert long_cutoff(Transform.IDENTITY, 1023.5) == 1023
    assert long_cutoff(Transform.LOG2, 1023.5) == (1 << 63) - 1  # every long goes left
    assert long_cutoff(Transform.LOG2, -1e6) == -(1 << 63) - 1  # no long does
    # Only doubles that overflow float32 (to -inf) pass a test against -1e300.
    assert -3.5e38 < real_cutoff(Transform.IDENTITY, -1e300) < -3.4e38
    assert real_cutoff(Transform.LOG2, -1025.0) == -math.inf


@needs_gcc
def test_constant_selectors_compile_and_answer(tmp_path):
    rows = gemm_rows()
    single_leaf = tree_module.DecisionTreeClassifier().fit(rows, np.full(len(rows), 2))
    for n, tree in enumerate(
        [SelectorTree.constant(FEATURES, 0), SelectorTree.from_sklearn(single_leaf, FEATURES)]
    ):
        (tmp_path / str(n)).mkdir()
        dll = compile_c(tree, tmp_path / str(n))
        answer = tree.choice[0]
        assert {dll.gemm_select(*(int(x) for x in row)) for row in rows[:50]} == {answer}
        assert python_module(tree).select(**dict(zip(FEATURES, rows[0], strict=True))) == answer
        select = generate_c(tree, "gemm", PARAMS, CONFIGS).source.split("int gemm_legal")[0]
        assert "if" not in select.split("{", 1)[1]


@needs_gcc
def test_header_works_from_cplusplus(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    _, tree, _ = fit(Transform.LOG2, max_leaf_nodes=8)
    compile_c(tree, tmp_path)
    (tmp_path / "main.cpp").write_text(
        '#include "gemm.h"\n#include <cstdio>\n'
        "int main() { const gemm_config &c = gemm_configs[gemm_select(512, 512, 512, 1, 0, 0)];\n"
        '  std::printf("%ld %d\\n", c.wg_cols, GEMM_NUM_CONFIGS); return 0; }\n'
    )
    exe = tmp_path / "main"
    subprocess.run(
        ["g++", "-Wall", "-Werror", "-o", str(exe), str(tmp_path / "main.cpp"),
         str(tmp_path / "libgemm.so")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                         env={"LD_LIBRARY_PATH": str(tmp_path)}).stdout.split()  # fmt: skip
    choice = tree.choose({f: v for f, v in zip(FEATURES, (512, 512, 512, 1, 0, 0), strict=True)})
    assert out == [str(CONFIGS[choice]["wg_cols"]), str(len(CONFIGS))]


def test_class_labels_map_to_configuration_indices():
    rows = gemm_rows()[:60]
    labels = np.where(rows[:, 0] > 100, "big", "small")
    model = tree_module.DecisionTreeClassifier(max_depth=2).fit(rows, labels)
    tree = SelectorTree.from_sklearn(model, FEATURES, labels={"small": 3, "big": 1})
    assert tree.choices == {1, 3}
    with pytest.raises(SelectError, match="not a configuration index"):
        SelectorTree.from_sklearn(model, FEATURES)


def test_bad_input_is_a_one_line_error():
    _, tree, _ = fit(Transform.IDENTITY, max_leaf_nodes=4)
    with pytest.raises(SelectError, match=r"lacks feature.*K, trans_b") as info:
        tree.choose({"M": 1, "N": 2, "batch": 1, "trans_a": 0})
    assert "\n" not in str(info.value)
    with pytest.raises(SelectError, match="not a fitted decision tree"):
        SelectorTree.from_sklearn(tree_module.DecisionTreeClassifier(), FEATURES)
    with pytest.raises(SelectError, match="6 features but 2 names"):
        SelectorTree.from_sklearn(fit(Transform.IDENTITY, max_depth=1)[0], ("M", "N"))
    with pytest.raises(SelectError, match="keyword"):
        SelectorTree.constant(("M", "int"))
    with pytest.raises(SelectError, match="only 2 are given"):
        generate_c(tree, "gemm", PARAMS, CONFIGS[:2])
    with pytest.raises(SelectError, match="transforms are identity, log2"):
        SelectorTree.constant(FEATURES, transforms=["log10"] * 6)


@needs_gcc
def test_float32_rounding_of_large_sizes(tmp_path):
    """Above 2**24 float32 skips odd integers: scikit-learn sends 16777219 right of the
    threshold 16777219 (it rounds, ties to even, up to 16777220), where a plain x <= t would go
    left."""
    big = [16777216.0, 16777218.0, 16777220.0, 16777222.0]
    rows = np.array([[m, 64, 64, 1, 0, 0] for m in big])
    model = tree_module.DecisionTreeClassifier().fit(rows, [0, 1, 2, 3])
    tree = SelectorTree.from_sklearn(model, FEATURES)
    probes = np.array([[m, 64, 64, 1, 0, 0] for m in range(16777210, 16777235)], dtype=float)
    expected = model.predict(probes)
    assert 16777219.0 in model.tree_.threshold
    assert expected[16777219 - 16777210] == 2  # the tie that a plain comparison gets wrong
    dll = compile_c(tree, tmp_path)
    np.testing.assert_array_equal([dll.gemm_select(*map(int, row)) for row in probes], expected)
    module = python_module(tree)
    halves = probes + 0.5
    got = [module.select(**dict(zip(FEATURES, row, strict=True))) for row in halves]
    np.testing.assert_array_equal(got, model.predict(halves))


@needs_gcc
def test_a_feature_with_fractional_values_is_a_double_in_c(tmp_path):
    # Every input was a long: alpha = 0.75 could not be passed, and (long)0.75 chose wrongly.
    rng = np.random.default_rng(3)
    rows = np.column_stack([rng.random(300), rng.integers(1, 512, 300).astype(np.float64)])
    labels = (rows[:, 0] > 0.5).astype(int) + 2 * (rows[:, 1] > 200)
    model = tree_module.DecisionTreeClassifier(random_state=0).fit(rows, labels)
    tree = SelectorTree.from_sklearn(model, ("alpha", "n"))
    code = generate_c(tree, "k", PARAMS, CONFIGS, real=("alpha",))
    assert "int k_select(double alpha, long n);" in code.header
    (tmp_path / "k.h").write_text(code.header)
    (tmp_path / "k.c").write_text(code.source)
    dll = compile_shared(tmp_path / "k.c", tmp_path / "libk.so")
    dll.k_select.argtypes = [ctypes.c_double, ctypes.c_long]
    dll.k_select.restype = ctypes.c_int
    probes = np.concatenate([rows, np.column_stack([rng.random(200), rng.integers(1, 512, 200)])])
    got = [dll.k_select(float(a), int(n)) for a, n in probes]
    np.testing.assert_array_equal(got, model.predict(probes))


def test_python_compares_large_ints_as_the_model_does(tmp_path):
    """Past 2**53 the model sees float64(n): the generated Python rounds n alike, so n just
    above a cutoff that rounds down to it answers as the model does."""
    from perfport.select.deploy import fit_bundle
    from perfport.select.table import PerfTable

    ns = [2**53 + 1, 2**53 + 3, 2**53 + 5, 2**53 + 7, 2**54 + 2, 2**54 + 6, 2**55, 2**60, 2**62]
    times = np.array([[1.0, 2.0] if i % 2 else [2.0, 1.0] for i in range(len(ns))])
    table = PerfTable(("n",), np.array([[float(n)] for n in ns]), ("wg",), ((64,), (128,)),
                      times, kernel="big")  # fmt: skip
    bundle = fit_bundle(table, 2, tmp_path / "b", classifier="decision_tree_a")
    module = types.ModuleType("generated_selector")
    exec(compile((tmp_path / "b" / "selector.py").read_text(), "selector.py", "exec"),
         module.__dict__)  # fmt: skip
    probes = sorted({n + d for n in ns for d in range(-600, 601, 7)} | {27021598837964801})
    assert [module.select(n=n) for n in probes] == [bundle.choose({"n": n}) for n in probes]
