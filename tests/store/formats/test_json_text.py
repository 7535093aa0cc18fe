"""Exports are JSON other tools can read: never NaN or Infinity, which Python's json writes by
default and no JSON parser (perfport's import included) accepts."""

import io
import json
import math
import subprocess
import sys

import pytest

from perfport._core import Config, Measurement, Outcome, Problem, StoreError
from perfport.store import Store, export_rows, write_json
from perfport.store.formats.imported import Imported
from perfport.store.formats.importing import store_imported
from perfport.store.formats.json_text import non_finite
from perfport.store.formats.kt_cache import kt_cache_text, to_kt_cache
from perfport.store.formats.t4 import t4_text, to_t4

# The statistics of an infinite sample (its spread) are NaN, as they were when it was stored.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")


def _strict(text):
    def refuse(constant):
        raise AssertionError(f"{constant} written")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def infinite(tmp_path, db):
    """A store holding an infinite time, as an import of 1e306 s left one before T4's reader
    checked times in ms."""
    m = [
        Measurement(Config.of({"wc": 1}), Outcome.OK, "", (math.inf, math.inf)),
        Measurement(Config.of({"wc": 2}), Outcome.OK, "", (2.0, 3.0)),
    ]
    source = tmp_path / "old.json"
    source.write_text("{}")
    with Store(db) as store:
        imported = Imported("t4", "GPU", "k", Problem(), {"wc": [1, 2]}, tuple(m))
        store_imported(store, imported, source)
    return db


@pytest.mark.parametrize(
    ("convert", "text", "where"),
    [
        (to_kt_cache, kt_cache_text, "['cache']['1']['time']"),
        (to_t4, t4_text, "['results'][0]['times']['runtimes'][0]"),
    ],
)
def test_a_cache_or_t4_export_refuses_what_json_cannot_hold(infinite, convert, text, where):
    with Store(infinite) as store, pytest.raises(StoreError) as info:
        text(convert(store))
    assert f"{where} is not a finite number" in str(info.value)
    assert "\n" not in str(info.value)


def test_the_json_export_writes_null_for_what_json_cannot_hold(infinite):
    out = io.StringIO()
    with Store(infinite) as store:
        assert write_json(export_rows(store), out) == 2
    rows = {r["config"]["wc"]: r for r in _strict(out.getvalue())}
    assert rows[1]["times_ms"] == [None, None] and rows[2]["times_ms"] == [2.0, 3.0]


def test_the_cli_leaves_no_file_behind(infinite, tmp_path):
    out = tmp_path / "back.json"
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "export", "--db", str(infinite), "--format",
         "kt-cache", "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "cannot write a Kernel Tuner cache" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()


def test_non_finite_names_the_first_place():
    assert non_finite({"a": [1.0, {"b": math.nan}]}) == "['a'][1]['b']"
    assert non_finite(math.inf) == "the value" and non_finite({"a": [1, "x"]}) is None
