import dataclasses

import pytest

from perfport import Budget, RunSettings, SpecError, Timing, builtin, tune
from perfport.store import Store
from perfport.strategies import Strategy, StrategyError

FAST = RunSettings(timing=Timing.fixed(2))
PROBLEM = {"width": 64, "height": 64}


def _rows(db):
    with Store(db) as store:
        return store.query("SELECT config_id, id, created, outcome FROM results ORDER BY id")


def test_budget_default_first_and_json(db):
    r = tune("stencil", problem=PROBLEM, budget=6, db=db, settings=FAST)
    assert r.status.value == "budget" and len(r.measurements) == 6
    assert r.measurements[0].config == r.default.config  # the baseline is measured first
    j = r.to_json()
    for key in (
        "campaign",
        "device",
        "kernel",
        "problem",
        "configs_total",
        "pruned",
        "measured",
        "outcomes",
        "best",
        "default",
    ):
        assert key in j
    assert set(j["best"]) >= {"config", "time_ms"} and j["measured"] == 6
    # configs_total is what 'perfport space' calls legal on the device; the kernel's own
    # count (before device limits) is configs_before_device.
    assert j["configs_total"] == r.space.legal == j["space"]["legal"]
    assert j["configs_before_device"] == 361 and j["pruned"] == 361 - r.space.legal


def test_rerun_resumes_and_extends_without_remeasuring(db):
    # random: its choices do not depend on the (noisy) times, so a fresh run can be compared.
    first = tune("stencil", problem=PROBLEM, budget=5, db=db, settings=FAST, strategy="random")
    before = _rows(db)
    again = tune("stencil", problem=PROBLEM, budget=5, db=db, settings=FAST, strategy="random")
    assert _rows(db) == before  # nothing measured again
    assert again.campaign == first.campaign and again.verification.startswith("(no trial")
    assert [m.config for m in again.measurements] == [m.config for m in first.measurements]
    more = tune("stencil", problem=PROBLEM, budget=9, db=db, settings=FAST, strategy="random")
    after = _rows(db)
    assert after[:5] == before and len(after) == 9
    assert len({row[0] for row in after}) == 9  # no configuration twice
    # The strategy replays to the same order, so extending equals one longer run.
    fresh = tune(
        "stencil",
        problem=PROBLEM,
        budget=9,
        db=db.with_name("fresh.db"),
        settings=FAST,
        strategy="random",
    )
    assert [m.config for m in fresh.measurements] == [m.config for m in more.measurements]


def test_time_budget(db):
    r = tune("stencil", problem=PROBLEM, budget=Budget(max_seconds=0.0), db=db, settings=FAST)
    assert r.status.value == "budget" and len(r.measurements) == 1  # only the default


def test_brute_force_completes(db):
    r = tune(
        "convolution", problem={"n": 4096, "mask": 5}, strategy="brute_force", db=db, settings=FAST
    )
    assert r.status.value == "complete" and len(r.measurements) == 11
    assert r.outcomes["ok"] == 11 and r.best is not None


def test_progress_bar_runs(db, capsys):
    from perfport.tune import RichProgress

    r = tune(
        "vector_add", problem={"n": 1024}, budget=3, db=db, settings=FAST, progress=RichProgress()
    )
    assert r.measured == 3
    assert "vector_add" in capsys.readouterr().err


def test_model_strategy_resumes_from_stored_values(db):
    """A value-driven strategy replays its stored results on resume and carries on."""
    tune("stencil", problem=PROBLEM, budget=12, db=db, settings=FAST, strategy="bayes_tr")
    before = _rows(db)
    more = tune("stencil", problem=PROBLEM, budget=16, db=db, settings=FAST, strategy="bayes_tr")
    after = _rows(db)
    assert after[:12] == before and len(after) == 16 and len({r[0] for r in after}) == 16
    assert more.measured == 16


def test_listed_configurations_are_measured_alone(db):
    """A shipped set on a new device: exactly these, in order, once each; one beyond the
    device's limits is stored as pruned; the default is not measured unless listed."""
    import pytest

    from perfport import Outcome, PerfportError, SpecError

    listed = [{"wc": 16, "wr": 8}, {"wc": 96, "wr": 96}, {"wc": 16, "wr": 8}, {"wc": 4, "wr": 4}]
    r = tune("stencil", problem=PROBLEM, db=db, settings=FAST, configs=listed)
    assert r.status.value == "complete" and r.default is None
    got = [(m.config["wc"], m.config["wr"], m.outcome) for m in r.measurements]
    assert got == [(16, 8, Outcome.OK), (4, 4, Outcome.OK), (96, 96, Outcome.PRUNED)]
    assert r.pruned == 1 and r.outcomes["pruned"] == 1 and r.outcomes["ok"] == 2  # of the list
    assert "exceed the device" in next(
        m.message for m in r.measurements if m.outcome is Outcome.PRUNED
    )
    again = tune("stencil", problem=PROBLEM, db=db, settings=FAST, configs=listed)
    assert again.campaign == r.campaign and len(_rows(db)) == 3  # resumed, nothing re-measured
    other = tune("stencil", problem=PROBLEM, db=db, settings=FAST, configs=listed[:1])
    assert other.campaign != r.campaign
    for bad, message in [
        ([{"wc": 16}], "exactly the parameters"),
        ([{"wc": 16, "wr": 5}], "not one of"),
        ([{"wc": 16.0, "wr": 8}], "not one of"),  # equal in Python, not the same value
        ([{"wc": 16, "wr": True}], "not one of"),
        ([], "at least one"),
        (["16x8"], "parameter names and values"),
    ]:
        with pytest.raises((SpecError, PerfportError), match=message):
            tune("stencil", problem=PROBLEM, db=db, settings=FAST, configs=bad)
    with pytest.raises(PerfportError, match="not both"):
        tune("stencil", problem=PROBLEM, db=db, strategy="random", configs=listed)


def test_arguments_of_the_wrong_type_are_named_to_a_library_caller(db, cpu):
    """device=0 raised a regex's TypeError, settings={...} one from dataclasses.asdict, and
    kernel_space kept the default for a misspelt problem value."""
    import pytest

    from perfport._core import DeviceError, PerfportError, SpecError
    from perfport.kernels import builtin
    from perfport.space import kernel_space

    with pytest.raises(DeviceError, match="named by its id, such as 'opencl:0:0'"):
        tune("vector_add", device=0, db=db)  # type: ignore[arg-type]
    with pytest.raises(PerfportError, match="settings must be a RunSettings, not dict"):
        tune("vector_add", settings={"repeats": 3}, db=db)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="has no problem value widht"):
        kernel_space(builtin("stencil"), {"widht": 64}, cpu)
    assert len(kernel_space(builtin("stencil"), {"width": 64}, cpu)) > 0


def _campaigns(db):
    with Store(db) as store:
        return [
            (r["status"], r["n"])
            for r in store.query(
                "SELECT status, (SELECT count(*) FROM results r WHERE r.campaign_id = c.id) AS n "
                "FROM campaigns c"
            )
        ]


class _Repeats(Strategy):
    """Asks two configurations, then one it was told, with untold ones left."""

    name, summary = "repeats", "asks a told configuration"

    def ask(self) -> int | None:
        if len(self.told) < 3:
            return next(i for i in range(len(self.space)) if i not in self.told)
        return next(iter(self.told))


def test_a_strategy_asking_a_told_configuration_is_an_error_not_completion(db):
    """It ended the campaign as complete after 3 of 11 configurations, silently."""
    with pytest.raises(StrategyError, match=r"strategy repeats: ask\(\) returned configuration"):
        tune("vector_add", problem={"n": 4096}, strategy=_Repeats, budget=6, db=db, settings=FAST)
    assert _campaigns(db) == [("failed", 3)]  # what it measured stays


class _NoAsk(Strategy):
    name, summary = "no_ask", ""


def test_a_strategy_that_cannot_be_built_is_refused_before_the_store(db):
    """A raw TypeError came after a failed campaign with no results was stored."""
    with pytest.raises(StrategyError, match="strategy no_ask cannot be built"):
        tune("vector_add", strategy=_NoAsk, db=db)
    assert not db.exists()


def test_a_reference_that_raises_leaves_its_campaign_failed_never_deleted(db):
    """The reference runs once the session starts. Its campaign stays, marked failed: another
    process may have opened the same campaign and be about to store results in it (taking the
    row back made that writer fail on a foreign key)."""
    spec = dataclasses.replace(builtin("vector_add"), reference=lambda p, i: {"c": i["nope"]})
    with pytest.raises(SpecError, match="the numpy reference raised KeyError"):
        tune(spec, problem={"n": 4096}, strategy="brute_force", db=db, settings=FAST)
    assert _campaigns(db) == [("failed", 0)]
    key = tune("vector_add", problem={"n": 4096}, budget=2, db=db, settings=FAST).campaign
    with pytest.raises(SpecError):
        tune(spec, problem={"n": 4096}, budget=4, db=db, settings=FAST, campaign=key)
    assert ("failed", 2) in _campaigns(db)  # what it held stays
