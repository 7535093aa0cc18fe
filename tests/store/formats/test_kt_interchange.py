"""Kernel Tuner interchange that round-trips: what Kernel Tuner checks when it loads a cache
(its simulation mode), and caches its interrupted runs leave open-ended.

Facts about Kernel Tuner 1.5 (kernel_tuner/util.py) these tests rely on, checked against its
source: a cache loads only if ``kernel_name`` equals the kernel function's name,
``problem_size`` equals the one passed (as arrays: an int and a one-element list both match
an int), and ``tune_params_keys`` equals ``list(tune_params)`` in order; each cache key is the
values joined by commas in that order; the best is the entry with the lowest float ``time``.
Its cache file is written header-first, ending in ``"cache": {``, then one entry per line
followed by a comma; the closing braces come only when a run ends, and reading a file without
them closes it (a trailing comma dropped, then ``}\\n}``). A run given a closed cache
(stripped, ending in ``}\\n}`` or ``}}}``) cuts its last three characters, adds a comma,
appends ``"\\n" + json.dumps({key: entry})[1:-1] + ","`` per new entry, and at its end
replaces the last comma with ``}\\n}``.
"""

import gzip
import json
import subprocess
import sys

import pytest

from perfport import Config, Measurement, Outcome, Problem
from perfport._core import ArrayArg, KernelSpec, Param, ParamKind, StoreError
from perfport.store import CampaignStatus, Store, best_results
from perfport.store.formats.imported import external_device
from perfport.store.formats.importing import import_file, parse, store_imported
from perfport.store.formats.kt_cache import kt_cache_text, problem_size, to_kt_cache
from perfport.store.formats.untrusted import read_json

SOURCE = "__kernel void stencil_step(__global float* x) { x[get_global_id(0)] += 1.0f; }"


def _spec():
    # Declared out of alphabetical order on purpose: the export must keep this order.
    return KernelSpec(
        name="my-stencil",
        source=SOURCE,
        entry="stencil_step",
        params=(
            Param("tile", (1, 2), ParamKind.COMPILE),
            Param("block_size_x", (16, 32), ParamKind.LAUNCH),
        ),
        global_size=("nx / tile", "ny"),
        local_size=("block_size_x", "1"),
        args=(ArrayArg("x", "float", ("nx * ny",), output=True),),
        problem=Problem.of(ny=64, nx=256),
    )


# Per configuration: times whose mean and median name different bests.
TIMES = {
    (1, 16): (3.0, 3.0, 3.0),
    (1, 32): (1.0, 1.0, 9.0),  # best median (1.0), worst mean
    (2, 16): (2.0, 2.0, 2.0),  # best mean (2.0)
}


def _store(store, nx=256, **extra):
    spec = _spec()
    problem = spec.problem.merged({"nx": nx, **extra})
    ids = (store.device_id(external_device("Test GPU")), store.kernel_id(spec),
           store.problem_id(problem))  # fmt: skip
    from perfport.space import PruningReport

    campaign = store.open_campaign(
        f"c{nx}{extra}", ids, "brute_force", 0, {}, PruningReport(4, 4, ())
    )
    ms = [Measurement(Config.of(tile=t, block_size_x=b), Outcome.OK, times_ms=times)
          for (t, b), times in TIMES.items()]  # fmt: skip
    ms.append(Measurement(Config.of(tile=2, block_size_x=32), Outcome.COMPILE_ERROR, "no"))
    store.record_many(campaign, ms)
    store.set_status(campaign, CampaignStatus.COMPLETE)


def _kt_best(cache):
    """Kernel Tuner's choice: the lowest float time; failures are strings."""
    timed = {k: e["time"] for k, e in cache["cache"].items() if isinstance(e["time"], float)}
    return min(timed, key=timed.__getitem__)


def test_export_is_what_kernel_tuner_writes(db):
    with Store(db) as store:
        _store(store)
        cache = to_kt_cache(store)
        (best,) = best_results(store)
    assert cache["kernel_name"] == "stencil_step"  # the entry function, not the spec's name
    assert cache["problem_size"] == [256, 64]  # the global size's dimensions, in order
    assert cache["tune_params_keys"] == ["tile", "block_size_x"]  # declared order
    assert list(cache["tune_params"]) == ["tile", "block_size_x"]
    assert set(cache["cache"]) == {"1,16", "1,32", "2,16", "2,32"}
    assert cache["cache"]["1,32"]["times"] == [1.0, 1.0, 9.0]
    assert cache["cache"]["2,32"]["time"] == "CompilationFailedConfig"
    assert "median" in cache["perfport"]["time"]
    # Kernel Tuner's best (lowest "time") is perfport's best (lowest median).
    assert _kt_best(cache) == "1,32"
    assert dict(best.best) == {"tile": 1, "block_size_x": 32}


def _kernel_tuner_adds(text, entries):
    """What a Kernel Tuner run given this closed cache leaves in the file (module docstring)."""
    text = text.strip()
    assert text[-3:] in ("}\n}", "}}}"), "Kernel Tuner would take the file as left open"
    text = text[:-3] + ","
    for key, entry in entries.items():
        text += "\n" + json.dumps({key: entry})[1:-1] + ","
    return text[:-1] + "}\n}"


def test_kernel_tuner_can_add_to_an_exported_cache(db):
    """An export ending in }}} lost its last entry's brace when Kernel Tuner added to it, and
    neither tool could read the file again."""
    with Store(db) as store:
        _store(store)
        cache = to_kt_cache(store)
    text = kt_cache_text(cache)
    assert json.loads(text) == cache
    new = {"1,64": {"tile": 1, "block_size_x": 64, "time": 0.5, "times": [0.5]}}
    grown = json.loads(_kernel_tuner_adds(text, new))
    assert grown["cache"] == {**cache["cache"], **new}
    assert (
        json.loads(_kernel_tuner_adds(text, {}))["cache"] == cache["cache"]
    )  # a run that adds nothing


def test_a_square_kernels_problem_size_names_each_dimension():
    """Kernel Tuner's matmul passes (n, n); the export wrote n once, which it refuses."""
    spec = {"global_size": ["n / tile", "ceil_div(n, 4) * 4", "1"]}
    assert problem_size(spec, Problem.of(n=128)) == [128, 128]
    assert problem_size({"global_size": ["nx * 2", "ny"]}, Problem.of(nx=8, ny=4)) == [8, 4]
    assert problem_size({"global_size": ["n"]}, Problem.of(n=8)) == 8


def test_export_parse_names_the_same_best(db, tmp_path):
    path = tmp_path / "exported.json"
    with Store(db) as store:
        _store(store)
        path.write_text(json.dumps(to_kt_cache(store)))
    again = parse(path, device=None, kernel=None)
    # By the spec's name, as the store knew it (a prior finds its relatives by that name); the
    # file's kernel_name is the entry function, for Kernel Tuner.
    assert again.kernel == "my-stencil" and again.device == "Test GPU"
    assert len(again.measurements) == 4 and again.failed == 1
    back = tmp_path / "back.db"
    with Store(back) as store:
        import_file(store, path)
        (best,) = best_results(store)
    assert dict(best.best) == {"tile": 1, "block_size_x": 32}


def test_export_one_of_several_problems(db, tmp_path):
    with Store(db) as store:
        _store(store, nx=256)
        _store(store, nx=512)
        with pytest.raises(StoreError, match="--problem"):
            to_kt_cache(store, problem={})
        cache = to_kt_cache(store, problem={"nx": "512"})
        with pytest.raises(StoreError, match="no results match"):
            to_kt_cache(store, problem={"nx": 7})
        # A --device or --kernel the store does not have: its names, to pick from.
        with pytest.raises(StoreError, match=r"no --device 'A100' .*it has: Test GPU"):
            to_kt_cache(store, device="A100", problem={"nx": "512"})
        with pytest.raises(StoreError, match=r"no --kernel 'conv' .*it has: my-stencil"):
            to_kt_cache(store, kernel="conv", problem={"nx": "512"})
        with pytest.raises(StoreError, match=r"no --kernel '%'"):  # not a LIKE wildcard
            to_kt_cache(store, kernel="%", problem={"nx": "512"})
    assert cache["problem_size"] == [512, 64] and len(cache["cache"]) == 4
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "export", "--db", str(db), "--format", "kt-cache",
         "--problem", "nx=256", "-o", str(tmp_path / "o.json")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "o.json").read_text())["problem_size"] == [256, 64]
    assert (tmp_path / "o.json").read_text().endswith("}}\n}")  # as Kernel Tuner closes it
    gz = tmp_path / "o.json.gz"  # was plain JSON under a .gz name
    done = subprocess.run([*done.args[:-1], str(gz)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(gzip.decompress(gz.read_bytes())) == json.loads(
        (tmp_path / "o.json").read_text()
    )


def test_exports_of_problems_of_one_size_import_as_two_problems(db, tmp_path):
    """problem_size holds only the values the global size is made of: exports of two problems
    that differ elsewhere (a matmul's K) were imported as one problem, and results and replay
    mixed their timings."""
    paths = [tmp_path / "s1.json", tmp_path / "s2.json"]
    with Store(db) as store:
        for steps, path in zip((1, 2), paths, strict=True):
            _store(store, steps=steps)
            path.write_text(kt_cache_text(to_kt_cache(store, problem={"steps": steps})))
    assert [json.loads(p.read_text())["problem_size"] for p in paths] == [[256, 64]] * 2
    back = tmp_path / "back.db"
    with Store(back) as store:
        for path in [*paths, *paths]:  # again: nothing added
            import_file(store, path)
        problems = sorted(dict(r.problem)["steps"] for r in best_results(store))
        assert problems == [1, 2]
        assert store.query("SELECT count(*) FROM campaigns")[0][0] == 2
        # Grown by a Kernel Tuner run, the export keeps its problem: only the new entry is added.
        text = paths[0].read_text()
        new = {"1,64": {"tile": 1, "block_size_x": 64, "time": 0.5, "times": [0.5]}}
        paths[0].write_text(_kernel_tuner_adds(text, new))
        assert store_imported(store, parse(paths[0], None, None), paths[0]) == 1
        assert len(best_results(store)) == 2
    with Store(back) as store:  # a cache without perfport's block: by its problem_size
        plain_cache = json.loads(paths[1].read_text())
        del plain_cache["perfport"]
        (tmp_path / "kt.json").write_text(json.dumps(plain_cache))
        imported = import_file(store, tmp_path / "kt.json")
    assert dict(imported.problem) == {"problem_size": "256x64"}
    plain_cache["perfport"] = {"problem": {"nx": [256]}}  # edited by hand: refused, one line
    (tmp_path / "bad.json").write_text(json.dumps(plain_cache))
    with pytest.raises(StoreError, match=r"perfport.problem nx .* not a plain value"):
        parse(tmp_path / "bad.json", None, None)


def test_an_export_imported_by_an_earlier_release_is_not_imported_again(db, tmp_path):
    """Releases before the whole problem was read stored a perfport export under its
    problem_size alone: importing the same file after the upgrade stored it a second time,
    under the whole problem (review)."""
    import dataclasses

    path = tmp_path / "s1.json"
    with Store(db) as store:
        _store(store, steps=1)
        path.write_text(kt_cache_text(to_kt_cache(store, problem={"steps": 1})))
    back = tmp_path / "back.db"
    with Store(back) as store:
        parsed = parse(path, None, None)
        assert parsed.earlier_problem is not None
        as_before = dataclasses.replace(
            parsed, problem=parsed.earlier_problem, earlier_problem=None
        )
        assert store_imported(store, as_before, path) > 0  # what the earlier release did
        assert store_imported(store, parse(path, None, None), path) == 0
        assert store.query("SELECT count(*) FROM campaigns")[0][0] == 1


def _open_ended(entries, trailing=",\n", declared=None):
    """A cache as Kernel Tuner leaves it when its run is killed (see the module docstring)."""
    header = {"device_name": "Test GPU", "kernel_name": "vector_add", "problem_size": 4096,
              "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": declared or entries},
              "objective": "time", "cache": {}}  # fmt: skip
    text = json.dumps(header, indent="")[:-3]
    for b in entries:
        record = {"block_size_x": b, "time": b / 100, "times": [b / 100] * 3}
        text += "\n" + json.dumps({str(b): record})[1:-1] + ","
    return text.rstrip(",") + trailing if entries else text + trailing


@pytest.mark.parametrize("trailing", [",", ",\n", "\n", ""])
@pytest.mark.parametrize("entries", [[32], [32, 64, 128, 256, 512]])
def test_open_ended_cache_imports_with_the_exact_count(db, tmp_path, entries, trailing):
    path = tmp_path / "interrupted.json"
    path.write_text(_open_ended(entries, trailing))
    with pytest.raises(StoreError, match="not JSON"):
        read_json(path, "a cache")  # it really is open-ended
    with Store(db) as store:
        imported = import_file(store, path)
        assert len(imported.measurements) == len(entries)
        assert store.query("SELECT count(*) FROM results")[0][0] == len(entries)


@pytest.mark.parametrize("trailing", [",\n", ""])
def test_an_open_ended_cache_without_entries_is_nothing_to_import(db, tmp_path, trailing):
    path = tmp_path / "interrupted.json"
    path.write_text(_open_ended([], trailing))
    with Store(db) as store, pytest.raises(StoreError, match="holds no results, so there is no"):
        import_file(store, path)


def test_a_cache_cut_inside_an_entry_is_still_refused(db, tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(_open_ended([32, 64])[:-12])
    with Store(db) as store, pytest.raises(StoreError, match="not JSON"):
        import_file(store, path)


def test_one_cache_under_two_device_names(db, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(_open_ended([32, 64]))
    with Store(db) as store:
        import_file(store, path, device="GPU A")
        import_file(store, path, device="GPU B")
        import_file(store, path, device="GPU A")  # again: nothing new
        assert store.query("SELECT count(*) FROM campaigns")[0][0] == 2
        assert store.query("SELECT count(*) FROM results")[0][0] == 4
        assert {r.device for r in best_results(store)} == {"GPU A", "GPU B"}


def test_a_store_from_before_the_device_was_in_the_key_adds_nothing(db, tmp_path):
    import hashlib
    import sqlite3

    path = tmp_path / "c.json"
    path.write_text(_open_ended([32, 64]))
    with Store(db) as store:
        import_file(store, path)
    legacy = "import-kt-cache-" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    with sqlite3.connect(db) as conn:  # the key such a store holds
        conn.execute("UPDATE campaigns SET key = ?", (legacy,))
    with Store(db) as store:
        import_file(store, path)
        assert [tuple(r) for r in store.query("SELECT key FROM campaigns")] == [(legacy,)]
        assert store.query("SELECT count(*) FROM results")[0][0] == 2


def test_a_grown_cache_adds_only_its_new_entries(db, tmp_path):
    """A Kernel Tuner cache imported again after its run went on: its old entries were
    stored again in a campaign of their own, and the count said all of them were new."""
    path = tmp_path / "growing.json"
    declared = [32, 64, 128, 256, 512]
    path.write_text(_open_ended([32, 64], declared=declared))
    with Store(db) as store:
        assert store_imported(store, parse(path, None, None), path) == 2
        path.write_text(_open_ended(declared))
        assert store_imported(store, parse(path, None, None), path) == 3
        assert store_imported(store, parse(path, None, None), path) == 0
        assert store.query("SELECT count(*) FROM results")[0][0] == 5
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "import", str(path), "--db", str(db)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0 and "nothing added" in done.stdout, done.stderr


def _sized(size):
    return {"device_name": "GPU", "kernel_name": "k", "problem_size": size,
            "tune_params_keys": ["bx"], "tune_params": {"bx": [16, 32]},
            "cache": {"16": {"bx": 16, "time": 1.0, "times": [1.0]},
                      "32": {"bx": 32, "time": 2.0, "times": [2.0]}}}  # fmt: skip


@pytest.mark.parametrize(
    "size", [[4096], 4096, [1.5, 2], [-1, 8], "4096x4096", [1024, 1024], "matrix", None, [1e20]]
)
def test_an_imported_caches_problem_size_exports_as_written(db, tmp_path, size):
    """The export read the size back from its "x"-joined problem value: [4096] came back as
    4096 (select portable then refused to pool the export with [4096] caches), [1.5, 2] as
    ["1.5", 2], "matrix" as ["matri", ""] and null as []."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_sized(size)))
    with Store(db) as store:
        import_file(store, path)
        exported = to_kt_cache(store)
    assert json.dumps(exported["problem_size"]) == json.dumps(size)
    again = tmp_path / "again.json"  # and so does the export's own import
    again.write_text(kt_cache_text(exported))
    with Store(tmp_path / "again.db") as store:
        import_file(store, again)
        assert json.dumps(to_kt_cache(store)["problem_size"]) == json.dumps(size)


def test_an_import_stored_before_its_size_was_kept_is_found_again(db, tmp_path):
    """Keeping the size as written changed no campaign key: a store imported by earlier
    releases (this key is theirs) adds nothing on a re-import, and its export reads the size
    back from the problem value as well as that can be done."""
    import sqlite3

    path = tmp_path / "c.json"
    path.write_text(json.dumps(_sized([1024, 1024])))
    with Store(db) as store:
        import_file(store, path)
    with sqlite3.connect(db) as conn:  # such a store's settings do not keep the size
        conn.execute("UPDATE campaigns SET settings = json_remove(settings, '$.problem_size')")
    with Store(db) as store:
        assert store_imported(store, parse(path, None, None), path) == 0
        keys = [tuple(r) for r in store.query("SELECT key FROM campaigns")]
        assert keys == [("import-kt-cache-bd4c296754e27667",)]
        assert to_kt_cache(store)["problem_size"] == [1024, 1024]
    for stored, back in [("1.5x2", [1.5, 2]), ("-1x8", [-1, 8]), ("4096", [4096]),
                         (4096, 4096), ("matrix", "matrix"), ("1e+20", [1e20])]:  # fmt: skip
        assert problem_size({}, Problem.of(problem_size=stored)) == back


@pytest.mark.parametrize("kernel", [None, "convolution2d"])
def test_an_imported_caches_kernel_name_exports_as_written(db, tmp_path, kernel):
    """A cache imported under another name (``--kernel-name convolution2d``, to pool it with
    the built-in) exported that name as its kernel_name, which Kernel Tuner then refused to
    load for its convolution_kernel: the export writes back the file's own kernel_name."""
    cache = {**_sized(4096), "kernel_name": "convolution_kernel"}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cache))
    with Store(db) as store:
        assert import_file(store, path, kernel=kernel).kernel == (kernel or "convolution_kernel")
        exported = to_kt_cache(store)
    assert exported["kernel_name"] == "convolution_kernel"
    assert exported["perfport"]["spec_name"] == (kernel or "convolution_kernel")
    again = tmp_path / "again.json"  # the export's own import keeps both names
    again.write_text(kt_cache_text(exported))
    with Store(tmp_path / "again.db") as store:
        assert import_file(store, again).kernel == (kernel or "convolution_kernel")
        assert to_kt_cache(store)["kernel_name"] == "convolution_kernel"
