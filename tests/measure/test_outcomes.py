"""Every outcome, through the worker process, in one campaign that completes."""

from collections import Counter

from conftest import DATA
from perfport import RunSettings, Timing, load_kernel, tune
from perfport._core import Config, Outcome, Problem
from perfport.devices import open_session
from perfport.measure import TrialEngine

SETTINGS = RunSettings(timing=Timing.fixed(2), timeout_s=3.0)


def test_every_outcome_and_the_campaign_completes(db):
    spec = load_kernel(DATA / "probe.py")
    result = tune(spec, strategy="brute_force", db=db, settings=SETTINGS)
    assert result.status.value == "complete"
    by_mode = {}
    for m in result.measurements:
        by_mode.setdefault((m.config["MODE"], m.config["wg"]), m)
    outcome = {k: m.outcome for k, m in by_mode.items()}
    assert outcome[(0, 8)] is Outcome.OK and outcome[(0, 16)] is Outcome.OK
    assert outcome[(1, 8)] is Outcome.COMPILE_ERROR
    assert "does not compile" in by_mode[(1, 8)].message
    assert outcome[(2, 8)] is Outcome.WRONG_RESULT
    assert outcome[(3, 8)] is Outcome.TIMEOUT
    assert outcome[(4, 8)] is Outcome.CRASHED
    assert "SIGSEGV" in by_mode[(4, 8)].message or "killed" in by_mode[(4, 8)].message
    assert outcome[(5, 8)] is Outcome.LAUNCH_REFUSED
    assert "INVALID_WORK_GROUP_SIZE" in by_mode[(5, 8)].message
    assert outcome[(5, 16)] is Outcome.OK  # the size it demands works
    # lmem = 2^30 floats cannot fit any device's local memory: pruned without a launch.
    assert result.pruned == 10 and all(m.config["lmem"] == 1 for m in result.measurements)
    counts = Counter(m.outcome for m in result.measurements)
    assert counts[Outcome.OK] == 3 and len(result.measurements) == 10
    assert result.best is not None and result.best.config["MODE"] in (0, 5)


def test_limits_checked_before_any_build(cpu):
    spec = load_kernel(DATA / "probe.py")
    engine = TrialEngine(open_session(cpu), spec, Problem(), SETTINGS)
    too_much_local = engine.run(Config.of(MODE=0, wg=8, lmem=1 << 30))
    assert too_much_local.outcome is Outcome.PRUNED and "local memory" in too_much_local.message
    assert too_much_local.compile_ms is None  # decided before compiling
