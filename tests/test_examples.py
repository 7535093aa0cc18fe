"""The examples in README and docs run as written."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize(
    "script",
    ["saxpy.py", "own_strategy.py", pytest.param("api_tour.py", marks=pytest.mark.slow)],
)
def test_example_runs(tmp_path, script):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "best" in done.stdout


def test_script_without_main_guard_and_from_stdin(tmp_path):
    """Workers never re-run the user's script, so neither needs `if __name__ == '__main__'`."""
    code = (
        "import numpy as np, perfport\n"
        "from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg\n"
        "def reference(p, i):\n"
        "    return {'c': i['a'] + i['b']}\n"
        "spec = KernelSpec(name='add', entry='add', source='__kernel void add(__global const float* a, "
        "__global const float* b, __global float* c) { int i = get_global_id(0); c[i] = a[i] + b[i]; }',"
        " params=(Param('wg', (8, 16), ParamKind.LAUNCH),), global_size=('n',), local_size=('wg',),"
        " args=(ArrayArg('a', 'float', ('n',)), ArrayArg('b', 'float', ('n',)), ArrayArg('c', 'float', ('n',), output=True)),"
        " problem={'n': 256}, default={'wg': 8}, reference=reference)\n"
        "r = perfport.tune(spec, strategy='brute_force', db='stdin.db')\n"
        "print(r.outcomes['ok'], r.verification)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=code, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2 numpy reference"
