"""T4 files: what the reader refuses, so that what it stores replays and exports."""

import json

import pytest

from perfport._core import StoreError
from perfport.store import Store
from perfport.store.formats.importing import import_file


def _t4(configs, unit="milliseconds", runtimes=(1.0, 1.5)):
    results = [
        {
            "configuration": c,
            "times": {"compilation": 1.0, "runtimes": [t * (i + 1) for t in runtimes]},
            "invalidity": "correct",
        }
        for i, c in enumerate(configs)
    ]
    return {"schema_version": "1.0.0", "metadata": {"timeunit": unit}, "results": results}


def _refused(tmp_path, db, data):
    """The one-line error importing ``data`` gives; the store is left without a campaign."""
    path = tmp_path / "t4.json"
    path.write_text(json.dumps(data))
    with Store(db) as store:
        with pytest.raises(StoreError) as info:
            import_file(store, path, device="GPU", kernel="k")
        assert store.query("SELECT count(*) FROM campaigns")[0][0] == 0
    assert "\n" not in str(info.value) and "nothing was imported" in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ([{"wc": 32, "wr": 4}, {"other": 1}, {"wc": 1, "wr": 1}], "result 1 sets the parameters"),
        ([{"wc": 32, "wr": 4}, {"wc": 1}], "result 1 sets the parameters ['wc']"),
        ([{"wc": 32}, {"wc": 1, "wr": 2}], "every result must set the same parameters"),
        ([{}, {"wc": 1, "wr": 1}], "result 0 has an empty configuration"),
        ([{"wc": 1, "wr": 1}, {}], "result 1 has an empty configuration"),
    ],
)
def test_results_that_set_different_parameters_are_refused(tmp_path, db, configs, message):
    """They imported, and replay and the kt-cache export then failed with a KeyError."""
    assert message in _refused(tmp_path, db, _t4(configs))


@pytest.mark.parametrize(
    ("unit", "runtimes", "message"),
    [
        ("seconds", (1e306,), "result 0 runtimes hold 1e+306 seconds, not a finite time in ms"),
        ("microseconds", (5e-324,), "result 0 runtimes hold 5e-324 microseconds"),
    ],
)
def test_times_are_checked_again_in_ms(tmp_path, db, unit, runtimes, message):
    """1e306 s was stored as inf ms, which replay could not use and the exports wrote as
    Infinity; 5e-324 us became 0 ms."""
    assert message in _refused(tmp_path, db, _t4([{"wc": 1}], unit, runtimes))


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"times": {"runtimes": [1.0, 0.0]}}, "result 0 runtimes holds '0.0'"),
        (
            {"times": {"runtimes": []}, "measurements": [{"name": "time", "value": 0}]},
            "result 0 'time' measurement holds '0'",
        ),
    ],
)
def test_a_time_of_zero_is_refused(tmp_path, db, result, message):
    data = {"schema_version": "1.0.0", "results": [{"configuration": {"wc": 1}, **result}]}
    refused = _refused(tmp_path, db, data)
    assert message in refused and "not a measurement" in refused


def test_a_parameter_may_take_both_1_and_true(tmp_path, db):
    """Refused as "a configuration appears twice" (True == 1 in Python), and so was perfport's
    own T4 export of such a Kernel Tuner cache; the values list kept 1 alone."""
    path = tmp_path / "t4.json"
    path.write_text(json.dumps(_t4([{"p": 1}, {"p": True}])))
    with Store(db) as store:
        imported = import_file(store, path, device="GPU", kernel="k")
        stored = sorted(row[0] for row in store.query("SELECT key FROM configs"))
    assert imported.params == {"p": [1, True]} and stored == ['{"p":1}', '{"p":true}']
    again = _refused(tmp_path, tmp_path / "other.db", _t4([{"p": True}, {"p": True}]))
    assert "a configuration appears twice" in again


def test_the_exported_time_is_the_median_perfport_ranks_by(tmp_path, db):
    """The export wrote the mean of the runtimes, a warm-up outlier included, so its lowest
    time named another best than 'results' and the kt-cache export (both the median)."""
    from perfport.store import best_results
    from perfport.store.formats.importing import parse
    from perfport.store.formats.t4 import to_t4

    data = _t4([{"wg": 64}, {"wg": 512}])
    data["results"][0]["times"]["runtimes"] = [30.0, 2.0, 2.0, 2.0]  # a slow first launch
    data["results"][1]["times"]["runtimes"] = [3.0, 3.0, 3.0]
    path = tmp_path / "t4.json"
    path.write_text(json.dumps(data))
    with Store(db) as store:
        import_file(store, path, device="GPU", kernel="k")
        (best,) = best_results(store)
        exported = to_t4(store)
    value = {r["configuration"]["wg"]: r["measurements"][0]["value"] for r in exported["results"]}
    assert value == {64: 2.0, 512: 3.0} and dict(best.best) == {"wg": 64}
    again = parse(tmp_path / "t4.json", device="GPU", kernel="k")
    path.write_text(json.dumps(exported))  # perfport's own export imports back as it was
    assert parse(path, device="GPU", kernel="k").measurements == again.measurements
