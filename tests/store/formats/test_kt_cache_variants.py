"""Kernel Tuner caches as other versions and settings of Kernel Tuner write them (synthetic
fixtures reproducing what was found in caches outside the data perfport was built on)."""

import json
import subprocess
import sys

import pytest

from perfport._core import Outcome, StoreError
from perfport.store import Store, best_results
from perfport.store.formats.importing import import_file


def _cache(failed: dict, objective: str = "time") -> dict:
    def ok(bx: int, t: float) -> dict:
        return {"bx": bx, "time": t, "times": [t, t * 1.01], "compile_time": 1.0, "GFLOP/s": 1 / t}

    return {
        "device_name": "GPU X",
        "kernel_name": "k",
        "problem_size": 1024,
        "tune_params_keys": ["bx"],
        "tune_params": {"bx": [32, 64, 128]},
        "objective": objective,
        "cache": {"32": ok(32, 2.0), "64": ok(64, 1.0), "128": {"bx": 128, **failed}},
    }


@pytest.mark.parametrize(
    ("failed", "objective", "outcome"),
    [
        # Kernel Tuner >= 1.4: the failure in "__error__", and no "time" at all.
        ({"__error__": "CompilationFailedConfig", "compile_time": 3.0}, "time", "compile_error"),
        # Its development versions of 2025 called the key "error".
        ({"error": "RuntimeFailedConfig", "compile_time": 3.0}, "time", "launch_refused"),
        # Before 1.4 the failure went into the objective's key, which need not be "time".
        ({"GFLOP/s": "InvalidConfig", "compile_time": 3.0}, "GFLOP/s", "pruned"),
        ({"time": "CompilationFailedConfig"}, "time", "compile_error"),
    ],
)
def test_failures_wherever_kernel_tuner_wrote_them(tmp_path, db, failed, objective, outcome):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_cache(failed, objective)))
    with Store(db) as store:
        imported = import_file(store, path)
        (best,) = best_results(store)
    assert (len(imported.measurements), imported.failed) == (3, 1)
    (bad,) = [m for m in imported.measurements if not m.ok]
    assert bad.outcome is Outcome(outcome) and dict(bad.config) == {"bx": 128}
    assert dict(best.best) == {"bx": 64}


def test_an_entry_with_neither_time_nor_failure_is_named(tmp_path, db):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_cache({"compile_time": 3.0})))
    with Store(db) as store, pytest.raises(StoreError) as info:
        import_file(store, path)
    assert "entry 128" in str(info.value) and "neither 'time' nor a failure" in str(info.value)


@pytest.mark.parametrize(
    "zero",
    [{"time": 0.0, "times": [0.0, 0.0]}, {"time": 0}, {"time": 1.5, "times": [2.0, 0.0]}],
)
def test_a_time_of_zero_is_refused_naming_its_entry(tmp_path, db, zero):
    """It imported, and replay and select then dropped it as no time: the next best became the
    device's optimum. No run takes 0 ms; a 0 is a timer's failure, refused like a negative."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_cache({**zero, "compile_time": 3.0})))
    with Store(db) as store:
        with pytest.raises(StoreError) as info:
            import_file(store, path)
        assert store.query("SELECT count(*) FROM campaigns")[0][0] == 0
    message = str(info.value)
    assert "entry 128 times holds" in message and "not a measurement" in message, message


def test_a_cache_of_another_objective_without_times_is_refused_as_such(tmp_path, db):
    """The benchmark hub's hyperparameter-tuning caches score Kernel Tuner's own strategy
    settings ('objective': 'score', no 'time'): not kernel times, and not a damaged file."""
    cache = _cache({"score": -1.0}, objective="score")
    cache["cache"] = {k: {"bx": v["bx"], "score": -1.0} for k, v in cache["cache"].items()}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cache))
    with Store(db) as store, pytest.raises(StoreError) as info:
        import_file(store, path)
    message = str(info.value)
    assert "objective is 'score'" in message and "kernel times" in message
    assert "\n" not in message


def test_a_parameter_taking_both_1_and_true_replays(tmp_path, db):
    """Python equates True with 1; Kernel Tuner's own test cache declares a parameter's values
    as ['test', 1, True, 2.45]. Each value keeps its own place in the replayed space."""
    from perfport.space import Space
    from perfport.tune.replay import ReplayData

    def ok(v: object, t: float) -> dict:
        return {"m": v, "time": t, "times": [t], "compile_time": 1.0}

    values = ["test", 1, True, 2.45]
    times = [3.0, 2.0, 1.0, 4.0]
    cache = {
        "device_name": "GPU X", "kernel_name": "k", "tune_params_keys": ["m"],
        "tune_params": {"m": values},
        "cache": {str(v): ok(v, t) for v, t in zip(values, times, strict=True)},
    }  # fmt: skip
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cache))
    with Store(db) as store:
        import_file(store, path)
        data = ReplayData.from_store(store)
    assert isinstance(data.space, Space) and len(data.space) == 4
    by_value = {
        json.dumps(data.config(i)["m"]): float(data.times[i]) for i in range(len(data.space))
    }
    assert by_value == {'"test"': 3.0, "1": 2.0, "true": 1.0, "2.45": 4.0}
    assert data.space.index({"m": True}) != data.space.index({"m": 1})


def test_a_value_beyond_int64_replays(tmp_path, db):
    """A uint64 bitmask was imported and shown, but replay ended in an OverflowError traceback
    (the space built its values as int64)."""
    from perfport.tune.replay import ReplayData

    top = (1 << 64) - 1
    cache = {
        "tune_params_keys": ["mask"],
        "cache": {
            str(m): {"mask": m, "time": t, "times": [t]} for m, t in ((255, 2.0), (top, 1.0))
        },
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cache))
    with Store(db) as store:
        import_file(store, path)
        data = ReplayData.from_store(store)
    assert {data.config(i)["mask"]: float(data.times[i]) for i in range(2)} == {255: 2.0, top: 1.0}


@pytest.mark.parametrize("narrow", ["float32", "float16"])
def test_float32_values_keyed_as_kernel_tuner_keys_them(tmp_path, db, narrow):
    """Kernel Tuner keys an entry by str(np.float32(0.1)), "0.1", and writes the value as
    float(), 0.10000000149011612: import refused such a cache as a whole (select portable
    took it). A key that matches no reading of the value is still refused."""
    import numpy as np

    def entry(a: float) -> dict:
        return {"bx": 32, "alpha": a, "time": 1.0 + a, "times": [1.0]}

    alphas = [getattr(np, narrow)(a) for a in (0.1, 0.2, 0.5)]
    cache = {
        "tune_params_keys": ["bx", "alpha"],
        # str(), as Kernel Tuner keys it; an f-string would write the long form
        "cache": {"32," + str(a): entry(float(a)) for a in alphas},
    }
    assert "32,0.1" in cache["cache"] and float(alphas[0]) != 0.1
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cache))
    with Store(db) as store:
        assert import_file(store, path).params["alpha"] == [float(a) for a in alphas]
    cache["cache"] = {"32,0.3": entry(float(alphas[1]))}  # the key of another value
    path.write_text(json.dumps(cache))
    with Store(tmp_path / "other.db") as store, pytest.raises(StoreError, match="does not match"):
        import_file(store, path)


def test_a_t4_result_without_runtimes_takes_its_time_measurement(tmp_path, db):
    """Kernel Tuner's T4 writer gives ``runtimes: []`` where its cache entry had no ``times``;
    the mean it measured is then only in ``measurements``, as ``time``."""
    results = [
        {
            "configuration": {"bx": bx},
            "times": {"compilation": 1.0, "runtimes": []},
            "invalidity": "correct",
            "correctness": 1,
            "measurements": [{"name": "time", "value": t, "unit": "ms"}],
            "objectives": ["time"],
        }
        for bx, t in ((32, 2.0), (64, 1.0))
    ]
    path = tmp_path / "t4.json"
    data = {"schema_version": "1.0.0", "metadata": {"timeunit": "seconds"}, "results": results}
    path.write_text(json.dumps(data))
    with Store(db) as store:
        import_file(store, path, device="GPU X", kernel="k")
        (best,) = best_results(store)
    assert dict(best.best) == {"bx": 64} and best.best_ms == 1000.0


@pytest.mark.parametrize(
    ("data", "names"),
    [
        ([{"config": {"bx": 32}, "times_ms": [1.0]}], "perfport's own JSON export"),
        ({"Metadata": {"KttVersion": "2.1.0"}, "Results": []}, "a KTT results file"),
        ({"General": {}, "ConfigurationSpace": {}}, "`perfport space` reads it"),
    ],
)
def test_files_mistaken_for_importable_ones_are_named(tmp_path, db, data, names):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with Store(db) as store, pytest.raises(StoreError) as info:
        import_file(store, path)
    assert names in str(info.value) and "\n" not in str(info.value)


def test_perfports_own_csv_export_is_named_as_not_importable(tmp_path, db):
    """It was called JSON that "may be truncated", and import named no file it takes."""
    path = tmp_path / "exp.csv"
    path.write_text("campaign,device,backend,kernel\nstencil-1,CPU,opencl,stencil\n")
    with Store(db) as store, pytest.raises(StoreError) as info:
        import_file(store, path)
    message = str(info.value)
    assert "not JSON at all" in message and "truncated" not in message and "\n" not in message
    assert "csv and json exports do not import, its kt-cache and t4 exports do" in message


@pytest.mark.parametrize(
    "data",
    [
        {**_cache({"time": 1.0}), "cache": {}},
        {"schema_version": "1.0.0", "metadata": {"timeunit": "ms"}, "results": []},
    ],
)
def test_a_file_without_results_is_refused_creating_nothing(tmp_path, data):
    """It imported "0 configurations" into an empty campaign, with exit status 0."""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(data))
    db = tmp_path / "r.db"
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "import", str(path), "--db", str(db)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "holds no results, so there is nothing to import" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not db.exists()


def _t4(objectives):
    results = [
        {"configuration": {"bx": bx}, "times": {"runtimes": [t]}, "invalidity": "correct",
         "correctness": 1, "measurements": [{"name": "time", "value": t, "unit": "ms"}],
         "objectives": objectives}
        for bx, t in ((32, 2.0), (64, 1.0))
    ]  # fmt: skip
    return {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": results}


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (_cache({"time": 3.0, "times": [3.0]}, "GFLOP/s"), "GFLOP/s"),
        (_t4(["GFLOP/s"]), "GFLOP/s"),
        (_t4(["time", "energy"]), "time, energy"),
        (_cache({"time": 3.0, "times": [3.0]}), None),
        (_t4(["time"]), None),
    ],
)
def test_a_files_objective_other_than_time_is_told_at_import(tmp_path, db, data, named):
    """A cache's objective (GFLOP/s) was replaced by time without a word."""
    from perfport.store.formats.importing import parse

    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    told: list[str] = []
    imported = parse(path, "GPU X", "k", told.append)
    assert imported.to_json()["objective"] == (named or "time")
    if named is None:
        assert told == []
        return
    (note,) = told
    assert f"ranked by {named!r}; perfport imports its times and ranks by time" in note
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "import", str(path), "--db", str(db),
         "--device-name", "GPU X", "--kernel-name", "k"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == f"note: {note}\n"
