"""The prior by a metric objective: other devices' results ranked by the metric this run
optimises, computed from each result's configuration and time, not by their time."""

import dataclasses
import json

import numpy as np
from test_prior import FAST, PROBLEM, _stencil_cache, store_other_device

from perfport import builtin, tune
from perfport._core.metrics import Objective
from perfport.space import kernel_space
from perfport.store import Store
from perfport.store.formats.importing import import_file
from perfport.tune.prior import sourced_prior
from perfport.tune.prior_objective import PriorObjective, TimeRanked
from tune.cli_in_process import run_cli

RATE = dataclasses.replace(builtin("stencil"), metrics={"rate": "wc * wr / time_ms"})


def _time(config, best_wc):
    return 1.0 + abs(np.log2(config["wc"] / best_wc)) + 0.01 * config["wr"]


def _prior(store, cpu, space, objective=None):
    by = None if objective is None else PriorObjective(Objective.parse(objective), RATE.describe())
    full = dict(RATE.problem.merged(PROBLEM))
    return sourced_prior(store, "stencil", space, cpu.fingerprint, full, by)[0]


def test_a_metric_objective_ranks_the_relatives_by_it(db, cpu, tmp_path):
    """The prior ranked the relatives' configurations by time whatever the objective, so
    `--objective rate:max` (rate = wc * wr / time_ms) started from their fastest: wr at 1,
    far from the best by rate. It ranks by rate now, computed from each result's configuration
    and time (the cache's problem lacks width and height, which rate does not need)."""
    space = kernel_space(RATE, RATE.problem.merged(PROBLEM), cpu)
    with Store(db) as store:
        import_file(store, _stencil_cache(tmp_path / "a.json", cpu, "gpu-a", "stencil", {}, 16))
        prior = _prior(store, cpu, space, "rate:max")
    rate = np.array([c["wc"] * c["wr"] / _time(c, 16) for c in space])
    assert prior is not None and prior.sources == 1 and prior.by_time == ()
    assert np.allclose(prior.scores, rate / rate.max())
    best = space.config(int(np.nanargmax(prior.scores)))
    fastest = space.config(int(np.argmin([_time(c, 16) for c in space])))
    assert best == space.config(int(np.argmax(rate))) and best != fastest
    # tune() starts from it: after the default, the relative's best by rate.
    result = tune(RATE, problem=PROBLEM, budget=2, db=db, settings=FAST, objective="rate:max")
    assert result.prior_sources == 1 and result.prior_by_time == ()
    assert result.measurements[1].config == best


def test_the_time_objective_keeps_the_prior_as_it_was(db, cpu, tmp_path):
    space = kernel_space(RATE, RATE.problem.merged(PROBLEM), cpu)
    with Store(db) as store:
        import_file(store, _stencil_cache(tmp_path / "a.json", cpu, "gpu-a", "stencil", {}, 16))
        store_other_device(store, cpu, "gpu-b", PROBLEM, best_wc=32)
        plain, timed = _prior(store, cpu, space), _prior(store, cpu, space, "time")
    assert plain is not None and timed is not None
    assert plain.scores.tobytes() == timed.scores.tobytes() and plain.sources == timed.sources


def test_a_metric_the_relatives_problem_cannot_give_falls_back_to_time(db, cpu, tmp_path, capfd):
    """GBps needs width and height: perfport's own results of the problem have them and rank
    by it; an imported cache's problem (problem_size) lacks them, so its results rank by time,
    said in prior_by_time and in one note line on stderr."""
    space = kernel_space(RATE, RATE.problem.merged(PROBLEM), cpu)
    with Store(tmp_path / "own.db") as store:
        store_other_device(store, cpu, "gpu-b", PROBLEM, best_wc=32)
        own, own_by_time = _prior(store, cpu, space, "GBps"), _prior(store, cpu, space)
    assert own is not None and own_by_time is not None and own.by_time == ()
    assert np.allclose(own.scores, own_by_time.scores, equal_nan=True)  # bytes are fixed
    with Store(db) as store:
        import_file(store, _stencil_cache(tmp_path / "a.json", cpu, "gpu-a", "stencil", {}, 16))
        cached, by_time = _prior(store, cpu, space, "GBps"), _prior(store, cpu, space)
    assert cached is not None and by_time is not None
    assert np.allclose(cached.scores, by_time.scores, equal_nan=True)
    why = "GBps needs problem values their problem lacks: "
    assert cached.by_time[0].devices == ("gpu-a",) and cached.by_time[0].why.startswith(why)
    assert "height" in cached.by_time[0].why and "width" in cached.by_time[0].why
    done = run_cli(
        capfd, "tune", "stencil", "--problem", "width=64", "height=64", "--budget", "1",
        "--objective", "GBps", "--confirm", "0", "--db", db, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["prior_by_time"] == [TimeRanked(("gpu-a",), cached.by_time[0].why).to_json()]
    notes = [line for line in done.stderr.splitlines() if "by time, not by GBps" in line]
    assert len(notes) == 1 and notes[0].startswith("note: ") and "gpu-a" in notes[0]
