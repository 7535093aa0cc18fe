"""Configurations shipped to every GPU, on synthetic Kernel Tuner caches whose answer is known."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from select_cli import perfport

from perfport.select.across_devices import Method, portable
from perfport.select.across_devices_holdout import leave_one_out, loo_markdown
from perfport.select.device_caches import load_caches
from perfport.select.errors import SelectError

PARAMS = ("tile", "wg")
CONFIGS = [(t, w) for t in (1, 2, 4, 8) for w in (32, 64, 128)]
A, B, C = (1, 64), (8, 128), (4, 32)  # family X's best, family Y's best, a compromise


def write_cache(
    path: Path, device: str | None, times: dict[tuple[int, int], float | str], **extra: Any
) -> Path:
    """A Kernel Tuner cache (gzipped when the name ends in .gz) of the given times."""
    cache = {
        "tune_params_keys": list(PARAMS),
        "tune_params": {"tile": [1, 2, 4, 8], "wg": [32, 64, 128]},
        "cache": {
            ",".join(map(str, c)): {"tile": c[0], "wg": c[1], "time": t} for c, t in times.items()
        },
        **extra,
    }
    if device is not None:
        cache["device_name"] = device
    text = json.dumps(cache).encode()
    path.write_bytes(gzip.compress(text) if path.name.endswith(".gz") else text)
    return path


def family_times(best: tuple[int, int], other: tuple[int, int], seed: int) -> dict:
    """``best`` at 1 ms, ``other`` 3x slower, the compromise C at 1/0.6 ms, the rest 2-10x."""
    rng = np.random.default_rng(seed)
    times = {c: float(rng.uniform(2.0, 10.0)) for c in CONFIGS}
    times[best], times[other], times[C] = 1.0, 3.0, 1 / 0.6
    return times


@pytest.fixture
def families(tmp_path: Path) -> list[Path]:
    """Four GPUs of family X (A best) and two of family Y (B best)."""
    xs = [write_cache(tmp_path / f"x{i}.json.gz", f"X{i}", family_times(A, B, i)) for i in range(4)]
    ys = [
        write_cache(tmp_path / f"y{i}.json.gz", f"Y{i}", family_times(B, A, 10 + i))
        for i in range(2)
    ]
    return xs + ys


def configs_of(result) -> set[tuple[int, int]]:
    return {(c["tile"], c["wg"]) for c in result.configs}


def test_greedy_geomean_ships_both_families_where_most_often_best_fails_one(families):
    two = portable(families, 2)
    assert configs_of(two) == {A, B}
    assert two.geomean == pytest.approx(1.0)
    single = portable(families, 1, method=Method.MOST_OFTEN_BEST)
    assert configs_of(single) == {A}  # best on 4 of 6 devices
    assert single.per_device["Y0"] == pytest.approx(1 / 3)
    assert single.per_device["X0"] == pytest.approx(1.0)
    assert portable(families, 2, method="greedy_mean").k == 2


def test_json_contract(families):
    out = portable(families, 3).to_json()
    assert set(out) == {"k", "configs", "per_device", "geomean", "fixed", "holdout"}
    assert out["fixed"] == {} and out["holdout"] is None
    assert out["k"] == 3 and len(out["configs"]) == 3
    assert all(set(c) == set(PARAMS) for c in out["configs"])
    assert set(out["per_device"]) == {"X0", "X1", "X2", "X3", "Y0", "Y1"}
    assert json.loads(json.dumps(out)) == out


def test_holdout_is_left_out_of_the_choice_and_reported(families, tmp_path):
    # A third family, one GPU, whose optimum D is bad everywhere else.
    d = (2, 32)
    times = family_times(A, B, 20)
    times[d] = 0.5
    z = write_cache(tmp_path / "z.json.gz", "Z", times)
    assert d in configs_of(portable([*families, z], 3))
    for holdout in (z, str(z), "Z"):
        files = families if holdout != "Z" else [*families, z]
        held = portable(files, 3, holdout=holdout)
        assert d not in configs_of(held)
        assert held.holdout == "Z" and held.to_json()["holdout"] == "Z"
        assert held.per_device["Z"] == pytest.approx(0.5)  # A at 1 ms vs the optimum's 0.5 ms
        assert len(held.per_device) == 7
        # The geometric mean covers every device reported, the held-out one included.
        expected = np.exp(np.mean(np.log(list(held.per_device.values()))))
        assert held.geomean == pytest.approx(expected)
    # The same file passed twice (in files and as holdout) is one device.
    assert len(portable([*families, z], 2, holdout=z).per_device) == 7


def test_failures_are_never_shipped_and_score_zero_when_held_out(tmp_path):
    good = {c: 2.0 for c in CONFIGS}
    good[A], good[B] = 1.0, 1.05
    failing = dict(good)
    failing[A] = "CompilationFailedConfig"
    one = write_cache(tmp_path / "one.json.gz", "one", good)
    two = write_cache(tmp_path / "two.json.gz", "two", failing)
    assert A not in configs_of(portable([one, two], 1))
    held = portable([one, two], 1, holdout=two)
    assert configs_of(held) == {A}
    assert held.per_device["two"] == 0.0
    assert held.geomean == pytest.approx(np.sqrt(1e-3))  # failures floored at GEOMEAN_FLOOR


def test_saturated_set_is_filled_with_different_configurations(tmp_path):
    times = {c: 5.0 for c in CONFIGS}
    times[(1, 32)], times[(1, 64)], times[(8, 128)] = 1.0, 1 / 0.99, 1 / 0.92
    one = write_cache(tmp_path / "one.json", "one", times)  # plain JSON works too
    assert configs_of(portable([one], 2)) == {(1, 32), (8, 128)}
    assert configs_of(portable([one], 2, method=Method.GREEDY_GEOMEAN)) == {(1, 32), (1, 64)}


def test_device_names_fall_back_to_the_file_and_stay_distinct(tmp_path):
    times = family_times(A, B, 0)
    data = load_caches(
        [
            write_cache(tmp_path / "MI250X.json.gz", "", times),
            write_cache(tmp_path / "a.json.gz", "GPU", times),
            write_cache(tmp_path / "b.json.gz", "GPU", times),
        ]
    )
    assert data.devices == ("MI250X", "GPU (a.json.gz)", "GPU (b.json.gz)")
    assert data.times.shape == (3, len(CONFIGS))


def test_leave_one_out_rows_and_table(families):
    rows = leave_one_out(families, ks=(1, 2), methods=(Method.PORTABLE, Method.MOST_OFTEN_BEST))
    assert len(rows) == 2 * 6 * 2
    by = {(r.method, r.holdout, r.k): r.fraction for r in rows}
    assert by["portable", "Y0", 2] == pytest.approx(1.0)  # Y1 still votes for B
    assert by["most_often_best", "Y0", 1] == pytest.approx(1 / 3)
    table = loo_markdown(rows)
    assert "| portable | Y0 |" in table and "**geomean**" in table
    assert table.count("\n") == 2 + 2 * 7


def test_a_bare_string_where_a_list_goes_is_refused_naming_it(families):
    """A path given alone said '/ is given twice (as /)', and methods='portable' "'p' is not
    a valid Method": each string was taken apart letter by letter."""
    with pytest.raises(SelectError, match=r"^files must be a list, e\.g\. .*not str '"):
        portable(str(families[0]), 1)  # type: ignore[arg-type]
    with pytest.raises(SelectError, match=r"^files must be a list"):
        leave_one_out(str(families[0]))  # type: ignore[arg-type]
    with pytest.raises(SelectError, match=r"^methods must be a list, e\.g\. \['portable'\]"):
        leave_one_out(families, (1,), "portable")


def one_line_error(files, match: str, **kwargs: Any) -> None:
    with pytest.raises(SelectError, match=match) as info:
        portable(files, 1, **kwargs)
    assert "\n" not in str(info.value)


def test_malformed_and_mismatched_files_give_one_line_errors(families, tmp_path):
    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"\x1f\x8bnot really gzip")
    one_line_error([junk], "junk.json.gz: not JSON")
    t4 = tmp_path / "t4.json"
    t4.write_text(json.dumps({"schema_version": "1.0.0", "results": []}))
    one_line_error([t4], "t4.json: not a Kernel Tuner cache")
    other = tmp_path / "other.json"
    entries = {f"{b}": {"bx": b, "time": 1} for b in (1, 2)}
    other.write_text(json.dumps({"tune_params_keys": ["bx"], "cache": entries}))
    one_line_error([families[0], other], "json.gz: parameter '(tile|wg)' varies here")
    truncated = tmp_path / "truncated.json"
    truncated.write_text(json.dumps({"tune_params_keys": ["tile", "wg"], "cache": {"1": {}}}))
    one_line_error([truncated], "truncated.json: cache entry")
    # Crafted files: a dict or nested list as a value, a list as a parameter name, deep JSON.
    base = json.loads(gzip.decompress(families[0].read_bytes()))
    for name, change in {
        "dictval": lambda c: next(iter(c["cache"].values())).update(tile={"x": 1}),
        "nested": lambda c: next(iter(c["cache"].values())).update(tile=[[1, 2]]),
        "listkey": lambda c: c.update(tune_params_keys=[["tile"], "wg"]),
    }.items():
        crafted = json.loads(json.dumps(base))
        change(crafted)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(crafted))
        one_line_error([families[1], path], f"{name}.json: (cache entry|not a Kernel Tuner)")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    one_line_error([deep], "deep.json: not JSON")
    one_line_error([families[0], families[1], families[0]], "given twice")
    failed = write_cache(tmp_path / "failed.json", "f", {A: "RuntimeFailedConfig"})
    one_line_error([failed], "failed.json: no configuration has a valid time")
    one_line_error([tmp_path / "missing.json.gz"], "missing.json.gz: cannot be read")
    one_line_error(families, "holdout nowhere", holdout="nowhere")
    one_line_error(families[:1], "only device", holdout=families[0])
    with pytest.raises(SelectError, match="at least 1"):
        portable(families, 0)
    with pytest.raises(SelectError, match="ship at most that many"):
        portable(families, 10**6)


def test_a_parameter_constant_in_the_files_that_list_it_is_left_out(families, tmp_path):
    """The hub's caches list fixed values (filter size) as parameters; another tool's cache of
    the same space may not: they pool on the parameters that vary."""
    times = family_times(A, B, 3)
    cache = {
        "device_name": "Z",
        "tune_params_keys": ["wg", "tile", "filter"],
        "tune_params": {"tile": [1, 2, 4, 8], "wg": [32, 64, 128], "filter": [15]},
        "cache": {
            f"{w},{t},15": {"tile": t, "wg": w, "filter": 15, "time": v}
            for (t, w), v in times.items()
        },
    }
    extra = tmp_path / "z.json"
    extra.write_text(json.dumps(cache))
    data = load_caches([extra, *families])
    assert data.param_names == ("wg", "tile")
    assert data.devices[0] == "Z"
    assert np.nanmin(data.times[0]) == pytest.approx(1.0)
    result = portable([extra, *families], 2)
    assert configs_of(result) == {A, B}
    assert set(result.configs[0]) == {"tile", "wg"}
    cache["cache"]["8,128,17"] = {"tile": 8, "wg": 128, "filter": 17, "time": 1.0}
    extra.write_text(json.dumps(cache))
    one_line_error([extra, *families], "z.json: parameter 'filter' varies here")


HUB = Path(__file__).resolve().parents[3] / "shared/data/kerneltuner-benchmark_hub"


@pytest.mark.skipif(not (HUB / "convolution_milo").is_dir(), reason="shared data not present")
def test_real_convolution_caches():
    files = [HUB / "convolution_milo" / f"{d}.json.gz" for d in ("A4000", "MI250X")]
    result = portable(files, 2)
    assert set(result.per_device) == {"NVIDIA RTX A4000", "MI250X"}
    assert min(result.per_device.values()) > 0.97  # one configuration is near-best on both


def test_maximin_keeps_the_worst_device_where_the_mean_sacrifices_it(tmp_path):
    """P is best on two devices and at 0.3 on the third (mean 0.77), Q at 0.7 on all three
    (mean 0.7), R best on the third only: greedy on the mean ships P, maximin ships Q."""
    p, q, r = (1, 32), (2, 64), (8, 128)
    files = []
    for d, fractions in enumerate(((1.0, 0.7, 0.1), (1.0, 0.7, 0.1), (0.3, 0.7, 1.0))):
        times = {c: 20.0 for c in CONFIGS}
        times.update({c: 1 / f for c, f in zip((p, q, r), fractions, strict=True)})
        files.append(write_cache(tmp_path / f"d{d}.json", f"D{d}", times))
    mean = portable(files, 1, method=Method.GREEDY_MEAN)
    robust = portable(files, 1, method=Method.MAXIMIN)
    assert configs_of(mean) == {p} and configs_of(robust) == {q}
    assert min(robust.per_device.values()) == pytest.approx(0.7)
    assert min(mean.per_device.values()) == pytest.approx(0.3)
    # Once every device has its optimum, maximin fills like portable.
    assert configs_of(portable(files, 3, method=Method.MAXIMIN)) >= {p, r}


def test_perturbed_covers_other_parameter_values_where_the_mean_takes_a_near_duplicate(
    tmp_path,
):
    """One device: A=(1, 64) best, its neighbour (1, 32) at 0.999, (8, 128) at 0.995 (both
    parameters differ), the rest at 0.2. The second pick of greedy_mean is the neighbour; on
    devices whose parameter preferences shift, (8, 128) wins more often and by more."""
    times = {c: 5.0 for c in CONFIGS}
    times[A], times[(1, 32)], times[(8, 128)] = 1.0, 1 / 0.999, 1 / 0.995
    one = write_cache(tmp_path / "one.json", "one", times)
    assert configs_of(portable([one], 2, method=Method.GREEDY_MEAN)) == {A, (1, 32)}
    # Whichever of the two near-equals comes first, the other parameter values follow (true
    # for 100 of 100 seeds when this was written; seeds 0-9 checked here).
    for seed in range(10):
        assert (8, 128) in configs_of(portable([one], 2, method=Method.PERTURBED, seed=seed))
    # Seeded: the same answer twice.
    assert portable([one], 3, method="perturbed") == portable([one], 3, method="perturbed")


def test_cli_method_names_are_the_methods(families, capsys):
    from perfport.cli import main
    from perfport.cli.select import PORTABLE_METHODS

    assert set(PORTABLE_METHODS) == {m.value for m in Method}
    code = main(["select", "portable", *map(str, families), "--kernels", "2",
                 "--method", "most_often_best", "--json"])  # fmt: skip
    assert code in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert out["k"] == 2 and {"configs", "per_device", "geomean"} <= set(out)


def test_parameters_fixed_everywhere_are_reported_apart_and_must_agree(tmp_path):
    times = family_times(A, B, 3)
    x = write_cache(tmp_path / "x.json", "X", times)
    y = write_cache(tmp_path / "y.json", "Y", times)
    for path, filter_size in ((x, 15), (y, 15)):
        cache = json.loads(path.read_text())
        cache["tune_params_keys"].append("filter")
        for entry in cache["cache"].values():
            entry["filter"] = filter_size
        path.write_text(json.dumps(cache))
    out = portable([x, y], 2).to_json()
    assert out["fixed"] == {"filter": 15} and all(set(c) == set(PARAMS) for c in out["configs"])
    cache = json.loads(y.read_text())
    for entry in cache["cache"].values():
        entry["filter"] = 7
    y.write_text(json.dumps(cache))
    one_line_error([x, y], "'filter' is fixed at 7 here but at 15")
    # Caches of different problem sizes rank configurations for different work.
    small = write_cache(tmp_path / "small.json", "S", times, problem_size=[64, 64])
    large = write_cache(tmp_path / "large.json", "L", times, problem_size=[4096, 4096])
    one_line_error([small, large], "problem size")


def test_a_parameter_of_two_kinds_is_refused_not_pooled(tmp_path):
    # true == 1 in Python: without the check the two caches would pool into one column.
    times = family_times(A, B, 5)
    x = write_cache(tmp_path / "x.json", "X", times)
    y = write_cache(tmp_path / "y.json", "Y", times)
    for path, flag in ((x, 1), (y, True)):
        cache = json.loads(path.read_text())
        cache["tune_params_keys"].append("use_shmem")
        for n, entry in enumerate(cache["cache"].values()):
            entry["use_shmem"] = flag if n % 2 else type(flag)(0)
        path.write_text(json.dumps(cache))
    one_line_error([x, y], "'use_shmem' has boolean values here and number values in")
    # 16 and 16.0 are one number: they pool.
    cache = json.loads(y.read_text())
    for n, entry in enumerate(cache["cache"].values()):
        entry["use_shmem"], entry["wg"] = n % 2, float(entry["wg"])
    y.write_text(json.dumps(cache))
    pooled = load_caches([x, y])
    assert len(pooled.configs) == len(CONFIGS) and np.isfinite(pooled.times).all()
    # Lists are their elements' kinds: [true] and [1] are equal in Python too.
    for path, flag in ((x, [1]), (y, [True])):
        cache = json.loads(path.read_text())
        for entry in cache["cache"].values():
            entry["use_shmem"] = flag
        path.write_text(json.dumps(cache))
    one_line_error([x, y], "list of boolean values here and list of number values")
    # null is no kind: it matches nothing else, so it may sit beside numbers.
    cache = json.loads(y.read_text())
    for n, entry in enumerate(cache["cache"].values()):
        entry["use_shmem"] = None if n % 2 else [1]
    y.write_text(json.dumps(cache))
    assert len(load_caches([x, y]).configs) > len(CONFIGS)


def test_a_parameter_taking_both_1_and_true_keeps_them_apart(tmp_path):
    """Kernel Tuner's own test cache declares ['test', 1, True, 2.45]. The values were a set and
    the configurations dict keys, where True == 1: (True, 32) overwrote (1, 32) or the other
    way, and the slow p=1 was shipped as the best at 100%."""
    configs = [(p, w) for p in (0, 1, False, True) for w in (32, 64)]
    times = [2.0 + i for i in range(len(configs))]
    times[6] = 1.0  # (True, 32), after (1, 32) in the file: the best everywhere

    def cache(path: Path, scale: float, keep: int) -> Path:
        entries = {f"{p},{w}": {"tile": p, "wg": w, "time": t * scale}
                   for (p, w), t in list(zip(configs, times, strict=True))[:keep]}  # fmt: skip
        path.write_text(json.dumps({"tune_params_keys": list(PARAMS), "cache": entries}))
        return path

    x, y = cache(tmp_path / "x.json", 1.0, 8), cache(tmp_path / "y.json", 1.5, 8)
    data = load_caches([x, y])
    assert len(data.configs) == len(configs) and np.isfinite(data.times).all()
    assert [type(c[0]) for c in data.configs[:4]] == [int, int, bool, bool]  # 0, 0, False, False
    out = portable([x, y], 1).to_json()
    assert json.dumps(out["configs"]) == '[{"tile": true, "wg": 32}]'
    # A cache with both kinds pools with one that has numbers only: they share a kind.
    numbers = cache(tmp_path / "z.json", 1.0, 4)
    assert len(load_caches([x, numbers]).configs) == len(configs)


def test_same_device_and_file_name_in_two_folders_stay_two_devices(tmp_path):
    times = family_times(A, B, 4)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    data = load_caches([write_cache(tmp_path / d / "gpu.json", "GPU", times) for d in ("a", "b")])
    assert len(set(data.devices)) == 2


def test_cli_says_when_fewer_than_k_ran_everywhere(tmp_path, capsys):
    ran = {c: 1.0 + i for i, c in enumerate(CONFIGS)}
    failed = {c: t if i < 3 else "RuntimeFailedConfig" for i, (c, t) in enumerate(ran.items())}
    files = [
        write_cache(tmp_path / "P.json", "P", ran),
        write_cache(tmp_path / "Q.json", "Q", failed),
    ]
    done = perfport(["select", "portable", *map(str, files), "--kernels", "5", "--json"], capsys)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["k"] == 3 and "only 3 configurations" in done.stderr


def crafted(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(text)
    return path


def test_crafted_values_keys_and_sizes_give_one_line_errors(families, tmp_path):
    """Every entry is checked for every parameter the cache tunes, not only the pooled ones."""
    good = json.loads(gzip.decompress(families[0].read_bytes()))
    plain = json.dumps(good)
    first = next(iter(good["cache"]))
    cases = {
        # NaN matches no other cache's configuration and cannot go back out as JSON.
        "nan": (plain.replace('"tile": 1,', '"tile": NaN,', 1), "'tile' = NaN, not a finite"),
        "inf": (plain.replace('"wg": 32,', '"wg": -Infinity,', 1), "'wg' = -Infinity"),
        "dupkeys": (json.dumps({**good, "tune_params_keys": ["tile", "wg", "tile"]}), "distinct"),
        "nokeys": (json.dumps({**good, "tune_params_keys": []}), "not a Kernel Tuner cache"),
        "empty": (json.dumps({**good, "cache": {}}), "holds no configurations"),
        "deepsize": (json.dumps({**good, "problem_size": [[[64]]]}), "flat 'problem_size'"),
        "notdict": (json.dumps({**good, "cache": {first: [1]}}), "is a list, not an object"),
        "longkey": (json.dumps({**good, "cache": {"k" * 100_000: {"tile": 1}}}), "kkk\\.\\.\\."),
    }
    for name, (text, match) in cases.items():
        one_line_error([families[1], crafted(tmp_path, name, text)], f"{name}.json: .*{match}")
    # The clipped key keeps the message short.
    with pytest.raises(SelectError) as info:
        portable([tmp_path / "longkey.json"], 1)
    assert len(str(info.value)) < 300


def test_a_fixed_parameter_is_checked_in_every_entry(families, tmp_path):
    """A parameter with one value is not pooled, but a dict there, or an entry without it, still
    means the file is not a Kernel Tuner cache."""
    base = json.loads(gzip.decompress(families[0].read_bytes()))
    base["tune_params_keys"].append("filter")
    for entry in base["cache"].values():
        entry["filter"] = 15
    for name, broken in (("dictfix", {"x": 1}), ("lacking", None)):
        cache = json.loads(json.dumps(base))
        entry = next(iter(cache["cache"].values()))
        if broken is None:
            del entry["filter"]
        else:
            entry["filter"] = broken
        path = crafted(tmp_path, name, json.dumps(cache))
        one_line_error([families[1], path], f"{name}.json: cache entry .*'filter'")


def test_huge_integers_neither_crash_nor_pass_for_times(tmp_path):  # nor a zero time
    times = {c: 1.0 + i for i, c in enumerate(CONFIGS)}
    text = json.dumps(json.loads(write_cache(tmp_path / "p.json", "P", times).read_text()))
    # A 400-digit tile value is a (strange) configuration; a 400-digit time is no time.
    big = "1" + "0" * 400
    odd = crafted(tmp_path, "odd", text.replace('"tile": 8,', f'"tile": {big},', 1))
    result = portable([odd], len(CONFIGS))
    assert result.k == len(CONFIGS)
    slow = crafted(tmp_path, "slow", text.replace('"time": 1.0', f'"time": {big}', 1))
    one_line_error([slow], "entry 1,32: holds '1000.*not a time in ms; fix or drop that entry")
    # A time of 0 is no measurement either: kept as a failure, it dropped the true best.
    zero = crafted(tmp_path, "zero", text.replace('"time": 1.0', '"time": 0', 1))
    one_line_error([zero], "entry 1,32: .*fix or drop that entry")


def test_a_hard_link_is_the_same_file(families, tmp_path):
    link = tmp_path / "link.json.gz"
    link.hardlink_to(families[0])
    one_line_error([families[0], link], "link.json.gz is given twice")
    symlink = tmp_path / "sym.json.gz"
    symlink.symlink_to(families[1])
    one_line_error([families[1], symlink], "sym.json.gz is given twice")


def test_device_names_stay_distinct_even_when_a_name_reads_like_a_label(tmp_path):
    times = family_times(A, B, 5)
    files = [
        write_cache(tmp_path / "a.json", "GPU", times),
        write_cache(tmp_path / "b.json", "GPU", times),
        write_cache(tmp_path / "c.json", "GPU (a.json)", times),
    ]
    data = load_caches(files)
    assert len(set(data.devices)) == 3
    assert len(portable(files, 1).per_device) == 3


def fixed_cache(
    path: Path, device: str, size: list[int], fixed: dict[str, int], seed: int = 0
) -> Path:
    """A cache of ``family_times`` on ``size`` whose every entry also carries ``fixed``."""
    write_cache(path, device, family_times(A, B, seed), problem_size=size)
    cache = json.loads(path.read_text())
    cache["tune_params_keys"] += list(fixed)
    for entry in cache["cache"].values():
        entry.update(fixed)
    path.write_text(json.dumps(cache))
    return path


def test_extra_problem_values_must_be_the_other_caches_fixed_parameters(tmp_path):
    """Kernel Tuner's convolution keeps the filter as parameters fixed at 15 (size [64, 64]);
    perfport's export lists it in the size instead ([15, 15, 64, 64]). A 7x7 export must not
    pass for it because 64 and 64 are among its values."""
    hub = fixed_cache(tmp_path / "hub.json", "H", [64, 64], {"fw": 15, "fh": 15})
    ours = write_cache(
        tmp_path / "ours.json", "O", family_times(A, B, 1), problem_size=[15, 15, 64, 64]
    )
    assert load_caches([hub, ours]).fixed == {"fw": 15, "fh": 15}
    seven = write_cache(
        tmp_path / "seven.json", "S", family_times(A, B, 2), problem_size=[7, 7, 64, 64]
    )
    one_line_error(
        [hub, seven],
        r"seven.json .*\[7, 7, 64, 64\], .*hub.json on \[64, 64\] \(with fw=15, fh=15 fixed\)",
    )
    bare = write_cache(tmp_path / "bare.json", "B", family_times(A, B, 3), problem_size=[64, 64])
    one_line_error([bare, ours], r"problem size")  # nothing in bare says its filter is 15
    small = write_cache(
        tmp_path / "small.json", "S", family_times(A, B, 4), problem_size=[3, 3, 64, 64]
    )
    one_line_error([ours, small], r"small.json was tuned on problem size \[3, 3, 64, 64\]")


def perfport_export(path: Path, device: str, filter_size: int, seed: int, size=None) -> Path:
    """A cache as perfport's export writes it today: the global size's values in problem_size
    ([64, 64]), the whole problem (the filter too) in "perfport"."""
    problem = {"fh": filter_size, "fw": filter_size, "h": 64, "w": 64}
    return write_cache(path, device, family_times(A, B, seed),
                       problem_size=size or [64, 64], perfport={"problem": problem})  # fmt: skip


def test_perfport_exports_compare_their_whole_problem(tmp_path):
    """Exports of a 15x15 and a 7x7 filter on one image share problem_size [64, 64]: the
    problem they record tells them apart, from each other and from the hub's fixed filter."""
    ours = perfport_export(tmp_path / "ours.json", "O", 15, 1)
    seven = perfport_export(tmp_path / "seven.json", "S", 7, 2)
    one_line_error(
        [ours, seven], r"seven.json was tuned on fh=7, fw=7, .*ours.json on fh=15, fw=15;"
    )
    assert (
        len(load_caches([ours, perfport_export(tmp_path / "again.json", "A", 15, 3)]).devices) == 2
    )
    hub = fixed_cache(tmp_path / "hub.json", "H", [64, 64], {"fw": 15, "fh": 15})
    assert load_caches([hub, ours]).fixed == {"fw": 15, "fh": 15}
    one_line_error([hub, seven], r"seven.json .*fh=7, fw=7, .*hub.json on fh=15, fw=15 \(fixed")
    # An earlier export listed the filter in its size: the same problem as today's 15x15.
    earlier = write_cache(
        tmp_path / "earlier.json", "E", family_times(A, B, 4), problem_size=[15, 15, 64, 64]
    )
    assert len(load_caches([earlier, ours]).devices) == 2
    one_line_error([earlier, seven], r"problem size")


def test_an_export_lacking_a_problem_value_added_since_still_pools(tmp_path):
    """An export made before a problem value existed (the stencil's out_dtype) lacks it: not
    a difference; a value both record still must agree."""
    ours = perfport_export(tmp_path / "ours.json", "O", 15, 1)
    data = json.loads(ours.read_text())
    data["perfport"]["problem"]["out_dtype"] = "same"
    ours.write_text(json.dumps(data))
    older = perfport_export(tmp_path / "older.json", "E", 15, 2)
    assert len(load_caches([ours, older]).devices) == 2
    one_line_error([ours, perfport_export(tmp_path / "seven.json", "S", 7, 3)], r"fh=7, fw=7")


def test_problem_sizes_are_compared_pairwise(tmp_path):
    """Each of [15, 64, 64] and [7, 64, 64] fits a cache fixing f = 15 and g = 7, but not each
    other: comparing every file with the first only would pool them."""
    hub = fixed_cache(tmp_path / "hub.json", "H", [64, 64], {"f": 15, "g": 7})
    f15 = write_cache(tmp_path / "f15.json", "F", family_times(A, B, 1), problem_size=[15, 64, 64])
    g7 = write_cache(tmp_path / "g7.json", "G", family_times(A, B, 2), problem_size=[7, 64, 64])
    assert len(load_caches([hub, f15]).devices) == len(load_caches([hub, g7]).devices) == 2
    one_line_error([hub, f15, g7], r"g7.json .*\[7, 64, 64\], .*f15.json on \[15, 64, 64\]")


def test_a_fixed_parameter_differing_is_refused_even_if_a_third_cache_lacks_it(tmp_path):
    x = fixed_cache(tmp_path / "x.json", "X", [64, 64], {"filter_width": 15})
    y = fixed_cache(tmp_path / "y.json", "Y", [64, 64], {"filter_width": 7}, seed=1)
    z = write_cache(tmp_path / "z.json", "Z", family_times(B, A, 2))
    for files in ([z, x, y], [x, z, y]):
        one_line_error(files, "y.json: parameter 'filter_width' is fixed at 7 here but at 15 in")


def test_a_parameter_of_another_kernel_names_the_file_that_lacks_it(families, tmp_path):
    other = tmp_path / "other.json"
    entries = {f"{b}": {"bx": b, "time": 1} for b in (1, 2)}
    other.write_text(json.dumps({"tune_params_keys": ["bx"], "cache": entries}))
    one_line_error(
        [families[0], other],
        "x0.json.gz: parameter 'tile' varies here but .*other.json does not tune it",
    )


def test_cli_text_mode_notice_and_fixed_parameters(tmp_path, capsys):
    from perfport.cli import main

    ran = {c: 1.0 + i for i, c in enumerate(CONFIGS)}
    failed = {c: t if i < 1 else "RuntimeFailedConfig" for i, (c, t) in enumerate(ran.items())}
    p = fixed_cache(tmp_path / "P.json", "P", [64, 64], {"filter": 15})
    q = write_cache(tmp_path / "Q.json", "Q", failed)
    assert main(["select", "portable", str(p), str(q), "--kernels", "4"]) in (0, None)
    out, err = capsys.readouterr()
    assert (
        err
        == "perfport: only 1 configuration ran on every training device; shipping those, not 4\n"
    )
    assert (
        out.startswith("1 configuration for every device")
        and "fixed in every cache: filter=15" in out
    )
    assert main(["select", "portable", str(p), str(q), "--kernels", "4", "--json"]) in (0, None)
    out, err = capsys.readouterr()
    assert json.loads(out)["k"] == 1 and json.loads(out)["fixed"] == {"filter": 15}
    assert err.count("\n") == 1  # the notice; stdout holds the JSON alone


@pytest.mark.skipif(not (HUB / "convolution_milo").is_dir(), reason="shared data not present")
def test_hub_convolution_set_holds_only_the_tuning_decisions():
    """The set chosen from the hub's caches alone feeds ``perfport tune convolution2d
    --configs``: its configurations name exactly convolution2d's parameters."""
    files = [HUB / "convolution_milo" / f"{d}.json.gz" for d in ("A100", "A4000", "MI250X")]
    out = portable(files, 8).to_json()
    assert out["fixed"] == {"use_cmem": 1, "filter_height": 15, "filter_width": 15}
    names = {"block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only",
             "use_padding", "use_shmem"}  # fmt: skip
    assert out["k"] == 8 and all(set(c) == names for c in out["configs"])
    h100 = Path(__file__).resolve().parents[2] / "data/convolution2d/h100-cuda.json.gz"
    assert len(portable([*files, h100], 2).per_device) == 4  # [15, 15, 4096, 4096] pools
