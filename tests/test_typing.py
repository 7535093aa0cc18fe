"""mypy over src/ (settings in pyproject.toml), so a type error fails CI like any other test."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_mypy_finds_no_error_in_src():
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_spec_written_as_the_docs_write_it_type_checks(tmp_path):
    """KernelSpec's annotations were its converted fields: a dict problem, a list of
    restrictions or init="zeros" were mypy errors in every shipped example."""
    user = tmp_path / "user.py"
    user.write_text(
        "from perfport import ArrayArg, KernelSpec, Param, ScalarArg\n"
        "spec = KernelSpec(name='k', entry='k', source='__kernel void k() {}',\n"
        "    language='opencl', params=[Param('wg', (8, 16))], global_size=['n'],\n"
        "    local_size='wg', problem={'n': 64}, restrictions=['wg <= n', lambda c: True],\n"
        "    defines={'N': 'n'}, default={'wg': 8}, metrics={'GBps2': 'n / time_ms'},\n"
        "    args=[ArrayArg('a', 'float', ['n'], init='zeros', output=True),\n"
        "          ScalarArg('n', 'int', 'n')])\n"
        "shape: tuple[str, ...] = spec.args[0].shape if isinstance(spec.args[0], ArrayArg) else ()\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / ".mypy_cache"),
         str(user)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_records_keep_their_type_and_the_readme_block_type_checks(tmp_path):
    """Config.of, Problem.of and merged returned Any, so `c: str = Config.of(wg=64)` passed
    mypy --strict; and README's Python API block failed it (an Optional not narrowed)."""
    text = (ROOT / "README.md").read_text()
    block = text[text.index("## Python API") :].split("```python\n", 1)[1].split("```", 1)[0]
    user = tmp_path / "user.py"
    user.write_text(
        block + "\nfrom perfport import Config, Problem\n"
        "c: Config = Config.of(wg=64)\n"
        "p: Problem = Problem.of(n=1).merged({'n': 2})\n"
        "wrong: str = Config.of(wg=64)  # type: ignore[assignment]\n"  # unused if Any
        "also_wrong: int = Problem.of(n=1).merged({})  # type: ignore[assignment]\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / ".mypy_cache"),
         str(user)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
