"""Kernel specs from Python, TOML and YAML files; malformed ones give one-line errors."""

import shutil
from pathlib import Path

import pytest

from perfport import SpecError, load_kernel

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("name", ["saxpy.py", "saxpy.toml", "saxpy.yaml"])
def test_examples_load_alike(name):
    spec = load_kernel(EXAMPLES / name)
    assert spec.name == "saxpy" and spec.param_names == ("wg", "ITEMS")
    assert spec.source.strip() == (EXAMPLES / "saxpy.cl").read_text().strip()
    assert (spec.reference is None) == name.endswith(".yaml")


GOOD_TOML = (EXAMPLES / "saxpy.toml").read_text()

BROKEN = {
    "syntax.toml": ("name = 'x'\nentry = [", "invalid TOML"),
    "syntax.yaml": ("name: [x\n", "invalid YAML"),
    "list.yaml": ("- 1\n- 2\n", "table of kernel fields"),
    "unknown.toml": ("bogus = 1\n" + GOOD_TOML, "unknown field(s) bogus"),
    "missing.toml": ("name = 'x'\nsource = 'k'\n", "missing required field 'entry'"),
    "badexpr.toml": (
        GOOD_TOML.replace('local_size = ["wg"]', 'local_size = ["wg +"]'),
        "not valid syntax",
    ),
    "unsafe.toml": (
        GOOD_TOML.replace('local_size = ["wg"]', "local_size = [\"__import__('os')\"]"),
        "only these functions",
    ),
    "badname.toml": (
        GOOD_TOML.replace('local_size = ["wg"]', 'local_size = ["work_group"]'),
        "unknown name",
    ),
    "badkind.toml": (GOOD_TOML.replace('kind = "launch"', 'kind = "sometimes"'), "kind must be"),
    "badarg.toml": (
        GOOD_TOML.replace('kind = "scalar"\nname = "a"', 'kind = "vector"\nname = "a"'),
        "kind = 'array'",
    ),
    "badref.toml": (
        GOOD_TOML.replace("saxpy.py:reference", "saxpy.py:nothing"),
        "no function 'nothing'",
    ),
    "nosource.toml": (
        GOOD_TOML.replace('source_file = "saxpy.cl"', 'source_file = "missing.cl"'),
        "cannot read source_file",
    ),
    "baddefault.toml": (
        GOOD_TOML.replace("wg = 64, ITEMS = 1", "wg = 63, ITEMS = 1"),
        "not one of",
    ),
    "raises.py": ("raise RuntimeError('boom')\n", "raised RuntimeError: boom"),
    "syntax.py": ("def broken(:\n", "Python syntax error"),
    "nokernel.py": ("x = 1\n", "define 'kernel'"),
    "spec.txt": ("name = 'x'", "unknown kernel spec type"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_malformed_spec_is_one_line_error(tmp_path, name):
    for f in ("saxpy.cl", "saxpy.py"):
        shutil.copy(EXAMPLES / f, tmp_path / f)
    text, message = BROKEN[name]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SpecError) as info:
        load_kernel(path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file():
    with pytest.raises(SpecError, match="does not exist"):
        load_kernel("no/such/kernel.toml")


def test_values_as_expressions_and_derived(tmp_path):
    shutil.copy(EXAMPLES / "saxpy.cl", tmp_path / "saxpy.cl")
    text = (
        (EXAMPLES / "saxpy.toml")
        .read_text()
        .replace("values = [16, 32, 64, 128, 256]", 'values = "[2**i for i in range(4, 9)]"')
    )
    text = text.replace('reference = "saxpy.py:reference"', "").replace(
        "[problem]", '[derived]\ngroups = "ceil_div(n, wg * ITEMS)"\n\n[problem]'
    )
    path = tmp_path / "s.toml"
    path.write_text(text)
    spec = load_kernel(path)
    assert spec.params[0].values == (16, 32, 64, 128, 256)
    assert spec.env({"wg": 64, "ITEMS": 2}, {})["groups"] == 8192
