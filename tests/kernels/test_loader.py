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
    "kernel_tuner.toml": (  # a field of a tune_kernel call: named with perfport's own
        "grid_div_x = ['block_size_x']\n" + GOOD_TOML,
        "grid_div_x is folded into global_size, in work-items: docs/from-kernel-tuner.md",
    ),
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
    # A nested list's text ("['wg > 100']") was a non-empty list: always true, silently.
    "nested.toml": (
        "restrictions = [['wg > 100']]\n" + GOOD_TOML,
        "restriction ['wg > 100'] is a list: give each as an expression string",
    ),
    "nested.yaml": (
        (EXAMPLES / "saxpy.yaml").read_text() + "restrictions:\n  - [wg > 100]\n",
        "restriction ['wg > 100'] is a list",
    ),
    "restrictions_table.toml": (
        "restrictions = { wg = 'wg > 100' }\n" + GOOD_TOML,
        "restrictions must be a list of expressions",
    ),
    "raises.py": ("raise RuntimeError('boom')\n", "raised RuntimeError: boom"),
    "syntax.py": ("def broken(:\n", "Python syntax error"),
    "nokernel.py": ("x = 1\n", "define 'kernel'"),
    # A file 'perfport model stats' counts (no loopy needed: the function is never called).
    "counted.py": ("def make_kernel():\n    raise AssertionError\n", "program(config) for loopy"),
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


CONSTANT_TOML = '''
name = "weighted"
entry = "weighted"
language = "portable"
global_size = ["round_up(n, wg)"]
local_size = ["wg"]
reference = "ref.py:reference"
source = """
CONSTANT_DECL(float, w, 4)
KERNEL void weighted(GLOBAL const float* x, GLOBAL float* y, int n CONSTANT_PARAM(float, w)) {
    const int i = GID(0);
    if (i >= n) return;
#if READ_ONLY
    const float v = LDG(x + i);
#else
    const float v = x[i];
#endif
    y[i] = v * (w[0] + w[1] + w[2] + w[3]);
}
"""

[[params]]
name = "wg"
values = [8, 16]
kind = "launch"

[[params]]
name = "read_only"
values = [0, 1]
define = "READ_ONLY"

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

[[args]]
kind = "array"
name = "w"
dtype = "float"
shape = [4]
constant = true

[problem]
n = 37

[default]
wg = 8
read_only = 0
'''

REFERENCE = """
def reference(problem, inputs):
    return {"y": inputs["x"] * inputs["w"].sum()}
"""


def test_constant_arrays_and_parameter_defines_run(tmp_path, cpu):
    """A constant-memory argument and a parameter under another macro name (OpenCL reserves
    ``read_only``), from TOML, verified against numpy on every configuration."""
    from perfport import Config, Outcome, Problem
    from perfport.devices import open_session
    from perfport.measure import RunSettings, Timing, TrialEngine
    from perfport.measure.data import reference_outputs

    (tmp_path / "ref.py").write_text(REFERENCE)
    path = tmp_path / "weighted.toml"
    path.write_text(CONSTANT_TOML)
    spec = load_kernel(path)
    assert spec.args[-1].constant and spec.params[1].macro == "READ_ONLY"
    assert spec.describe()["params"][1]["define"] == "READ_ONLY"
    settings = RunSettings(timing=Timing.fixed(1, warmup=0))
    engine = TrialEngine(open_session(cpu), spec, Problem(), settings)
    engine.use_expected(reference_outputs(spec, engine.problem, settings.seed), "numpy")
    for wg in (8, 16):
        for read_only in (0, 1):
            m = engine.run(Config.of({"wg": wg, "read_only": read_only}))
            assert m.outcome is Outcome.OK, m.message
    broken = {
        "drop output or constant": CONSTANT_TOML.replace(
            "output = true", "output = true\nconstant = true"
        ),
        "defined twice": CONSTANT_TOML.replace(
            'define = "READ_ONLY"', 'define = "n_"\n[defines]\nn_ = "n"'
        ),
        "constant must be true or false": CONSTANT_TOML.replace(
            "constant = true", 'constant = "false"'
        ),
        "output must be true or false": CONSTANT_TOML.replace("output = true", 'output = "no"'),
        "define must be a macro name": CONSTANT_TOML.replace(
            'define = "READ_ONLY"', "define = false"
        ),
        "must be an identifier": CONSTANT_TOML.replace('define = "READ_ONLY"', 'define = "1RO"'),
        "word of OpenCL C or CUDA": CONSTANT_TOML.replace(
            'define = "READ_ONLY"', 'define = "read_only"'
        ),
        "would rename the argument": CONSTANT_TOML.replace('define = "READ_ONLY"', 'define = "n"'),
    }
    for message, text in broken.items():
        path.write_text(text)
        with pytest.raises(SpecError, match=message) as info:
            load_kernel(path)
        assert "\n" not in str(info.value) and str(path) in str(info.value), message


def test_a_file_importing_a_missing_extra_names_the_extra(tmp_path, monkeypatch):
    """A user's file that imports a package one of perfport's extras installs (a loopy space
    file imports loopy) is refused with that extra's install line, not a bare import error."""
    from perfport._core import optional
    from perfport._core.errors import MissingExtra

    absent = "perfport_test_absent_package"
    extra = tmp_path / "needs_extra.py"
    extra.write_text(f"import {absent}\n")
    with pytest.raises(SpecError, match="ModuleNotFoundError"):
        load_kernel(extra)
    monkeypatch.setitem(optional.EXTRA_OF, absent, "model")
    with pytest.raises(MissingExtra, match=rf"imports '{absent}'.*pip install 'perfport\[model\]'"):
        load_kernel(extra)
    extra.write_text("import numpy.not_a_module_of_numpy\n")  # installed, submodule missing
    with pytest.raises(SpecError, match="ModuleNotFoundError"):
        load_kernel(extra)


def test_a_directory_is_named_as_one(tmp_path):
    with pytest.raises(SpecError, match="is a directory; give the spec file in it"):
        load_kernel(tmp_path)


def test_a_syntax_error_without_a_line_names_no_line(tmp_path):
    """A NUL byte: Python's SyntaxError has no line number, and the message said 'x.py:None'."""
    spec = tmp_path / "nul.py"
    spec.write_bytes(b"kernel = 1\x00\n")
    with pytest.raises(SpecError) as info:
        load_kernel(spec)
    assert str(info.value).startswith(f"{spec}: Python syntax error") and "None" not in str(
        info.value
    )


@pytest.mark.parametrize("value", ['"512"', '"1e3"', "' 2.5 '"])
def test_a_quoted_number_in_the_problem_is_refused_at_load(tmp_path, value):
    """w = "512" reached the size arithmetic as text: "bad operand type for unary -: 'str'"."""
    spec = tmp_path / "k.toml"
    spec.write_text(
        'name = "k"\nentry = "k"\nglobal_size = ["w"]\nlocal_size = ["8"]\n'
        'source = "__kernel void k() {}"\n'
        f'problem = {{ w = {value}, dtype = "float" }}\n'
    )
    with pytest.raises(SpecError, match=r"problem value w is the text .*; write it as a number"):
        load_kernel(spec)


def test_a_source_file_that_is_not_utf8_is_named(tmp_path):
    """A binary source_file ended in a UnicodeDecodeError traceback."""
    shutil.copy(EXAMPLES / "saxpy.py", tmp_path / "saxpy.py")
    (tmp_path / "saxpy.cl").write_bytes(b"\xc3\x28 not text")
    (tmp_path / "k.toml").write_text(GOOD_TOML)
    with pytest.raises(SpecError, match=r"is not UTF-8 text .*saved as UTF-8"):
        load_kernel(tmp_path / "k.toml")


def test_a_byte_order_mark_is_read_past(tmp_path):
    """An editor's BOM gave 'Invalid statement (at line 1, column 1)'."""
    for f in ("saxpy.cl", "saxpy.py"):
        shutil.copy(EXAMPLES / f, tmp_path / f)
    (tmp_path / "k.toml").write_text("\ufeff" + GOOD_TOML, encoding="utf-8")
    assert load_kernel(tmp_path / "k.toml").name == "saxpy"
