"""A resumed campaign whose stored configurations this run's restrictions forbid is refused
before anything is measured: a Python restriction is keyed by its text, so a changed closure
variable keeps the campaign key."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfport import ArrayArg, KernelSpec, Param, ParamKind, RunSettings, Timing, tune
from perfport._core import StoreError
from perfport.devices import get_device
from perfport.store import Store
from perfport.tune.multi import Slot, tune_many

FAST = RunSettings(timing=Timing.fixed(2))


def _spec(max_bx: int) -> KernelSpec:
    return KernelSpec(
        name="kmax",
        source="__kernel void k(__global float* x) { x[get_global_id(0)] = 1.0f; }",
        entry="k",
        params=(Param("bx", (16, 32, 64, 128), ParamKind.LAUNCH),),
        global_size=("n",),
        local_size=("bx",),
        problem={"n": 4096},
        args=(ArrayArg("x", "float", ("n",), output=True),),
        restrictions=[lambda p: p["bx"] <= max_bx],
    )


def _stored(db: Path) -> list[tuple[str, str, str]]:
    with Store(db) as store:
        return [
            (r["status"], r["config"], r["outcome"])
            for r in store.query(
                "SELECT k.status, c.key AS config, r.outcome FROM results r "
                "JOIN configs c ON c.id = r.config_id JOIN campaigns k ON k.id = r.campaign_id "
                "ORDER BY r.id"
            )
        ]


def test_a_changed_closure_variable_refuses_the_resume_and_keeps_the_results(db: Path) -> None:
    first = tune(_spec(128), strategy="brute_force", db=db, settings=FAST)
    assert len(first.measurements) == 4
    before = _stored(db)
    # The key cannot see the closure (keys are pinned: users resume by them) ...
    with pytest.raises(StoreError, match=r"holds 3 of 4 stored configurations .* forbid") as err:
        tune(_spec(16), strategy="brute_force", db=db, settings=FAST)
    message = str(err.value)
    assert first.campaign in message and "--campaign NEW_KEY" in message and "\n" not in message
    assert _stored(db) == before  # ... the results and the campaign's status stay as they were
    # A new key starts a campaign of the current restriction.
    fresh = tune(_spec(16), strategy="brute_force", db=db, settings=FAST, campaign="kmax-16")
    assert [dict(m.config) for m in fresh.measurements] == [{"bx": 16}]


def test_a_widened_restriction_resumes(db: Path) -> None:
    """Every stored configuration still legal: the campaign goes on and extends."""
    first = tune(_spec(32), strategy="brute_force", db=db, settings=FAST)
    wider = tune(_spec(128), strategy="brute_force", db=db, settings=FAST)
    assert wider.campaign == first.campaign and len(wider.measurements) == 4


def test_a_campaign_the_caller_names_goes_on_under_a_changed_spec(db: Path) -> None:
    """--campaign K: the caller chose to go on with that campaign (narrowed values, a changed
    restriction), as before the check existed; only a key perfport derived is checked."""
    first = tune(_spec(128), strategy="brute_force", db=db, settings=FAST, campaign="K")
    again = tune(_spec(16), strategy="brute_force", db=db, settings=FAST, campaign="K")
    assert again.campaign == first.campaign == "K" and len(again.measurements) == 4


def test_tune_many_refuses_the_same_resume(db: Path) -> None:
    slot = Slot(get_device("opencl:0:0"), "opencl:0:0")
    tune_many(_spec(128), [slot], strategy="brute_force", db=db, settings=FAST)
    before = _stored(db)
    with pytest.raises(StoreError, match="holds 3 of 4 stored configurations"):
        tune_many(_spec(16), [slot], strategy="brute_force", db=db, settings=FAST)
    assert _stored(db) == before


def test_a_sweep_refuses_the_same_resume(db: Path) -> None:
    from perfport.tune.sweep import sweep

    settings = RunSettings(timing=Timing.fixed(2), verify=False)
    list(sweep(_spec(128), [{"n": 4096}], device="opencl:0:0", db=db, settings=settings))
    before = _stored(db)
    with pytest.raises(StoreError, match="holds 3 of 4 stored configurations"):
        list(sweep(_spec(16), [{"n": 4096}], device="opencl:0:0", db=db, settings=settings))
    assert _stored(db) == before
