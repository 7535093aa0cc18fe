"""A size only an array's shape names (x of m elements, the first n read; a gather from a
longer array): a size of the kernel that ``model measure`` and ``tune`` take, while the
launch passes only the arguments loopy's generated code takes (it drops an unread ``m``)."""

from __future__ import annotations

import json
import warnings

import pytest
from model_support import LOOPY

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

HEAD = """
import loopy as lp
import numpy as np


def _knl(body, *extra):
    return lp.make_kernel("{[i]: 0 <= i < n}", body,
                          [lp.GlobalArg("x", np.float32, shape=("m",)),
                           lp.GlobalArg("y", np.float32, shape=("n",)), *extra,
                           lp.ValueArg("n,m", np.int32)],
                          assumptions="n >= 1", lang_version=(2018, 2))
"""
PADDED = (
    HEAD
    + """
params = {"wg": [16, 32]}
sizes = {"n": 256, "m": 512}


def program(config):
    return lp.split_iname(_knl("y[i] = 2 * x[i]"), "i", config["wg"], outer_tag="g.0",
                          inner_tag="l.0")


def reference(problem, inputs):
    return {"y": 2 * inputs["x"][: int(problem["n"])]}
"""
)
# perfport fills integer inputs with 0..99: an m of at least 100 keeps idx inside x.
GATHER = (
    HEAD
    + """
params = {"wg": [16, 32]}
sizes = {"n": 256, "m": 128}


def program(config):
    knl = _knl("y[i] = x[idx[i]]", lp.GlobalArg("idx", np.int32, shape=("n",)))
    return lp.split_iname(knl, "i", config["wg"], outer_tag="g.0", inner_tag="l.0")


def reference(problem, inputs):
    return {"y": inputs["x"][inputs["idx"]]}
"""
)
KERNEL = HEAD + (
    '\nkernel = lp.split_iname(_knl("y[i] = 2 * x[i]"), "i", 16, outer_tag="g.0", '
    'inner_tag="l.0")\n'
)


def _program():
    import loopy as lp

    namespace: dict = {}
    exec(HEAD, namespace)
    return lp.split_iname(namespace["_knl"]("y[i] = 2 * x[i]"), "i", 16, outer_tag="g.0")


def test_a_size_only_a_shape_names_is_a_size_the_launch_does_not_pass() -> None:
    from perfport._core.records import Problem
    from perfport.model import gather
    from perfport.model.measure import kernel_spec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gather(_program()).params == ("m", "n")
        spec = kernel_spec(_program(), "app-padded", Problem.of(n=256, m=512))
    # loopy's code takes x, y and n: passing m as well failed every launch
    assert [a.name for a in spec.args] == ["x", "y", "n"]
    assert [a.shape for a in spec.args[:2]] == [("m",), ("n",)]


def test_model_measure_measures_a_padded_array(tmp_path, capsys) -> None:
    pytest.importorskip("pyopencl")
    kernel = tmp_path / "padded.py"
    kernel.write_text(KERNEL)
    argv = ["model", "measure", str(kernel), "--sizes", "n=256", "m=512"]
    assert main([*argv, "--db", str(tmp_path / "r.db"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["args"], r["status"]) for r in out["results"]] == [
        ({"m": 512, "n": 256}, "measured")
    ]
    # a size left out is asked for with the flag that gives it
    assert (
        main(["model", "measure", str(kernel), "--sizes", "n=256", "--db", str(tmp_path / "r.db")])
        == 2
    )
    err = capsys.readouterr().err
    assert "needs a value for m; give --sizes m=VALUE" in err


@pytest.mark.parametrize("text", [PADDED, GATHER], ids=["padded", "gather"])
def test_tune_runs_a_padded_array_and_a_gather_verified(tmp_path, capsys, text) -> None:
    pytest.importorskip("pyopencl")
    kernel = tmp_path / "mine.py"
    kernel.write_text(text)
    argv = ["tune", str(kernel), "--db", str(tmp_path / "r.db"), "--confirm", "0", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["outcomes"]["ok"] == 2 and out["verification"] == "numpy reference"
    assert out["unverified"] == 0
