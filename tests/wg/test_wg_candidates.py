"""Candidate sets: a few work-group sizes that cover the scenarios' best, and collecting only them."""

from __future__ import annotations

import numpy as np
import pytest

from perfport._core import PerfportError
from perfport.kernels import builtin
from perfport.space import kernel_space
from perfport.store import Store
from perfport.tune.tune import resolve_problem
from perfport.wg import Scenario, collect, dataset_from_store
from perfport.wg.collection import candidates
from perfport.wg.predictors.vectors import covering_sizes


def test_covering_sizes_take_the_best_fixed_size_then_the_one_it_misses() -> None:
    # Size 1 is the best single choice and size 0 the second best, but size 0 adds nothing to
    # size 1; size 2, poor on average, rescues the two scenarios size 1 is bad for.
    vectors = np.log(np.array([
        [0.85, 0.9, 0.2, 0.1],
        [0.85, 0.9, 0.2, 0.1],
        [0.85, 0.9, 0.2, 0.1],
        [0.85, 0.9, 0.2, 0.1],
        [0.3, 0.3, 1.0, 0.1],
        [0.3, 0.3, 1.0, 0.1],
    ]))  # fmt: skip
    rows = np.ones(len(vectors), dtype=bool)
    assert covering_sizes(vectors, rows, 1) == [1]
    assert covering_sizes(vectors, rows, 2) == [1, 2]
    assert sorted(covering_sizes(vectors, rows, 9)) == [0, 1, 2, 3]  # never a size twice
    assert covering_sizes(vectors, np.arange(6) >= 4, 1) == [2]  # only the rows asked about


def test_covering_sizes_never_count_a_size_above_a_limit_as_reaching() -> None:
    vectors = np.log(np.array([[np.nan, 0.5], [np.nan, 0.5], [1.0, 0.5]]))
    assert covering_sizes(vectors, np.ones(3, dtype=bool), 1) == [1]
    with pytest.raises(ValueError, match="at least 1 size"):
        covering_sizes(vectors, np.ones(3, dtype=bool), 0)


def test_a_candidate_set_restricts_the_space_but_not_the_code(cpu) -> None:
    spec = builtin("heat")
    picked = candidates(spec, [(32, 4), (8, 8), (8, 8), (4, 2)])
    problem = resolve_problem(picked, {"width": 64, "height": 64})
    space = kernel_space(picked, problem, cpu)
    assert sorted((c["wc"], c["wr"]) for c in space) == [(4, 2), (8, 8), (32, 4)]
    assert picked.source_hash == spec.source_hash
    assert candidates(spec, None) is spec
    with pytest.raises(PerfportError, match="at least one work-group size"):
        candidates(spec, [])


def test_collecting_candidates_stores_only_them_in_interleaved_rounds(cpu, db) -> None:
    sizes = [(32, 4), (8, 8), (16, 2)]
    scenario = Scenario("heat", (("height", 32), ("width", 32)))
    steps = list(collect(cpu, [scenario], db, repeats=1, rounds=2, sizes=sizes))
    assert [s.measured for s in steps] == [3]
    with Store(db, create=False) as store:
        data = dataset_from_store(store)
    assert sorted(map(tuple, data.sizes.tolist())) == sorted(sizes)
    assert np.isfinite(data.runtimes).all()


def test_an_interrupted_scenario_is_not_reported_as_collected(cpu, db, monkeypatch) -> None:
    # The sweep under it hands 'sweep --json' the problem it was interrupted in; yielded as a
    # step, a collection reading one step per scenario (zip) would end as if complete, exit 0.
    from perfport.measure import TrialEngine

    real, calls = TrialEngine.run, []

    def interrupted_third(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 3:  # as Ctrl-C or SIGTERM during the third trial
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TrialEngine, "run", interrupted_third)
    scenario = Scenario("heat", (("height", 32), ("width", 32)))
    steps = collect(cpu, [scenario], db, repeats=1, sizes=[(32, 4), (8, 8), (16, 2), (4, 4)])
    with pytest.raises(KeyboardInterrupt):
        next(steps)
    with Store(db, create=False) as store:
        (status,) = store.query("SELECT status FROM campaigns")
    assert tuple(status) == ("interrupted",)
