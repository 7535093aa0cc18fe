"""docs/from-kernel-tuner.md: the perfport code it shows is the examples' own (which
test_kernel_tuner_examples.py tunes), and its cache round trip runs as written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "from-kernel-tuner.md"
# "perfport, from [examples/kernel_tuner/X](...)" then, after its paragraph, a python block
SHOWN = re.compile(
    r"^perfport, from \[(?P<file>examples/kernel_tuner/[\w.]+)\].*?```python\n(?P<code>.*?)```",
    re.S | re.M,
)


def test_the_guide_shows_the_examples_own_code() -> None:
    shown = {m["file"]: m["code"] for m in SHOWN.finditer(GUIDE.read_text())}
    assert sorted(shown) == [
        "examples/kernel_tuner/matmul.py",
        "examples/kernel_tuner/vector_add.py",
    ]
    for file, code in shown.items():
        assert code in (ROOT / file).read_text(), f"the guide's code is not {file}'s"


def perfport(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "perfport", *args], cwd=cwd, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_guides_cache_round_trip(tmp_path: Path) -> None:
    """Tune an example, export its Kernel Tuner cache, import it as another device: the same
    count and the same best."""
    spec = str(ROOT / "examples" / "kernel_tuner" / "vector_add.py")
    tuned = json.loads(perfport(
        "tune", spec, "--problem", "n=65536", "--budget", "4", "--confirm", "0",
        "--strategy", "random", "--db", "a.db", "--json", cwd=tmp_path,
    ))  # fmt: skip
    perfport("export", "--db", "a.db", "--kernel", "kt_vector_add", "--format", "kt-cache",
             "-o", "cache.json", cwd=tmp_path)  # fmt: skip
    cache = json.loads((tmp_path / "cache.json").read_text())
    assert cache["kernel_name"] == "vector_add" and cache["problem_size"] == 65536
    best_key = min(cache["cache"], key=lambda k: cache["cache"][k]["time"])
    assert best_key == ",".join(str(v) for v in tuned["best"]["config"].values())
    imported = json.loads(perfport(
        "import", "cache.json", "--db", "b.db", "--device-name", "elsewhere", "--json",
        cwd=tmp_path,
    ))  # fmt: skip
    assert imported["configs"] == len(cache["cache"]) == 4
    (result,) = json.loads(perfport("results", "--db", "b.db", "--json", cwd=tmp_path))["results"]
    assert result["best"]["config"] == tuned["best"]["config"]
