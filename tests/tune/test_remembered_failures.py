"""A configuration that crashed or hung the worker in an earlier campaign of the same kernel,
device and problem is not run again (issue 26 item 6), unless --retry-failed."""

import dataclasses

from conftest import DATA
from perfport import RunSettings, Timing, load_kernel, tune
from perfport._core import Config, Measurement, Outcome, Problem
from perfport.cli import _parser
from perfport.space import kernel_space
from perfport.store import Store, earlier_failures

SETTINGS = RunSettings(timing=Timing.fixed(2), timeout_s=3.0)
OK = {"MODE": 0, "wg": 8, "lmem": 1}
CRASH = {"MODE": 4, "wg": 8, "lmem": 1}


def _by_mode(result):
    return {m.config["MODE"]: m for m in result.measurements}


def test_a_crash_is_remembered_across_campaigns_unless_retried(db):
    spec = load_kernel(DATA / "probe.py")
    first = tune(spec, configs=[OK, CRASH], db=db, settings=SETTINGS, campaign="first")
    crashed = _by_mode(first)[4]
    assert crashed.outcome is Outcome.CRASHED and "not measured again" not in crashed.message
    again = tune(spec, configs=[OK, CRASH], db=db, settings=SETTINGS, campaign="second")
    reused = _by_mode(again)[4]
    assert reused.outcome is Outcome.CRASHED and again.measured_here == 1  # only MODE 0 ran
    assert reused.message.startswith("not measured again: it crashed in campaign first (")
    assert "--retry-failed" in reused.message
    with Store(db) as store:  # stored as such
        stored = {m.config["MODE"]: m for m in store.measurements(store.campaign("second"))}
    assert stored[4].message == reused.message
    retried = tune(spec, configs=[OK, CRASH], db=db, settings=SETTINGS, campaign="third",
                   retry_failed=True)  # fmt: skip
    assert retried.measured_here == 2
    assert "not measured again" not in _by_mode(retried)[4].message
    other = tune(spec, problem={"n": 128}, configs=[CRASH], db=db, settings=SETTINGS,
                 campaign="other-problem")  # fmt: skip
    assert other.measured_here == 1  # another problem: nothing is known


def test_a_default_that_crashed_before_does_not_make_the_reference(db):
    spec = dataclasses.replace(
        load_kernel(DATA / "probe.py"), reference=None, default=CRASH,
        restrictions=("MODE in (0, 2, 4)", "MODE != 4 or wg == 8"),
    )  # fmt: skip
    configs = [CRASH, OK, {"MODE": 2, "wg": 8, "lmem": 1}]
    tune(spec, configs=configs, db=db, settings=SETTINGS, campaign="first")
    again = tune(spec, configs=configs, db=db, settings=SETTINGS, campaign="second")
    assert again.measured_here == 2
    assert "gave crashed in an earlier campaign" in again.verification
    assert _by_mode(again)[2].outcome is Outcome.WRONG_RESULT  # still verified


def test_a_timeout_is_reused_only_under_a_limit_no_longer(db, cpu):
    spec = load_kernel(DATA / "probe.py")
    hang = Config.of(MODE=3, wg=8, lmem=1)
    with Store(db) as store:
        ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(spec.problem))
        report = kernel_space(spec, Problem()).report
        limit = {"timeout_s": 3.0, "launch": spec.launch_hash}
        before = store.open_campaign("before", ids, "listed", 0, limit, report)
        store.record(before, Measurement(hang, Outcome.TIMEOUT, "a launch did not finish"))
        now = store.open_campaign("now", ids, "listed", 0, {"timeout_s": 1.0}, report)
        launch = spec.launch_hash
        reused = earlier_failures(store, now, 3.0, launch)
        assert set(reused) == {hang}
        assert reused[hang].message.startswith("not measured again: it timed out in campaign")
        assert earlier_failures(store, now, 10.0, launch) == {}  # a longer limit may let it end
        assert earlier_failures(store, before, 1.0, launch) == {}  # never its own results
        assert earlier_failures(store, now, 3.0, "another") == {}  # launched otherwise


def test_a_crash_from_a_spec_since_fixed_is_not_reused(db, cpu):
    """A scalar argument given another dtype crashed every configuration; the fixed spec
    (the same source, so the same kernel in the store) reused those crashes and ran nothing."""
    spec = load_kernel(DATA / "probe.py")
    wrong = dataclasses.replace(spec, args=tuple(
        dataclasses.replace(a, dtype="uint") if a.name == "n" else a for a in spec.args
    ))  # fmt: skip
    assert wrong.source_hash == spec.source_hash and wrong.launch_hash != spec.launch_hash
    with Store(db) as store:
        ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(spec.problem))
        report = kernel_space(spec, Problem()).report
        settings = {"timeout_s": 3.0, "launch": wrong.launch_hash}
        before = store.open_campaign("before", ids, "listed", 0, settings, report)
        store.record(before, Measurement(Config.of(OK), Outcome.CRASHED, "INVALID_ARG_SIZE"))
    fixed = tune(spec, configs=[OK], db=db, settings=SETTINGS, campaign="fixed", device=cpu.id)
    assert fixed.measured_here == 1 and _by_mode(fixed)[0].outcome is Outcome.OK


def test_the_command_line_has_retry_failed():
    args = _parser().parse_args(["tune", "probe.py", "--retry-failed"])
    assert args.retry_failed is True
    assert _parser().parse_args(["tune", "probe.py"]).retry_failed is False


def test_retry_failed_on_a_campaign_holding_its_own_failures_says_what_it_keeps(db):
    """--retry-failed on a campaign whose own results crashed measured nothing and said
    nothing: those stay (a campaign measures a configuration once), and now a warning says so
    and how to measure them again."""
    spec = load_kernel(DATA / "probe.py")
    first = tune(spec, configs=[OK, CRASH], db=db, settings=SETTINGS, campaign="own",
                 retry_failed=True)  # fmt: skip
    assert first.measured_here == 2 and not any("--retry-failed" in w for w in first.warnings)
    again = tune(spec, configs=[OK, CRASH], db=db, settings=SETTINGS, campaign="own",
                 retry_failed=True)  # fmt: skip
    assert again.measured_here == 0
    (kept,) = [w for w in again.warnings if "--retry-failed" in w]
    assert "this campaign's own 1 crashed or timed-out result stays as stored" in kept
    assert "--retry-failed --campaign NEW_NAME" in kept
    plain = tune(spec, configs=[OK, CRASH], db=db, settings=SETTINGS, campaign="own")
    assert not any("--retry-failed" in w for w in plain.warnings)  # not asked: nothing said
