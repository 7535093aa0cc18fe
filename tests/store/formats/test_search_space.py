"""Kernel Tuner T1 and BAT CAFF search-space files: exact counts, and untrusted input."""

import gzip
import json
import re

import pytest

from conftest import SHARED, needs_shared
from perfport import Param, SpecError
from perfport.space import Constraint, Space
from perfport.store.formats.search_space import is_space_file, load_space_file

T1 = SHARED / "kerneltuner-benchmark_hub" / "t1_inputs"


@needs_shared
@pytest.mark.parametrize(
    ("name", "legal"),
    [("convolution.json", 6768), ("convolution_milo.json", 4362), ("gemm_milo.json", 116928)],
)
def test_t1_counts_are_exact(name, legal):
    assert len(load_space_file(T1 / name).space()) == legal


@needs_shared
def test_cached_gemm_values_with_seven_conditions():
    conditions = load_space_file(T1 / "gemm_milo.json").constraints[:7]
    with gzip.open(SHARED / "kerneltuner-benchmark_hub" / "gemm" / "RTX_2080_Ti.json.gz") as f:
        cache = json.load(f)
    params = [Param(k, tuple(v)) for k, v in cache["tune_params"].items()]
    space = Space(params, [Constraint.of(c) for c in conditions])
    assert len(space) == 17956 == len(cache["cache"])
    # ... and the very same configurations as the cache holds.
    keys = cache["tune_params_keys"]
    cached = {tuple(int(x) for x in k.split(",")) for k in cache["cache"]}
    assert {tuple(c[k] for k in keys) for c in space} == cached


@needs_shared
def test_every_shared_space_file_loads():
    files = sorted(SHARED.rglob("*.json"))
    spaces = [f for f in files if is_space_file(f)]
    assert len(spaces) >= 7
    for f in spaces:
        d = load_space_file(f)
        assert len(d.space()) > 0 and d.default is not None, f


def _write(tmp_path, data, name="s.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _space(params, conditions=()):
    return {
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": n, "Type": "int", "Values": v, "Default": d} for n, v, d in params
            ],
            "Conditions": [{"Expression": c, "Parameters": []} for c in conditions],
        }
    }


def test_small_file_round(tmp_path):
    path = _write(
        tmp_path, _space([("x", "[1, 2, 4, 8]", 2), ("y", "list(range(1, 5))", 1)], ["x * y <= 8"])
    )
    d = load_space_file(path)
    assert d.default == {"x": 2, "y": 1}
    assert len(d.space()) == sum(1 for x in (1, 2, 4, 8) for y in range(1, 5) if x * y <= 8)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Val', "not valid JSON"),
        ({"Something": 1}, "no ConfigurationSpace"),
        (
            _space([("x", "__import__('os').getcwd()", 1)]),
            "only these functions" if False else "not allowed",
        ),
        (_space([("x", "[1, 2]", 1)], ["__import__('os')"]), "only these functions"),
        (_space([("x", "[1, 2]", 1)], ["y > 1"]), "unknown parameter"),
        (_space([("x", "list(range(10**9))", 1)]), "too long"),
        ({"ConfigurationSpace": {"TuningParameters": [{"Name": "x"}]}}, "needs Name and Values"),
    ],
)
def test_hostile_or_broken_files(tmp_path, content, message):
    with pytest.raises(SpecError) as info:
        load_space_file(_write(tmp_path, content))
    assert message in str(info.value) and "\n" not in str(info.value)


T1_HEAD = {"General": {"BenchmarkName": "conv", "OutputFormat": "JSON"},
           "KernelSpecification": {"Language": "CUDA", "KernelName": "conv"}}  # fmt: skip


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # A T1 file without its space: read as one, so the error names what it lacks.
        (T1_HEAD, "no ConfigurationSpace.TuningParameters list"),
        ({"General": T1_HEAD["General"]}, "no ConfigurationSpace.TuningParameters list"),
        ({**T1_HEAD, **_space([("x", "[]", 1)])}, "parameter x: give at least one value"),
    ],
)
def test_a_broken_t1_file_gets_t1_errors_naming_the_file(tmp_path, content, message):
    path = _write(tmp_path, content, "t1.json")
    assert is_space_file(path)
    with pytest.raises(SpecError) as info:
        load_space_file(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text


def _typed(name, kind, values, default=None):
    entry = {"Name": name, "Type": kind, "Values": values, "Default": default}
    return {"ConfigurationSpace": {"TuningParameters": [entry], "Conditions": []}}


@pytest.mark.parametrize(
    ("kind", "values", "default", "loaded"),
    [
        # bool('false') is True: both loaded as a=(True,)
        ("bool", ["true", "false"], "false", (True, False)),
        ("bool", "['False', 'True']", "True", (False, True)),
        ("Bool", [0, 1, True], 1, (False, True)),
        ("int", "[1, 2.0, '4']", 2, (1, 2, 4)),
        ("float", "[1, 0.5]", 1, (1.0, 0.5)),
        ("string", ["a", "b"], "b", ("a", "b")),
    ],
)
def test_values_take_their_type_exactly(tmp_path, kind, values, default, loaded):
    d = load_space_file(_write(tmp_path, _typed("a", kind, values, default)))
    assert d.params[0].values == loaded
    assert [type(v) for v in d.params[0].values] == [type(v) for v in loaded]
    assert d.default is not None and d.default["a"] in loaded


@pytest.mark.parametrize(
    ("kind", "values", "shown"),
    [
        ("int", "[0.5, 1.5]", "0.5"),  # truncated to (0, 1)
        ("int", "[1, True]", "True"),  # True merged with 1
        ("bool", ["yes", "no"], "'yes'"),
        ("bool", [2], "2"),
        ("float", ["fast"], "'fast'"),
    ],
)
def test_values_that_do_not_convert_exactly_are_refused(tmp_path, kind, values, shown):
    path = _write(tmp_path, _typed("a", kind, values))
    message = f"parameter a: value {shown} does not convert exactly to its Type '{kind}'"
    with pytest.raises(SpecError, match=re.escape(message)) as info:
        load_space_file(path)
    assert "\n" not in str(info.value)
