"""mypy over src/ (settings in pyproject.toml), so a type error fails CI like any other test;
and user code written as the docs write it, under mypy --strict."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

# A spec written as the docs write it: KernelSpec's annotations were its converted fields, so a
# dict problem, a list of restrictions or init="zeros" were mypy errors in every shipped example.
DOCS_SPEC = (
    "from perfport import ArrayArg, KernelSpec, Param, ScalarArg\n"
    "spec = KernelSpec(name='k', entry='k', source='__kernel void k() {}',\n"
    "    language='opencl', params=[Param('wg', (8, 16))], global_size=['n'],\n"
    "    local_size='wg', problem={'n': 64}, restrictions=['wg <= n', lambda c: True],\n"
    "    defines={'N': 'n'}, default={'wg': 8}, metrics={'GBps2': 'n / time_ms'},\n"
    "    args=[ArrayArg('a', 'float', ['n'], init='zeros', output=True),\n"
    "          ScalarArg('n', 'int', 'n')])\n"
    "shape: tuple[str, ...] = spec.args[0].shape if isinstance(spec.args[0], ArrayArg) else ()\n"
)

# Config.of, Problem.of and merged returned Any, so `c: str = Config.of(wg=64)` passed mypy
# --strict (the ignores below are unused, an error, if they do again); and README's Python API
# block failed it (an Optional not narrowed).
RECORDS = (
    "\nfrom perfport import Config, Problem\n"
    "c: Config = Config.of(wg=64)\n"
    "p: Problem = Problem.of(n=1).merged({'n': 2})\n"
    "wrong: str = Config.of(wg=64)  # type: ignore[assignment]\n"
    "also_wrong: int = Problem.of(n=1).merged({})  # type: ignore[assignment]\n"
)


def readme_python_block() -> str:
    text = (ROOT / "README.md").read_text()
    return text[text.index("## Python API") :].split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="module")
def strict_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    """One mypy --strict run over every user file (each run re-checks numpy and perfport under
    --strict's options, ~20 s; the files are told apart by the paths in its messages)."""
    folder = tmp_path_factory.mktemp("user")
    (folder / "docs_spec.py").write_text(DOCS_SPEC)
    (folder / "records.py").write_text(readme_python_block() + RECORDS)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / ".mypy_cache"),
         str(folder / "docs_spec.py"), str(folder / "records.py")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def errors_in(run: tuple[int, str], name: str) -> str:
    returncode, output = run
    assert returncode in (0, 1), output  # 2: mypy itself failed
    assert returncode == 0 or "error:" in output, output
    return "".join(line + "\n" for line in output.splitlines() if f"{name}:" in line)


def test_mypy_finds_no_error_in_src():
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_spec_written_as_the_docs_write_it_type_checks(strict_run):
    assert errors_in(strict_run, "docs_spec.py") == ""


def test_records_keep_their_type_and_the_readme_block_type_checks(strict_run):
    assert errors_in(strict_run, "records.py") == ""
