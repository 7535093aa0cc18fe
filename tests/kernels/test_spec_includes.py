"""``#include "helper.h"`` beside a spec file finds the header from any working directory.
The compiler searched the process's working directory only, so 'perfport tune dir/spec.toml'
stored compile_error ('helper.h' file not found) for every configuration from one directory
and ran from another. The spec's folder now goes on the include path (-I, absolute), for the
reference kernel too, and stays out of the campaign key (it differs between machines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfport import SpecError, load_kernel, tune
from perfport._core import KernelSpec
from perfport.devices import get_device
from perfport.measure.settings import RunSettings, Timing
from perfport.space import kernel_space
from perfport.tune.tune import campaign_key

FAST = RunSettings(timing=Timing.fixed(1, warmup=0))

HELPER = "#define TWICE(v) (2.0f * (v))\n"
KERNEL = """#include "helper.h"
KERNEL void inc(GLOBAL const float* x, GLOBAL float* y, int n) {
    const int i = GID(0);
    if (i < n) y[i] = TWICE(x[i]);
}
"""
REFERENCE_KERNEL = KERNEL.replace("void inc(", "void ref(")
SPEC = """
name = "include_beside"
entry = "inc"
language = "portable"
source_file = "inc.c"
global_size = ["round_up(n, wg)"]
local_size = ["wg"]
default = { wg = 32 }

[problem]
n = 1000

[[params]]
name = "wg"
values = [32, 64]
kind = "launch"

[[args]]
kind = "array"
name = "x"
dtype = "float"
shape = ["n"]

[[args]]
kind = "array"
name = "y"
dtype = "float"
shape = ["n"]
output = true

[[args]]
kind = "scalar"
name = "n"
dtype = "int"
value = "n"

[reference_kernel]
source_file = "ref.c"
entry = "ref"
"""
PY_SPEC = """
from pathlib import Path
from perfport import ArrayArg, KernelSpec, Param, ScalarArg

kernel = KernelSpec(
    name="include_beside_py", entry="inc", language="portable",
    source=(Path(__file__).parent / "inc.c").read_text(),
    params=[Param("wg", [32, 64], kind="launch")], global_size="round_up(n, wg)",
    local_size="wg", problem={"n": 1000}, default={"wg": 32},
    args=[ArrayArg("x", "float", ["n"]), ArrayArg("y", "float", ["n"], output=True),
          ScalarArg("n", "int", "n")],
)
"""


def spec_folder(folder: Path) -> Path:
    """A spec, its kernels and their header in ``folder``; the spec's path."""
    folder.mkdir(parents=True)
    (folder / "helper.h").write_text(HELPER)
    (folder / "inc.c").write_text(KERNEL)
    (folder / "ref.c").write_text(REFERENCE_KERNEL)
    (folder / "spec.toml").write_text(SPEC)
    (folder / "spec.py").write_text(PY_SPEC)
    return folder / "spec.toml"


def test_a_header_beside_the_spec_is_found_from_another_directory(tmp_path, cpu, monkeypatch):
    spec_file = spec_folder(tmp_path / "kernels")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    relative = Path("..") / "kernels"
    checks = {}
    for name in ("spec.toml", "spec.py"):
        spec = load_kernel(relative / name)
        result = tune(spec, device=cpu.id, strategy="brute_force", db=tmp_path / f"{name}.db",
                      settings=FAST)  # fmt: skip
        assert result.outcomes.get("ok") == 2, [m.message for m in result.measurements]
        checks[name] = {m.check.value for m in result.measurements}
        assert spec.include_dirs == (str(spec_file.parent.resolve()),)
    # the TOML spec's reference kernel includes the header too: every output was checked
    assert checks["spec.toml"] == {"verified"}


def test_the_folder_does_not_change_the_campaign_key(tmp_path, cpu):
    specs = [load_kernel(spec_folder(tmp_path / folder)) for folder in ("a", "b")]
    assert specs[0].include_dirs != specs[1].include_dirs
    assert specs[0].describe() == specs[1].describe()
    device = get_device(cpu.id)
    space = kernel_space(specs[0], specs[0].problem, device)
    keys = {campaign_key(s, s.problem, device, space, "brute_force", FAST) for s in specs}
    assert len(keys) == 1


def test_a_python_specs_own_include_dirs_come_first(tmp_path):
    folder = spec_folder(tmp_path / "k").parent
    source = (folder / "spec.py").read_text()
    (folder / "spec.py").write_text(source.replace('name="', 'include_dirs=["/opt/inc"], name="'))
    assert load_kernel(folder / "spec.py").include_dirs == ("/opt/inc", str(folder.resolve()))
    with pytest.raises(SpecError, match="include_dirs must be a list"):
        KernelSpec("k", KERNEL, "inc", "portable", global_size="n", local_size="1",
                   problem={"n": 1}, include_dirs="/opt/inc")  # fmt: skip


def test_a_folder_with_a_space_builds_and_an_include_from_it_says_why(tmp_path, cpu):
    """OpenCL build options are one string split at spaces, and PoCL takes no quoting: the
    folder cannot be passed. A kernel that includes nothing must still build there."""
    folder = spec_folder(tmp_path / "my kernels").parent
    (folder / "plain.c").write_text(KERNEL.replace('#include "helper.h"', HELPER))
    alone = SPEC[: SPEC.index("[reference_kernel]")]  # the trials' own messages, in full
    (folder / "plain.toml").write_text(alone.replace('"inc.c"', '"plain.c"'))
    (folder / "inc.toml").write_text(alone)
    runs = {
        name: tune(
            folder / name,
            device=cpu.id,
            strategy="brute_force",
            db=tmp_path / "r.db",
            settings=FAST,
        )
        for name in ("plain.toml", "inc.toml")
    }
    assert runs["plain.toml"].outcomes.get("ok") == 2
    assert runs["inc.toml"].outcomes.get("compile_error") == 2
    message = runs["inc.toml"].measurements[0].message
    assert "'helper.h' file not found" in message and "has a space" in message
