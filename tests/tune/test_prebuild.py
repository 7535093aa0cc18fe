"""perfport tune --build-jobs: builds compiled ahead in background processes."""

import dataclasses
from pathlib import Path

import pytest

from perfport import PerfportError, RunSettings, Timing, load_kernel, tune
from perfport.tune.prebuild import Prebuild

EXAMPLES = Path(__file__).parents[2] / "examples"
FAST = RunSettings(timing=Timing.fixed(2))


def test_builds_compile_in_the_background_and_failures_are_counted(cpu, tmp_path):
    spec = load_kernel(EXAMPLES / "saxpy.toml")
    builds = [{"ITEMS": str(i)} for i in (1, 2, 4, 8)]
    ahead = Prebuild(spec, cpu, builds, 2)
    try:
        assert ahead.wait() == (4, 0)
    finally:
        ahead.close()
    broken = dataclasses.replace(spec, source="#if ITEMS == 8\nbroken\n#endif\n" + spec.source)
    ahead = Prebuild(broken, cpu, builds, 2)
    try:
        assert ahead.wait() == (3, 1)
    finally:
        ahead.close()


def test_tuning_with_builds_ahead_measures_the_same(cpu, tmp_path):
    kernel = EXAMPLES / "saxpy.toml"
    runs = [
        tune(kernel, device=cpu.id, strategy="brute_force", db=tmp_path / f"{jobs}.db",
             settings=FAST, build_jobs=jobs, problem={"n": 4096})
        for jobs in (0, 2)
    ]  # fmt: skip
    seen = [{(m.config, m.outcome) for m in r.measurements} for r in runs]
    assert seen[0] == seen[1] and len(seen[0]) == 20
    assert runs[1].status.value == "complete"


def test_a_strategy_that_chooses_as_it_goes_cannot_build_ahead(cpu, tmp_path):
    with pytest.raises(PerfportError, match="chooses as it goes"):
        tune(EXAMPLES / "saxpy.toml", device=cpu.id, db=tmp_path / "r.db", build_jobs=2)
