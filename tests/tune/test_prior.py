"""The prior from other devices' results: built from the store, handed to the strategy by
tune and replay."""

import dataclasses
import itertools
import json

import numpy as np

from perfport import (
    ArrayArg,
    KernelSpec,
    Measurement,
    Outcome,
    Param,
    ParamKind,
    RunSettings,
    ScalarArg,
    Timing,
    builtin,
    tune,
)
from perfport.space import kernel_space
from perfport.store import CampaignStatus, Store
from perfport.store.formats.imported import external_device
from perfport.store.formats.importing import import_file
from perfport.tune.prior import sourced_prior, transfer_prior
from perfport.tune.replay import replay_db
from tune.cli_in_process import run_cli

FAST = RunSettings(timing=Timing.fixed(2))
PROBLEM = {"width": 64, "height": 64}


def store_other_device(store, cpu, name, problem, best_wc, failing=()):
    """A stencil campaign on another (imported) device: times grow with the distance of wc
    from ``best_wc``; the configurations in ``failing`` were refused."""
    spec = builtin("stencil")
    full = spec.problem.merged(problem)
    space = kernel_space(spec, full, cpu)
    ids = (store.device_id(external_device(name)), store.kernel_id(spec), store.problem_id(full))
    campaign = store.open_campaign(f"other-{name}", ids, "brute_force", 0, {}, space.report)
    out = []
    for config in space:
        if config in failing:
            out.append(Measurement(config, Outcome.LAUNCH_REFUSED, "refused"))
        else:
            t = 1.0 + abs(np.log2(config["wc"] / best_wc)) + 0.01 * config["wr"]
            out.append(Measurement(config, Outcome.OK, times_ms=(t, t)))
    store.record_many(campaign, out)
    store.set_status(campaign, CampaignStatus.COMPLETE)
    return space


def test_prior_from_other_devices(db, cpu):
    spec = builtin("stencil")
    full = spec.problem.merged(PROBLEM)
    with Store(db) as store:
        space = store_other_device(store, cpu, "gpu-a", PROBLEM, best_wc=16)
        assert transfer_prior(store, "stencil", space, external_device("gpu-a").fingerprint,
                              dict(full)) is None  # fmt: skip
        store_other_device(store, cpu, "gpu-b", PROBLEM, best_wc=32)
        prior = transfer_prior(store, "stencil", space, cpu.fingerprint, dict(full))
    assert prior is not None and prior.sources == 2
    best = space.config(int(np.nanargmax(prior.scores)))
    assert best["wc"] in (16, 32) and best["wr"] == min(c["wr"] for c in space)
    assert np.nanmax(prior.scores) <= 1.0


def test_prior_prefers_the_same_problem_and_skips_failures(db, cpu):
    spec = builtin("stencil")
    full = spec.problem.merged(PROBLEM)
    with Store(db) as store:
        space = store_other_device(store, cpu, "gpu-a", {"width": 128, "height": 128}, 8)
        refused = {c for c in space if c["wc"] == 32}
        store_other_device(store, cpu, "gpu-b", PROBLEM, best_wc=32, failing=refused)
        prior = transfer_prior(store, "stencil", space, cpu.fingerprint, dict(full))
    assert prior.sources == 1  # only the same problem's results
    for i, config in enumerate(space):
        assert np.isnan(prior.scores[i]) == (config in refused)


def test_tune_and_replay_use_the_prior(db, cpu, capfd):
    with Store(db) as store:
        store_other_device(store, cpu, "gpu-a", PROBLEM, best_wc=16)
        store_other_device(store, cpu, "gpu-b", PROBLEM, best_wc=16)
    result = tune("stencil", problem=PROBLEM, budget=4, db=db, settings=FAST, strategy="prior")
    assert result.prior_sources == 2 and result.to_json()["prior_sources"] == 2
    asked = [m.config for m in result.measurements][1:]  # after the default configuration
    assert asked[0]["wc"] == 16  # the other devices' best comes first
    cold = tune("stencil", problem=PROBLEM, budget=2, db=db.with_name("cold.db"), settings=FAST,
                strategy="prior")  # fmt: skip
    assert cold.prior_sources == 0
    # Replay one imported-like device with the other as its prior (the CPU's campaign is left
    # out: its few, noisy times would make the first pick depend on the machine).
    other = db.with_name("two.db")
    with Store(other) as store:
        store_other_device(store, cpu, "gpu-a", PROBLEM, best_wc=16)
        store_other_device(store, cpu, "gpu-b", PROBLEM, best_wc=16)
    done = run_cli(
        capfd, "replay", "--db", other, "--device", "gpu-a", "--strategy", "prior", "--budget",
        "3", "--repeats", "2", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["prior_sources"] == 1 and out["curve"][0] == 1.0  # gpu-b's best is gpu-a's


def test_space_indices_match_index(cpu):
    """The vectorised lookup the prior uses agrees with Space.index, illegal and foreign
    configurations included."""
    spec = builtin("stencil")
    space = kernel_space(spec, spec.problem.merged(PROBLEM), cpu)
    configs = [dict(space.config(i)) for i in range(0, len(space), 3)]
    configs += [{**configs[0], "wc": 10**6}, {"other": 1}]
    expected = [space.index(c) for c in configs]
    assert space.indices(configs).tolist() == [-1 if i is None else i for i in expected]


def test_a_device_measured_in_two_campaigns_counts_once_at_its_best(db, cpu):
    """A (device, problem) result set spread over campaigns: each configuration at its best
    time over them, the set's best over all; one source."""
    spec = builtin("stencil")
    full = spec.problem.merged(PROBLEM)
    space = kernel_space(spec, full, cpu)
    configs = list(space)
    with Store(db) as store:
        ids = (store.device_id(external_device("gpu-a")), store.kernel_id(spec),
               store.problem_id(full))  # fmt: skip
        first = store.open_campaign("a-1", ids, "brute_force", 0, {}, space.report)
        second = store.open_campaign("a-2", ids, "brute_force", 0, {}, space.report)
        store.record_many(first, [Measurement(c, Outcome.OK, times_ms=(2.0, 2.0)) for c in configs])
        store.record_many(second, [Measurement(configs[0], Outcome.OK, times_ms=(1.0, 1.0)),
                                   Measurement(configs[1], Outcome.OK, times_ms=(4.0, 4.0))])  # fmt: skip
        prior = transfer_prior(store, "stencil", space, cpu.fingerprint, dict(full))
    assert prior is not None and prior.sources == 1
    scores = [prior.scores[space.index(c)] for c in configs[:3]]
    assert scores == [1.0, 0.5, 0.5]


def _stencil_cache(path, cpu, device, kernel, extra, best_wc):
    """A Kernel Tuner cache of the stencil's space on ``device``, its kernel named ``kernel``,
    with the parameters ``extra`` (name -> values) added, as the benchmark hub's caches add
    use_cmem and filter_width: times grow with the distance of wc from ``best_wc``."""
    spec = builtin("stencil")
    space = kernel_space(spec, spec.problem.merged(PROBLEM), cpu)
    keys = ["wc", "wr", *extra]
    entries = {}
    for config in space:
        t = 1.0 + abs(np.log2(config["wc"] / best_wc)) + 0.01 * config["wr"]
        for more in itertools.product(*extra.values()):
            values = [config["wc"], config["wr"], *more]
            entries[",".join(map(str, values))] = dict(zip(keys, values, strict=True)) | {
                "time": t,
                "times": [t],
            }
    declared = {p.name: list(p.values) for p in space.params} | extra
    cache = {"device_name": device, "kernel_name": kernel, "problem_size": [64, 64],
             "tune_params_keys": keys, "tune_params": declared, "cache": entries}  # fmt: skip
    path.write_text(json.dumps(cache))
    return path


def test_a_source_with_parameters_fixed_at_one_value_seeds_the_prior(db, cpu, tmp_path):
    """The hub's convolution caches add use_cmem, filter_height and filter_width at one value
    each; the prior required the same parameter names, so they never seeded convolution2d.
    Those are dropped now; two sources fixing filter_width at other values both count."""
    spec = builtin("stencil")
    full = spec.problem.merged(PROBLEM)
    space = kernel_space(spec, full, cpu)
    with Store(db) as store:
        for device, width in (("gpu-a", 15), ("gpu-b", 7)):
            extra = {"use_cmem": [1], "filter_width": [width]}
            import_file(store, _stencil_cache(tmp_path / f"{device}.json", cpu, device,
                                              "stencil", extra, best_wc=16))  # fmt: skip
        prior = transfer_prior(store, "stencil", space, cpu.fingerprint, dict(full))
    assert prior is not None and prior.sources == 2
    best = space.config(int(np.nanargmax(prior.scores)))
    assert best["wc"] == 16 and np.nanmax(prior.scores) == 1.0  # the best of both, summed
    result = tune("stencil", problem=PROBLEM, budget=2, db=db, settings=FAST)
    assert result.prior_sources == 2
    assert result.measurements[1].config["wc"] == 16  # after the default: the caches' best
    # Replaying gpu-a: filter_width is its parameter, at 15; gpu-b's 7 is none of its values.
    replayed = replay_db(db, "stencil", "gpu-a", "prior", budget=2, repeats=1).to_json()
    assert replayed["prior_sources"] == 0
    assert {s["devices"][0]: s["why"] for s in replayed["prior_skipped"]} == {
        "gpu-b": "none of its values of filter_width are this kernel's",
        cpu.name: "it has no filter_width, use_cmem",
    }


def test_sources_the_prior_leaves_out_are_named(db, cpu, tmp_path, capfd):
    """A source that tunes a parameter the kernel lacks, or one imported under another name,
    left prior_sources at 0 with nothing said; both are named now, with why, on stderr and in
    --json."""
    with Store(db) as store:
        import_file(store, _stencil_cache(tmp_path / "a.json", cpu, "gpu-a", "stencil",
                                          {"unroll": [1, 2]}, best_wc=16))  # fmt: skip
        import_file(store, _stencil_cache(tmp_path / "b.json", cpu, "gpu-b", "stencil_kt",
                                          {"use_cmem": [1]}, best_wc=16))  # fmt: skip
    done = run_cli(
        capfd, "tune", "stencil", "--problem", "width=64", "height=64", "--budget", "1", "--db",
        db, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["prior_sources"] == 0
    assert out["prior_skipped"] == [
        {"kernel": "stencil", "devices": ["gpu-a"], "why": "it also tunes unroll over 2 values"},
        {"kernel": "stencil_kt", "devices": ["gpu-b"],
         "why": "imported as 'stencil_kt', not 'stencil': import it again with --kernel-name "
                "stencil"},
    ]  # fmt: skip
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: the prior")]
    assert len(notes) == 1 and "stencil on gpu-a" in notes[0] and "stencil_kt on gpu-b" in notes[0]
    # Imported again under the kernel's name, as told: it seeds the prior, and its hint is gone.
    from perfport.tune.prior import sourced_prior

    with Store(db) as store:
        import_file(store, tmp_path / "b.json", kernel="stencil")
        prior, skipped = sourced_prior(store, "stencil", kernel_space(builtin("stencil"),
                                       builtin("stencil").problem.merged(PROBLEM), cpu),
                                       cpu.fingerprint, PROBLEM)  # fmt: skip
    assert prior is not None and prior.sources == 1
    assert [s.kernel for s in skipped] == ["stencil"]


def test_one_device_imported_with_a_parameter_at_two_values_counts_once(db, cpu, tmp_path):
    """Two caches of one device fixing use_cmem at 0 and at 1 are one (device, problem) set,
    yet each of its configurations was added once per cache: scores up to 2 with one source.
    The set counts once now, at the better of the two; a device with one cache is as before."""
    spec = builtin("stencil")
    full = spec.problem.merged(PROBLEM)
    space = kernel_space(spec, full, cpu)
    with Store(db) as store:
        for use_cmem, best_wc in ((0, 16), (1, 32)):
            import_file(store, _stencil_cache(tmp_path / f"a{use_cmem}.json", cpu, "gpu-a",
                                              "stencil", {"use_cmem": [use_cmem]}, best_wc))  # fmt: skip
        prior = transfer_prior(store, "stencil", space, cpu.fingerprint, dict(full))
        assert prior is not None and prior.sources == 1
        import_file(store, _stencil_cache(tmp_path / "b.json", cpu, "gpu-b", "stencil",
                                          {"use_cmem": [1]}, best_wc=8))  # fmt: skip
        both = transfer_prior(store, "stencil", space, cpu.fingerprint, dict(full))
    assert both is not None and both.sources == 2

    def time(config, best_wc):
        return 1.0 + abs(np.log2(config["wc"] / best_wc)) + 0.01 * config["wr"]

    optimum = min(time(c, 16) for c in space)
    a = [optimum / min(time(c, 16), time(c, 32)) for c in space]
    b = [optimum / time(c, 8) for c in space]  # gpu-b's optimum is the same as gpu-a's
    assert np.allclose(prior.scores, a) and np.nanmax(prior.scores) == 1.0
    assert np.allclose(both.scores, (np.array(a) + b) / 2)


def test_the_hint_to_import_again_is_only_for_results_that_may_be_this_kernels(db, cpu, tmp_path):
    """vector_add's own results, exported and imported back, were said to be convolution's
    ('import it again with --kernel-name convolution') because both tune wg over the same
    values. An import named after a kernel perfport measured is that kernel's; one with values
    this kernel does not declare is another's too: neither gets the hint (nor a note)."""
    import dataclasses

    from perfport.tune.prior import sourced_prior

    spec = builtin("stencil")
    space = kernel_space(spec, spec.problem.merged(PROBLEM), cpu)
    with Store(db) as store:
        import_file(store, _stencil_cache(tmp_path / "a.json", cpu, "gpu-a", "stencil_kt", {},
                                          best_wc=16))  # fmt: skip
        _, skipped = sourced_prior(store, "stencil", space, cpu.fingerprint, PROBLEM)
        assert [s.why for s in skipped] == [
            "imported as 'stencil_kt', not 'stencil': import it again with --kernel-name stencil"
        ]
        store.kernel_id(dataclasses.replace(spec, name="stencil_kt"))  # perfport measured one
        assert sourced_prior(store, "stencil", space, cpu.fingerprint, PROBLEM)[1] == ()
    other = tmp_path / "b.json"
    cache = json.loads(_stencil_cache(other, cpu, "gpu-b", "box", {}, best_wc=16).read_text())
    cache["tune_params"]["wc"].append(3)  # a value the stencil does not declare
    other.write_text(json.dumps(cache))
    with Store(db) as store:
        import_file(store, other)
        assert sourced_prior(store, "stencil", space, cpu.fingerprint, PROBLEM)[1] == ()


SCALE = KernelSpec(
    name="scale", entry="scale", source="__kernel void scale(__global float* x, int n) "
    "{ int i = get_global_id(0); if (i < n) x[i] = 2.0f * x[i]; }",
    params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),), default={"wg": 64},
    global_size=("round_up(n, wg)",), local_size=("wg",), problem={"n": 4096},
    args=(ArrayArg("x", "float", ("n",), output=True), ScalarArg("n", "int", "n")),
)  # fmt: skip


def test_a_spec_edited_to_other_values_seeds_the_prior_with_them(db):
    # The same source and name with other values is the same kernel row, whose description is
    # the first stored: the prior judged the edited spec's results by the first spec's values
    # and left them out ("none of its values of wg are this kernel's").
    edited = dataclasses.replace(SCALE, params=(Param("wg", (128, 256), ParamKind.LAUNCH),),
                                 default={"wg": 128})  # fmt: skip
    gpu = external_device("gpu-a")
    with Store(db) as store:
        for spec in (SCALE, edited):
            space = kernel_space(spec, spec.problem)
            ids = (store.device_id(gpu), store.kernel_id(spec), store.problem_id(spec.problem))
            campaign = store.open_campaign(
                f"{spec.default}", ids, "brute_force", 0, {}, space.report, spec.describe()
            )
            store.record_many(campaign, [Measurement(c, Outcome.OK, times_ms=(c["wg"] / 64,))
                                         for c in space])  # fmt: skip
        space = kernel_space(edited, edited.problem)
        prior, skipped = sourced_prior(store, "scale", space, "here", dict(edited.problem))
    assert skipped == () and prior is not None and prior.sources == 1
    assert prior.scores.tolist() == [16 / 128, 16 / 256]  # of the device's best, wg 16
