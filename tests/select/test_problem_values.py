"""A Dispatcher and ``perfport select predict`` take a problem by one rule: the same spellings
(0/1 for a flag, 512.0 for a size, numpy scalars), the same pick, the same one-line refusal."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from perfport.cli import main
from perfport.kernels import builtin
from perfport.select import SelectError
from perfport.select.bundle import write_bundle
from perfport.select.dispatch import Dispatcher
from perfport.select.problem_values import typed_values
from perfport.select.tree import Transform

tree_module = pytest.importorskip("sklearn.tree", reason="scikit-learn (the models extra)")

FEATURES = ("M", "N", "K", "batch", "trans_a", "trans_b")
PARAMS = ("row_tile", "acc_tile", "col_tile", "wg_rows", "wg_cols")
PLAIN = {"row_tile": 1, "acc_tile": 2, "col_tile": 4, "wg_rows": 8, "wg_cols": 8}
TRANSPOSED = {"row_tile": 4, "acc_tile": 4, "col_tile": 2, "wg_rows": 1, "wg_cols": 64}
BASE = {"M": 64, "N": 8, "K": 8, "batch": 1, "trans_b": False}


def by_trans_a(out: Path) -> Path:
    """A bundle fitted, as tables hold them, on 0/1 flags: PLAIN where trans_a is 0."""
    rows = np.array([[m, 8, 8, 1, t, 0] for m in (16, 64, 256) for t in (0, 1)], dtype=float)
    model = tree_module.DecisionTreeClassifier(random_state=0).fit(rows, rows[:, 4].astype(int))
    write_bundle(out, "matmul", PARAMS, [PLAIN, TRANSPOSED], FEATURES, model,
                 [Transform.IDENTITY] * 6)  # fmt: skip
    return out


def predict(bundle: Path, capsys: pytest.CaptureFixture[str], **problem: str) -> tuple[int, str]:
    given = [f"{k}={v}" for k, v in {**BASE, **problem}.items()]
    code = main(["select", "predict", "--bundle", str(bundle), "--json", "--problem", *given])
    done = capsys.readouterr()
    return code, done.out if code == 0 else done.err.strip()


def test_dispatcher_and_select_predict_take_the_same_spellings(tmp_path, cpu, capsys):
    # The Dispatcher refused trans_a=0 (the data's and 'select predict''s spelling), M=64.0
    # and np.int64(0), which the selector reads as the very problem it was fitted on.
    out = by_trans_a(tmp_path)
    spellings = [
        (PLAIN, [False, 0, 0.0, np.bool_(False), np.int64(0), np.float64(0)]),
        (TRANSPOSED, [True, 1, 1.0, np.bool_(True), np.int64(1)]),
    ]
    with Dispatcher(out, device=cpu) as dispatcher:
        for config, values in spellings:
            for value in values:
                assert dict(dispatcher.choose({**BASE, "trans_a": value})) == config, value
        for m in (64, 64.0, np.int64(64), np.float64(64), np.int32(64)):
            assert dict(dispatcher.choose({**BASE, "M": m, "trans_a": 0})) == PLAIN, m
    for text, config in (("0", PLAIN), ("false", PLAIN), ("1", TRANSPOSED), ("true", TRANSPOSED)):
        code, answer = predict(out, capsys, trans_a=text, M="64.0")
        assert code == 0 and json.loads(answer)["config"] == config, answer


def test_a_value_that_is_not_allowed_is_one_line_alike(tmp_path, cpu, capsys):
    # 'select predict' answered trans_a=2, M=2.5 and M=true ("not checked"), which the
    # Dispatcher refused; trans_a=no was the selector's own error there.
    out = by_trans_a(tmp_path)
    refused = [
        ("trans_a", 2, "2", "true or false, or 0 or 1"),
        ("trans_a", "no", "no", "true or false, or 0 or 1"),
        ("M", 2.5, "2.5", "an integer, or a whole number"),
        ("M", True, "true", "an integer, or a whole number"),
    ]
    with Dispatcher(out, device=cpu) as dispatcher:
        for name, value, text, takes in refused:
            problem = {**BASE, "trans_a": 0, name: value}
            for ask in (dispatcher.choose, dispatcher.choice):
                with pytest.raises(SelectError) as caught:
                    ask(problem)
            message = str(caught.value)
            assert f"problem value {name} must be {takes}" in message
            assert message.endswith(f"got {value!r}")
            code, error = predict(out, capsys, **{"trans_a": "0", name: text})
            assert (code, error) == (2, f"perfport: error: {message}")


def test_typed_values_is_the_kernels_types():
    spec = builtin("matmul")
    typed = typed_values(spec, {"M": 512.0, "trans_a": np.int64(1), "trans_b": 0.0, "x": 3})
    assert typed == {"M": 512, "trans_a": True, "trans_b": False, "x": 3}
    assert [type(typed[k]) for k in ("M", "trans_a", "trans_b")] == [int, bool, bool]
    assert typed_values(spec, {"M": 10**30})["M"] == 10**30  # past any double, still an int
    with pytest.raises(SelectError, match=r"dtype must be a name \(default 'float'\), got 1"):
        typed_values(spec, {"dtype": 1})
    with pytest.raises(SelectError, match="must be a finite number"):
        typed_values(spec, {"M": float("nan")})
