"""``perfport model stats``: built-in and file kernels, symbolic and evaluated, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_support import LOOPY

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

KERNEL_FILE = """
import numpy as np
import loopy as lp


def make_kernel():
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}", "y[i] = 2*x[i] + y[i]",
        [lp.GlobalArg("x,y", np.float64, shape="n"), ...], lang_version=(2018, 2))
    knl = lp.assume(knl, "n mod 64 = 0 and n >= 64")
    return lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _json(capsys, *argv):
    assert main(["model", "stats", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_builtin_matmul_symbolic_and_evaluated(capsys):
    symbolic = _json(capsys, "matmul-noprefetch")
    assert symbolic["sizes"] is None and symbolic["params"] == ["n"]
    assert all(o["value"] is None and "n" in o["symbolic"] for o in symbolic["ops"])
    report = _json(capsys, "matmul-noprefetch", "--problem", "n=64", "--feature",
                   "f_mem_access_global_float32_load_lstrides:{0:1}_afr:>1")  # fmt: skip
    assert report["features"]["f_op_float32_madd"] == 64**3 / 32
    assert report["features"]["f_mem_access_tag:bLD"] == 64**3
    # b is loaded with lid(0) stride 1: every work-item, n times per element.
    assert report["features"]["f_mem_access_global_float32_load_lstrides:{0:1}_afr:>1"] == 64**3
    assert report["thread_groups"]["value"] == 16 and report["exact"] is False


def test_a_kernel_file_is_counted(tmp_path, capsys):
    path = tmp_path / "axpy.py"
    path.write_text(KERNEL_FILE)
    report = _json(capsys, str(path), "--problem", "n=1024")
    ops = {(o["dtype"], o["op"]): o["value"] for o in report["ops"]}
    assert ops[("float64", "madd")] == 1024 / 32
    mem = {(m["variable"], m["direction"]): m for m in report["mem"]}
    assert mem[("x", "load")]["value"] == 1024 and mem[("x", "load")]["afr"] == 1
    assert mem[("y", "store")]["lstrides_value"] == {"0": 1}
    assert mem[("y", "store")]["gstrides_value"] == {"0": 64}
    assert set(mem[("x", "load")]) == {
        "mtype", "dtype", "direction", "variable", "tags", "granularity", "symbolic", "lstrides",
        "gstrides", "footprint", "value", "lstrides_value", "gstrides_value", "afr", "issued",
        "issued_value",
    }  # fmt: skip
    assert mem[("x", "load")]["issued_value"] == 1024  # global: as loopy counts it


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope"], "neither a built-in kernel"),
        (["missing.py"], "kernel file 'missing.py' does not exist"),
        (["matmul-prefetch", "--problem", "n=40"], "outside the assumptions"),
        (["matmul-prefetch", "--problem", "m=32"], "has no size m"),
        (["matmul-prefetch", "--problem", "n=big"], "give n=INTEGER"),
        (["matmul-prefetch", "--feature", "f_op_float32"], "f_op_<dtype>_<op>"),
        (["matmul-prefetch", "--feature", "f_op_float32_fma"], "ops: add, mul, madd"),
        (["matmul-prefetch", "--feature", "f_op_float32_madd"], "give --problem n="),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(["model", "stats", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_file_that_defines_no_kernel(tmp_path, capsys):
    path = tmp_path / "empty.py"
    path.write_text("x = 1\n")
    assert main(["model", "stats", str(path)]) == 2
    assert "define 'kernel'" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("def make_kernel():\n    raise ValueError('no')\n")
    assert main(["model", "stats", str(broken)]) == 2
    assert "make_kernel() raised ValueError" in capsys.readouterr().err


def test_text_output_lists_counts_and_approximations(capsys):
    assert main(["model", "stats", "matmul-prefetch", "--problem", "n=32"]) == 0
    out = capsys.readouterr().out
    assert "sync barrier_local" in out and "approximation:" in out and "f_op_float32_madd" in out


SUBTRACTIONS = """
import numpy as np
import loopy as lp


def make_kernel():
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        ["y[i] = x[i] - y[i]", "z[i] = x[i]*y[i] - z[i]", "w[i] = w[i] - 2*x[i]*y[i]"],
        [lp.GlobalArg("x,y,z,w", np.float32, shape="n"), ...], lang_version=(2018, 2))
    knl = lp.assume(knl, "n mod 64 = 0 and n >= 64")
    return lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")
"""


def test_a_subtraction_is_an_addition_not_a_multiply_add(tmp_path, capsys):
    # loopy writes a - b as a + (-1)*b and counts no multiplication for the -1: only a product
    # that multiplies may fuse with the sum (here: a - b is an add, a*b - c and
    # c - 2*a*b a madd each, the latter's other multiplication left as a mul).
    path = tmp_path / "sub.py"
    path.write_text(SUBTRACTIONS)
    report = _json(capsys, str(path), "--problem", "n=6400")
    ops = {(o["dtype"], o["op"]): o["value"] for o in report["ops"]}
    per_statement = 6400 / 32
    assert ops[("float32", "add")] == per_statement
    assert ops[("float32", "madd")] == 2 * per_statement
    assert ops[("float32", "mul")] == per_statement
    assert all(o["value"] >= 0 for o in report["ops"])


def test_tune_on_a_counted_kernel_file_says_what_tune_needs(tmp_path, capsys):
    path = tmp_path / "axpy.py"
    path.write_text(KERNEL_FILE + "\n\nkernel = make_kernel()\n")  # a loopy kernel, not a spec
    assert main(["tune", str(path), "--budget", "1", "--db", str(tmp_path / "t.db")]) == 2
    err = capsys.readouterr().err
    assert "define program(config)" in err and err.count("\n") == 1


def test_what_a_kernel_file_prints_does_not_break_json(tmp_path, capsys):
    path = tmp_path / "loud.py"
    path.write_text('print("imported")\n' + KERNEL_FILE.replace(
        "def make_kernel():", 'def make_kernel():\n    print("making")'))  # fmt: skip
    report = _json(capsys, str(path), "--problem", "n=1024")  # json.loads of all of stdout
    assert report["params"] == ["n"]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc, where no folder can be made")
@pytest.mark.parametrize("kernel", ["file", "matmul-prefetch"])
def test_a_cache_folder_that_cannot_be_made_is_named_with_the_fix(tmp_path, kernel):
    # Importing loopy makes its caches: it was blamed on the user's file ("raised
    # FileNotFoundError ...; fix the file"), then pytools printed an "Exception ignored" traceback.
    path = tmp_path / "axpy.py"
    path.write_text(KERNEL_FILE)
    env = {**os.environ, "XDG_CACHE_HOME": "/proc/perfport-nope"}
    argv = [
        sys.executable,
        "-m",
        "perfport",
        "model",
        "stats",
        str(path) if kernel == "file" else kernel,
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    err = done.stderr
    assert err.count("\n") == 1 and "Traceback" not in err and "Exception ignored" not in err
    assert "the cache folder /proc/perfport-nope cannot be written" in err
    assert "set XDG_CACHE_HOME to a writable folder" in err and "fix the file" not in err


@pytest.mark.parametrize("size", ["0", "-5"])
def test_a_size_below_one_is_refused_for_a_kernel_without_assumptions(tmp_path, capsys, size):
    # Without lp.assume, n=0 and n=-5 gave every count 0 (and predict a launch-only time),
    # with no word; 'model measure --sizes' refused them.
    from model_support import calibration_file

    path = tmp_path / "open.py"
    path.write_text(
        KERNEL_FILE.replace('    knl = lp.assume(knl, "n mod 64 = 0 and n >= 64")\n', "")
    )
    cal = calibration_file(tmp_path / "cal.json", "dev")
    for argv in (["stats", str(path)], ["predict", cal, str(path)]):
        assert main(["model", *argv, "--problem", f"n={size}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--problem n={size}: sizes are 1 or more" in err
