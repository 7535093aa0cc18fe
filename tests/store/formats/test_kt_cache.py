"""Kernel Tuner caches and T4 files: import, export, round trips, and untrusted input."""

import gzip
import json
import subprocess
import sys

import pytest

from conftest import SHARED, needs_shared
from perfport._core import StoreError
from perfport.store import Store, best_results
from perfport.store.formats.importing import import_file, parse
from perfport.store.formats.kt_cache import to_kt_cache
from perfport.store.formats.t4 import to_t4


def _cache():
    entries = {}
    for bx in (16, 32, 64):
        for tile in (1, 2):
            params = {"block_size_x": bx, "tile": tile}
            if bx == 64 and tile == 2:
                entry = {**params, "time": "CompilationFailedConfig", "compile_time": 5.0}
            else:
                times = [bx / tile * 0.01 + i * 0.001 for i in range(4)]
                entry = {**params, "time": sum(times) / 4, "times": times, "compile_time": 1.5}
            entries[f"{bx},{tile}"] = entry
    return {
        "device_name": "Test GPU",
        "kernel_name": "kern",
        "problem_size": [1024, 512],
        "tune_params_keys": ["block_size_x", "tile"],
        "tune_params": {"block_size_x": [16, 32, 64, 128], "tile": [1, 2]},
        "cache": entries,
    }


def _write(path, data, gz=False):
    raw = json.dumps(data) if not isinstance(data, str | bytes) else data
    raw = raw.encode() if isinstance(raw, str) else raw
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_import_cache(tmp_path, db, gz):
    path = _write(tmp_path / ("c.json.gz" if gz else "c.json"), _cache(), gz)
    with Store(db) as store:
        imported = import_file(store, path)
        assert imported.to_json() == {
            "format": "kt-cache", "device": "Test GPU", "kernel": "kern",
            "problem": {"problem_size": "1024x512"}, "configs": 6, "failed": 1, "objective": "time",
        }  # fmt: skip
        import_file(store, path)  # again: nothing new
        assert store.query("SELECT count(*) FROM results")[0][0] == 6
        (best,) = best_results(store)
        assert dict(best.best) == {"block_size_x": 16, "tile": 2} and best.outcomes == {
            "ok": 5,
            "compile_error": 1,
        }


def test_cache_round_trip(tmp_path, db):
    original = _cache()
    with Store(db) as store:
        import_file(store, _write(tmp_path / "c.json", original))
        exported = to_kt_cache(store, kernel="kern")
    assert exported["tune_params"] == original["tune_params"]  # declared values, not just seen
    assert exported["problem_size"] == [1024, 512] and exported["device_name"] == "Test GPU"
    for key, entry in original["cache"].items():
        got = exported["cache"][key]
        assert (
            got["time"] == pytest.approx(entry["time"])
            if "times" in entry
            else got["time"] == entry["time"]
        )
        assert got.get("times") == entry.get("times")


def test_t4_round_trip(tmp_path, db):
    with Store(db) as store:
        import_file(store, _write(tmp_path / "c.json", _cache()))
        t4 = to_t4(store)
    assert len(t4["results"]) == 6 and {r["invalidity"] for r in t4["results"]} == {
        "correct",
        "compile",
    }
    again = parse(_write(tmp_path / "t4.json", t4), device="Test GPU", kernel="kern")
    assert again.format == "t4" and len(again.measurements) == 6 and again.failed == 1


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: json.dumps(c)[:-40], "not JSON"),
        (lambda c: {**c, "cache": []}, "not a Kernel Tuner cache"),
        (lambda c: {**c, "tune_params_keys": ["block_size_x"]}, "name different parameters"),
        (
            lambda c: {
                **c,
                "cache": {**c["cache"], "16,1": {**c["cache"]["16,1"], "times": ["NaN"]}},
            },
            "not a time",
        ),
        (
            lambda c: {
                **c,
                "cache": {**c["cache"], "16,1": {**c["cache"]["16,1"], "time": "Exploded"}},
            },
            "unknown failure",
        ),
        (lambda c: {**c, "cache": {**c["cache"], "99,9": c["cache"]["16,1"]}}, "does not match"),
        (  # every entry sets every parameter, so a cache cannot mix parameter sets as T4 could
            lambda c: {**c, "cache": {**c["cache"], "16,1": {"block_size_x": 16, "time": 1.0}}},
            "lacks parameter 'tile'",
        ),
        (
            lambda c: {**c, "cache": {"16,1": {**c["cache"]["16,1"], "tile": {"nested": [1]}}}},
            "not a finite number or a string",
        ),
        (lambda c: "[" * 100000 + "]" * 100000, "not JSON"),
        (lambda c: {"results": [], "other": 1}, "neither a Kernel Tuner cache"),
    ],
)
def test_bad_files_change_nothing(tmp_path, db, mutate, message):
    good = _write(tmp_path / "good.json", _cache())
    with Store(db) as store:
        import_file(store, good)
        before = store.query("SELECT id, outcome, median_ms FROM results ORDER BY id")
        bad = _write(tmp_path / "bad.json", mutate(_cache()))
        with pytest.raises(StoreError) as info:
            import_file(store, bad)
        assert message in str(info.value) and "\n" not in str(info.value)
        assert store.query("SELECT id, outcome, median_ms FROM results ORDER BY id") == before
        assert store.query("SELECT count(*) FROM campaigns")[0][0] == 1


def test_truncated_gzip(tmp_path, db):
    data = gzip.compress(json.dumps(_cache()).encode())
    path = tmp_path / "t.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with Store(db) as store, pytest.raises(StoreError, match="not JSON or gzipped JSON"):
        import_file(store, path)


def test_cli_import_and_export(tmp_path):
    db = tmp_path / "r.db"
    path = _write(tmp_path / "c.json", _cache())

    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "perfport", *map(str, a)], capture_output=True, text=True
        )

    done = run("import", path, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    keys = ("device", "kernel", "configs", "failed", "added")
    assert {k: json.loads(done.stdout)[k] for k in keys} == {
        "device": "Test GPU", "kernel": "kern", "configs": 6, "failed": 1, "added": 6,
    }  # fmt: skip
    again = run("import", path, "--db", db)
    assert again.returncode == 0 and "nothing added" in again.stdout
    out = tmp_path / "back.json"
    assert run("export", "--db", db, "--format", "kt-cache", "-o", out).returncode == 0
    assert set(json.loads(out.read_text())["cache"]) == set(_cache()["cache"])
    bad = run("import", tmp_path / "missing.json", "--db", db)
    assert bad.returncode == 2 and "cannot be read" in bad.stderr


@pytest.mark.slow
@needs_shared
def test_every_shared_cache_imports(db):
    hub = SHARED / "kerneltuner-benchmark_hub"
    expected = {
        "RTX_2080_Ti": (17956, 0),
        "A100": (4362, 161),
        "A4000": (4362, 161),
        "MI250X": (4362, 0),
    }
    with Store(db) as store:
        for path in sorted(hub.glob("*/*.json.gz")):
            imported = import_file(store, path)
            if path.stem.split(".")[0] in expected and "convolution/" not in str(path):
                assert (len(imported.measurements), imported.failed) == expected[
                    path.stem.split(".")[0]
                ], path
        t4 = import_file(store, hub / "t4_example" / "convolution_milo_A100_T4.json.gz")
        assert (len(t4.measurements), t4.failed) == (4362, 161)


def test_import_takes_a_cache_without_tune_params(tmp_path, db):
    """select portable always read such caches; the one reader lets import read them too, the
    values then taken from the entries."""
    cache = _cache()
    del cache["tune_params"]
    with Store(db) as store:
        imported = import_file(store, _write(tmp_path / "c.json", cache))
    assert imported.params == {"block_size_x": [16, 32, 64], "tile": [1, 2]}
    assert len(imported.measurements) == 6


@pytest.mark.parametrize(
    ("field", "name", "flag"),
    [("device_name", "GPU\x1b[31mRED", "--device-name"), ("kernel_name", "k" * 201, "--kernel-name"),
     ("device_name", "D" * 100_000, "--device-name")],
)  # fmt: skip
def test_a_name_unfit_for_a_table_is_refused_unless_renamed(tmp_path, field, name, flag):
    """An escape sequence in a device name drove the terminal in every table; a name of
    100,000 characters stalled the import's own printout for minutes."""
    path = _write(tmp_path / "c.json", {**_cache(), field: name})
    with pytest.raises(StoreError, match=f"not 1-200 printable characters; name it with {flag}"):
        parse(path)
    renamed = {"device": "GPU"} if field == "device_name" else {"kernel": "k"}
    assert parse(path, **renamed).measurements
