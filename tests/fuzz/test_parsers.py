"""Property-based fuzzing of every parser and entry point that takes untrusted text: every
input ends in a result or in a one-line error with exit status 2, within 2 s (hypothesis'
deadline) and without growing the process by 1 GB.

Restrictions and T1/BAT value lists go through the evaluators; T1/BAT files and kernel specs
(TOML, YAML, described-stencil JSON) through ``perfport space``; Kernel Tuner caches and T4
files through ``perfport import``; ``--problem`` through ``perfport space``. Seeds are fixed
(derandomize) and the examples few, so the run is repeatable and takes well under a minute.
"""

from __future__ import annotations

import gzip
import io
import json
import resource
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from perfport._core import Expr, PerfportError
from perfport._core.values import evaluate_values
from perfport.cli import main

FUZZ = settings(
    derandomize=True,
    max_examples=80,
    deadline=2000,
    database=None,
    suppress_health_check=list(HealthCheck),
)
# A fuzzer that runs a whole command per example runs fewer in the fast suite (./dev test); its
# slow twin (name ending in _thoroughly) runs FUZZ's full count.
QUICK = settings(FUZZ, max_examples=25)
_START_PEAK_KB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.fixture(autouse=True)
def _within_a_gigabyte():
    yield
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - _START_PEAK_KB
    assert grown < 1 << 20, f"the fuzzed inputs grew the process by {grown >> 10} MB"


def run_cli(argv: list[str]) -> None:
    """Run ``perfport ARGV`` in process: exit 0, or 2 with one line on stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse refusing a flag
            code = exc.code if isinstance(exc.code, int) else 2
    message = err.getvalue()
    assert code in (0, 2), message
    if code == 2:
        assert message.count("\n") == 1 and message.startswith("perfport"), message


# ---- expressions -------------------------------------------------------------------------
NAMES = st.sampled_from(["wg", "s", "n", "x"])
NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["0", "1", "-1", "256", "10**256", "2**4096", "1e308", "0.5", "True"]),
)
STRINGS = st.sampled_from(["'a'", "'%s'", "'%999999999d'", "'float32'", "''"])
OPERATORS = st.sampled_from(
    ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "<", "==", "and", "or", "in"]
)
FUNCTIONS = st.sampled_from(
    ["min", "max", "abs", "ceil", "floor", "sqrt", "log2", "ceil_div", "round_up", "is_pow2",
     "sizeof", "ctype", "range", "list", "sorted", "len", "int", "tuple", "round"]
)  # fmt: skip


def _grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, OPERATORS, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["-", "~", "not ", "+"]), inner).map("".join),
        st.tuples(FUNCTIONS, st.lists(inner, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"
        ),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.lists(inner, max_size=4).map(lambda items: f"[{', '.join(items)}]"),
        st.tuples(inner, NAMES, inner, inner).map(
            lambda t: f"[{t[0]} for {t[1]} in {t[2]} if {t[3]}]"
        ),
        st.tuples(st.integers(1, 2000), st.integers(1, 10**7)).map(
            lambda t: f"[i for i in range({t[0]}) for j in range({t[1]})]"
        ),
        st.integers(1, 1200).map(lambda depth: "-" * depth + "1"),
        st.tuples(inner, st.sampled_from(["2", "64", "256", "(1 << 36)", "10**10"])).map(
            lambda t: f"(({t[0]}) ** {t[1]})"
        ),
        st.tuples(
            inner, st.sampled_from(["<<", "*"]), st.sampled_from(["(1 << 36)", "10**10"])
        ).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    )


EXPRESSIONS = st.one_of(
    st.recursive(st.one_of(NUMBERS, NAMES, STRINGS), _grow, max_leaves=12),
    st.text(max_size=80),
)


# The hostile inputs of issue 23, always among the examples.
HOSTILE = [
    "(((2**256)**256)**256)**256 > wg",
    "[(((10**256)**256)**256) > 0]",
    "[i for i in range(1000000) for j in range(1000000) if False]",
    "'a' * 10**10",
    "(1 << (1 << 36))",
    "-" * 1000 + "1",
    "'%999999999d' % wg",
]


def _hostile(test):
    for text in HOSTILE:
        test = example(text)(test)
    return test


@FUZZ
@_hostile
@given(EXPRESSIONS)
def test_restrictions(text):
    env = {"wg": 64, "s": "ab", "n": 1024, "x": 2.5}
    vectors = {
        "wg": np.arange(1, 65),
        "s": np.array(["a", "bb"], dtype=object),
        "n": 1024,
        "x": 2.5,
    }
    try:
        expr = Expr(text, "restriction")
        expr.value(env)
        expr.vector(vectors)
    except PerfportError as exc:
        assert "\n" not in str(exc)


@FUZZ
@_hostile
@given(EXPRESSIONS)
def test_value_lists(text):
    try:
        evaluate_values(text, "values")
    except PerfportError as exc:
        assert "\n" not in str(exc)


# ---- files -------------------------------------------------------------------------------
JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**80), 2**80),
        st.floats(allow_nan=True),
        st.text(max_size=20),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=15,
)
PARAM_NAMES = st.sampled_from(["block_size_x", "tile", "wg", "n", "1bad", ""])


def _tuning_parameter() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {"Name": st.one_of(PARAM_NAMES, JSON_VALUES),
         "Values": st.one_of(EXPRESSIONS, st.lists(st.integers(-5, 2**40), max_size=6), JSON_VALUES)},
        optional={"Type": st.sampled_from(["int", "float", "string", "bool", "x"]),
                  "Default": JSON_VALUES},
    )  # fmt: skip


SPACE_FILES = st.fixed_dictionaries(
    {"ConfigurationSpace": st.fixed_dictionaries(
        {"TuningParameters": st.lists(_tuning_parameter(), max_size=4)},
        optional={"Conditions": st.lists(
            st.one_of(st.fixed_dictionaries({"Expression": EXPRESSIONS}), JSON_VALUES), max_size=3)},
    )},
    optional={"General": JSON_VALUES, "KernelSpecification": JSON_VALUES},
)  # fmt: skip


def _space_file(tmp_path_factory, document) -> None:
    path = tmp_path_factory.mktemp("space") / "space.json"
    path.write_text(json.dumps(document))
    run_cli(["space", str(path), "--json"])


@QUICK
@given(SPACE_FILES)
def test_t1_and_bat_space_files(tmp_path_factory, document):
    _space_file(tmp_path_factory, document)


@pytest.mark.slow
@FUZZ
@given(SPACE_FILES)
def test_t1_and_bat_space_files_thoroughly(tmp_path_factory, document):
    _space_file(tmp_path_factory, document)


CONFIG_KEYS = st.lists(st.integers(-3, 2**33), min_size=1, max_size=3).map(
    lambda xs: ",".join(map(str, xs))
)
KT_ENTRY = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries(
        {"block_size_x": st.one_of(st.integers(-2, 1024), JSON_VALUES),
         "time": st.one_of(st.floats(allow_nan=True), st.just(1e20), JSON_VALUES)},
        optional={"times": st.lists(st.floats(), max_size=3)},
    ),
)  # fmt: skip
CACHES = st.one_of(
    st.fixed_dictionaries(
        {"tune_params_keys": st.one_of(st.just(["block_size_x"]), JSON_VALUES),
         "cache": st.dictionaries(CONFIG_KEYS, KT_ENTRY, max_size=5)},
        optional={"tune_params": JSON_VALUES, "device_name": JSON_VALUES,
                  "kernel_name": JSON_VALUES, "objective": JSON_VALUES},
    ),
    st.fixed_dictionaries(
        {"results": st.lists(JSON_VALUES, max_size=4)},
        optional={"schema_version": JSON_VALUES, "metadata": JSON_VALUES},
    ),
    JSON_VALUES,
)  # fmt: skip


@QUICK
@given(CACHES, st.booleans())
def test_kernel_tuner_caches_and_t4_files(tmp_path_factory, document, gzipped):
    _cache_file(tmp_path_factory, document, gzipped)


@pytest.mark.slow
@FUZZ
@given(CACHES, st.booleans())
def test_kernel_tuner_caches_and_t4_files_thoroughly(tmp_path_factory, document, gzipped):
    _cache_file(tmp_path_factory, document, gzipped)


def _cache_file(tmp_path_factory, document, gzipped) -> None:
    folder = tmp_path_factory.mktemp("import")
    text = json.dumps(document).encode()
    path = folder / ("cache.json.gz" if gzipped else "cache.json")
    path.write_bytes(gzip.compress(text) if gzipped else text)
    run_cli(["import", str(path), "--db", str(folder / "r.db"), "--json"])


@QUICK
@given(st.binary(max_size=200))
def test_files_that_are_not_json(tmp_path_factory, data):
    _not_json(tmp_path_factory, data)


@pytest.mark.slow
@FUZZ
@given(st.binary(max_size=200))
def test_files_that_are_not_json_thoroughly(tmp_path_factory, data):
    _not_json(tmp_path_factory, data)


def _not_json(tmp_path_factory, data) -> None:
    folder = tmp_path_factory.mktemp("bytes")
    for name in ("c.json", "c.json.gz"):
        path = folder / name
        path.write_bytes(b"\x1f\x8b" + data if name.endswith(".gz") else data)
        run_cli(["import", str(path), "--db", str(folder / "r.db")])
    (folder / "s.toml").write_bytes(data)
    run_cli(["space", str(folder / "s.toml")])


ARG = st.one_of(
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["array", "scalar", "local", "x"]), "name": PARAM_NAMES,
         "dtype": st.one_of(st.sampled_from(["float", "int", "double", "float32", "x"]), JSON_VALUES)},
        optional={"shape": st.one_of(st.lists(EXPRESSIONS, max_size=2), EXPRESSIONS),
                  "value": EXPRESSIONS, "count": EXPRESSIONS, "output": st.booleans(),
                  "init": st.sampled_from(["random", "zeros", "x"])},
    ),
    JSON_VALUES,
)  # fmt: skip
SPECS = st.fixed_dictionaries(
    {"name": st.one_of(st.just("fuzzed"), JSON_VALUES), "entry": st.just("k"),
     # its parameters behind a macro, so that fuzzed args are not all refused against them
     "source": st.just("#define ARGS __global float *a\n"
                       "__kernel void k(ARGS) { a[get_global_id(0)] = 1.0f; }"),
     "global_size": st.one_of(st.lists(EXPRESSIONS, min_size=1, max_size=3), EXPRESSIONS),
     "local_size": st.one_of(st.lists(EXPRESSIONS, min_size=1, max_size=3), EXPRESSIONS)},
    optional={
        "params": st.lists(st.fixed_dictionaries(
            {"name": PARAM_NAMES, "values": st.one_of(EXPRESSIONS, st.lists(st.integers(-4, 2**40), max_size=5))},
            optional={"kind": st.sampled_from(["compile", "launch", "x"])}), max_size=3),
        "problem": st.dictionaries(st.sampled_from(["n", "wg", "width"]),
                                   st.one_of(st.integers(-(2**62), 2**62), st.text(max_size=5)), max_size=2),
        "args": st.lists(ARG, max_size=3),
        "restrictions": st.lists(EXPRESSIONS, max_size=2),
        "derived": st.dictionaries(st.sampled_from(["d", "e"]), EXPRESSIONS, max_size=2),
        "default": JSON_VALUES,
        "reference": st.sampled_from(["os:system", "../x.py:f", "/etc/x.py:f", "ref.py:f", "x"]),
        "local_mem": EXPRESSIONS,
    },
)  # fmt: skip


@QUICK
@given(SPECS, st.sampled_from(["toml", "yaml"]))
def test_spec_files(tmp_path_factory, fields, kind):
    path = tmp_path_factory.mktemp("spec") / f"spec.{kind}"
    if kind == "yaml":
        path.write_text(yaml.safe_dump(fields))
    else:  # JSON values are TOML values here, as long as every key is a bare string
        lines = [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
        path.write_text("\n".join(lines))
    run_cli(["space", str(path), "--json"])


@pytest.mark.slow
@FUZZ
@given(SPECS, st.sampled_from(["toml", "yaml"]))
def test_spec_files_thoroughly(tmp_path_factory, fields, kind):
    test_spec_files.hypothesis.inner_test(tmp_path_factory, fields, kind)


STENCIL_FIELDS = st.dictionaries(
    st.sampled_from(["north", "south", "east", "west", "body", "name"]),
    st.one_of(st.integers(-(2**40), 2**40), JSON_VALUES),
    max_size=6,
)


@QUICK
@given(STENCIL_FIELDS)
def test_described_stencils(tmp_path_factory, fields):
    path = tmp_path_factory.mktemp("stencil") / "stencil.json"
    path.write_text(json.dumps({"name": "s", "body": "return GET(0, 0);", **fields}))
    run_cli(["space", str(path), "--json"])


@pytest.mark.slow
@FUZZ
@given(STENCIL_FIELDS)
def test_described_stencils_thoroughly(tmp_path_factory, fields):
    test_described_stencils.hypothesis.inner_test(tmp_path_factory, fields)


PROBLEM_VALUES = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["0", "-5", "99999999999", "1e308", "nan", "inf", "true", "float", ""]),
    st.text(max_size=12),
)


ASSIGNMENTS = (  # kernel, then (name, value) pairs
    st.sampled_from(["vector_add", "stencil", "matmul"]),
    st.lists(
        st.tuples(st.sampled_from(["n", "width", "height", "dtype", "x", ""]), PROBLEM_VALUES),
        max_size=3,
    ),
)


@QUICK
@given(*ASSIGNMENTS)
def test_problem_assignments(kernel, pairs):
    assignments = [f"{k}={v}" for k, v in pairs] or ["n=1"]
    run_cli(["space", kernel, "--problem", *assignments, "--json"])


@pytest.mark.slow
@FUZZ
@given(*ASSIGNMENTS)
def test_problem_assignments_thoroughly(kernel, pairs):
    test_problem_assignments.hypothesis.inner_test(kernel, pairs)
