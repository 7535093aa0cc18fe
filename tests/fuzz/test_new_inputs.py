"""Hostile inputs for the parsers that landed after the first fuzzers: spec fields (work and
metrics, verify, reference_kernel, array files, copy: inits, tolerances), described-stencil
types and references, and the flags --budget P%, --objective, --confirm, --cluster,
``perfport split --sweep/--iterations``, ``perfport model collect --filter``, ``perfport
roofline --device`` and ``perfport worker --scheduler``. Each ends in a result or a one-line
error with exit status 2 (``run_cli``), within hypothesis' 2 s deadline."""

from __future__ import annotations

import argparse
import json

import pytest
import yaml
from hypothesis import assume, example, given
from hypothesis import strategies as st

from fuzz.test_parsers import EXPRESSIONS, FUZZ, JSON_VALUES, PARAM_NAMES, QUICK, run_cli
from perfport._core import PerfportError
from perfport._core.metrics import Objective
from perfport.cli.arguments import cluster_address, scheduler_address
from perfport.kernels import builtin

SOURCE = "__kernel void k(__global float *a) { a[get_global_id(0)] = 1.0f; }"
FLAG_TEXT = st.one_of(
    st.text(max_size=30),
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["0%", "100%", "100.0001%", "-5%", "nan%", "inf%", "1e308%", "%", " 25 %",
                     "0x10", "1_000", "٣", "1e3", "GBps:max", "time:min", ":max", "x:sideways"]),
)  # fmt: skip


@QUICK
@given(FLAG_TEXT, FLAG_TEXT, FLAG_TEXT, FLAG_TEXT)
def test_tune_flags(budget, confirm, seconds, cluster):
    _tune_flags(budget, confirm, seconds, cluster)


@pytest.mark.slow
@FUZZ
@given(FLAG_TEXT, FLAG_TEXT, FLAG_TEXT, FLAG_TEXT)
def test_tune_flags_thoroughly(budget, confirm, seconds, cluster):
    _tune_flags(budget, confirm, seconds, cluster)


def _tune_flags(budget: str, confirm: str, seconds: str, cluster: str) -> None:
    # A spec that does not exist: every flag is parsed (and refused) before it is looked for.
    for flag, text in (("--budget", budget), ("--confirm", confirm),
                       ("--confirm-seconds", seconds), ("--cluster", cluster)):  # fmt: skip
        run_cli(["tune", "/nonexistent/spec.toml", flag, text, "--db", "/nonexistent/r.db"])


@FUZZ
@example("GBps:max:min")
@example("time_ms")
@example("\x00")
@given(FLAG_TEXT)
def test_objectives(text):
    from perfport.tune.checks import _checked_objective

    try:
        _checked_objective(builtin("vector_add"), Objective.parse(text))
    except PerfportError as exc:
        assert "\n" not in str(exc)


@FUZZ
@example("xyz://a:1")
@example("inproc://x")
@example("tcp://:99999999")
@example("")
@example("tcp://[::1]:8786")
@given(st.one_of(FLAG_TEXT, st.tuples(st.sampled_from(["tcp://", "tls://", "x://", ""]),
                                      FLAG_TEXT, st.sampled_from([":8786", ":0", ":", ":65536", ""]))
                 .map("".join)))  # fmt: skip
def test_scheduler_addresses(text):
    for parse in (scheduler_address, cluster_address):
        try:
            parse(text)
        except argparse.ArgumentTypeError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize(
    "address", ["xyz://a:1", "inproc://x", "", "tcp://:99999999", "tcp://a b:1", "\udcff"]
)
def test_worker_refuses_malformed_scheduler_addresses_at_once(address):
    run_cli(["worker", "--scheduler", address, "--device", "opencl:0:0"])  # exit 2, one line


@QUICK
@given(FLAG_TEXT, FLAG_TEXT, FLAG_TEXT)
def test_split_flags(sweep, iterations, dimension):
    run_cli(["split", "/nonexistent/spec.toml", "--device", "opencl:0:0.0", "--device",
             "opencl:0:0.1", "--sweep", sweep, "--iterations", iterations,
             "--dimension", dimension, "--db", "/nonexistent/r.db"])  # fmt: skip


@pytest.mark.slow
@FUZZ
@given(FLAG_TEXT, FLAG_TEXT, FLAG_TEXT)
def test_split_flags_thoroughly(sweep, iterations, dimension):
    test_split_flags.hypothesis.inner_test(sweep, iterations, dimension)


COLLECT_FILTERS = st.lists(st.one_of(FLAG_TEXT, st.sampled_from(
    ["flops", "gmem", "dtype:float32", "nel:65536", "nel:", ":", "dtype:float32,", "nel:1e99",
     "a:b:c", "nel:" + "9" * 40, ",", "overlap"])), min_size=1, max_size=4)  # fmt: skip


@QUICK
@given(COLLECT_FILTERS)
def test_model_collect_filters(tmp_path_factory, tags):
    db = tmp_path_factory.mktemp("collect") / "r.db"
    run_cli(["model", "collect", "--filter", *tags, "--list", "--db", str(db), "--json"])


@pytest.mark.slow
@FUZZ
@given(COLLECT_FILTERS)
def test_model_collect_filters_thoroughly(tmp_path_factory, tags):
    test_model_collect_filters.hypothesis.inner_test(tmp_path_factory, tags)


DEVICE_IDS = st.one_of(
    st.sampled_from(["opencl:99", "opencl:0:99", "opencl:-1:0", "opencl:0:0.7", "opencl:0:0.-1",
                     "opencl:" + "9" * 30, "cuda:0", "cuda:-1", "opencl:0:0:0", "", ":", "\x00",
                     "opencl:0:0." + "9" * 30]),
    st.text(max_size=16),
)  # fmt: skip


@QUICK
@given(DEVICE_IDS)
def test_roofline_devices(tmp_path_factory, device):
    from perfport.devices import get_device

    try:  # a device that exists would be measured: only ids that name none are fuzzed
        get_device(device)
    except PerfportError:
        pass
    except Exception:  # the command below reports the same traceback as a failure
        pass
    else:
        assume(False)
    db = tmp_path_factory.mktemp("roofline") / "r.db"
    run_cli(["roofline", "--device", device, "--db", str(db), "--json"])
    assert not db.exists()


@pytest.mark.slow
@FUZZ
@given(DEVICE_IDS)
def test_roofline_devices_thoroughly(tmp_path_factory, device):
    test_roofline_devices.hypothesis.inner_test(tmp_path_factory, device)


ARRAY = st.fixed_dictionaries(
    {"kind": st.just("array"), "name": st.sampled_from(["a", "b", "x"]),
     "dtype": st.sampled_from(["float", "int", "float32", "x"]), "shape": st.just(["n"])},
    optional={"output": st.booleans(), "atol": JSON_VALUES, "rtol": JSON_VALUES,
              "ignore": JSON_VALUES, "constant": JSON_VALUES,
              "init": st.one_of(st.sampled_from(["copy:a", "copy:b", "copy:", "copy:copy:a",
                                                 "copy:n", "random"]), JSON_VALUES),
              "file": st.one_of(st.sampled_from(["a.npy", "../a.npy", "/etc/hostname", "",
                                                 "missing.npy", "bad.npy"]), JSON_VALUES)},
)  # fmt: skip
WORK = st.one_of(EXPRESSIONS, JSON_VALUES)
NEW_SPECS = st.fixed_dictionaries(
    {"name": st.just("fuzzed"), "entry": st.just("k"), "source": st.just(SOURCE),
     "global_size": st.just(["n"]), "local_size": st.just(["wg"]),
     "params": st.just([{"name": "wg", "values": [1, 2, 4]}]),
     "problem": st.just({"n": 64}), "args": st.lists(ARRAY, min_size=1, max_size=3)},
    optional={
        "bytes": WORK, "flops": WORK,
        "metrics": st.one_of(st.dictionaries(st.one_of(PARAM_NAMES, st.sampled_from(
            ["GBps", "time_ms", "bytes", "m", "1x", "time"])), WORK, max_size=3), JSON_VALUES),
        "verify": st.one_of(st.sampled_from(["os:system", "checks.py:f", "../c.py:f", "x", ""]),
                            JSON_VALUES),
        "reference_kernel": st.one_of(JSON_VALUES, st.fixed_dictionaries(
            {"entry": st.one_of(st.just("k"), JSON_VALUES)},
            optional={"source": st.one_of(st.just(SOURCE), JSON_VALUES),
                      "source_file": st.sampled_from(["/etc/hostname", "../x.cl", "k.cl", ""]),
                      "config": JSON_VALUES, "global_size": WORK, "local_size": WORK})),
    },
)  # fmt: skip


def _spec_folder(tmp_path_factory):
    import numpy as np

    folder = tmp_path_factory.mktemp("spec")
    np.save(folder / "a.npy", np.arange(64, dtype=np.float32))
    (folder / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")
    (folder / "checks.py").write_text("def f(expected, actual):\n    return True\n")
    (folder / "k.cl").write_text(SOURCE)
    return folder


@QUICK
@given(NEW_SPECS)
def test_spec_work_metrics_checks_and_files(tmp_path_factory, fields):
    # YAML holds every JSON value (TOML has no null); both go through one loader after parsing
    path = _spec_folder(tmp_path_factory) / "spec.yaml"
    path.write_text(yaml.safe_dump(fields))
    run_cli(["space", str(path), "--json"])


@pytest.mark.slow
@FUZZ
@given(NEW_SPECS)
def test_spec_work_metrics_checks_and_files_thoroughly(tmp_path_factory, fields):
    test_spec_work_metrics_checks_and_files.hypothesis.inner_test(tmp_path_factory, fields)


STENCIL_FIELDS = st.dictionaries(
    st.sampled_from(["dtype", "out_dtype", "reference", "reference_file", "north", "east"]),
    st.one_of(st.sampled_from(["int", "float", "double", "same", "half", "x", "", "C + S",
                               "C ** 10**10", "__import__('os')", "ref.py:f", "../r.py:f",
                               "/etc/r.py:f", "os:system", "ref.py:missing", "ref.py"]),
              EXPRESSIONS, JSON_VALUES), max_size=5)  # fmt: skip


@QUICK
@given(STENCIL_FIELDS)
def test_described_stencil_types_and_references(tmp_path_factory, fields):
    folder = tmp_path_factory.mktemp("stencil")
    (folder / "ref.py").write_text("def f(get, problem):\n    return get(0, 0)\n")
    path = folder / "stencil.json"
    path.write_text(json.dumps({"name": "s", "body": "return (OUT)GET(0, 0);", **fields}))
    run_cli(["space", str(path), "--json"])
    run_cli(["space", str(path), "--problem", "dtype=int", "--json"])


@pytest.mark.slow
@FUZZ
@given(STENCIL_FIELDS)
def test_described_stencil_types_and_references_thoroughly(tmp_path_factory, fields):
    test_described_stencil_types_and_references.hypothesis.inner_test(tmp_path_factory, fields)
