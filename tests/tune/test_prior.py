"""The prior from other devices' results: built from the store, handed to the strategy by
tune and replay."""

import json
import subprocess
import sys

import numpy as np

from perfport import Measurement, Outcome, RunSettings, Timing, builtin, tune
from perfport.space import kernel_space
from perfport.store import CampaignStatus, Store
from perfport.store.formats.imported import external_device
from perfport.tune.prior import transfer_prior

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


def test_tune_and_replay_use_the_prior(db, cpu):
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
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "replay", "--db", str(other), "--device", "gpu-a",
         "--strategy", "prior", "--budget", "3", "--repeats", "2", "--json"],
        capture_output=True, text=True,
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
