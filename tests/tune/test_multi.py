"""Many devices on one machine: slots of one kind share a campaign through claims, other
kinds get their own; one store, every device on the progress board."""

from __future__ import annotations

import io
import json
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from perfport import RunSettings, Timing, builtin
from perfport.devices import get_device
from perfport.store import CampaignStatus, Store
from perfport.tune.multi import Slot, local_measurer, tune_many
from perfport.tune.progress import Board
from tune.cli_in_process import run_cli

FAST = RunSettings(timing=Timing.fixed(2))
PROBLEM = {"n": 4096}  # vector_add: 11 work-group sizes, all legal on PoCL


def _rows(db: Path) -> list[tuple[str, str]]:
    """(campaign key, configuration key) of every stored result."""
    with Store(db) as store:
        return [
            (r["campaign"], r["config"])
            for r in store.query(
                "SELECT k.key AS campaign, c.key AS config FROM results r "
                "JOIN configs c ON c.id = r.config_id JOIN campaigns k ON k.id = r.campaign_id"
            )
        ]


def _sub(k: int) -> Slot:
    return Slot(get_device(f"opencl:0:0.{k}"), f"opencl:0:0.{k}")


def test_identical_sub_devices_share_one_campaign(db: Path) -> None:
    out = io.StringIO()
    results = tune_many(
        "vector_add", [_sub(0), _sub(1)], problem=PROBLEM, strategy="brute_force", budget=7,
        db=db, settings=FAST, board=Board(out, live=False, interval_s=0),
    )  # fmt: skip
    assert len(results) == 1
    (result,) = results
    assert result.status is CampaignStatus.BUDGET
    assert len(result.measurements) == 7 and result.measured_here == 7
    rows = _rows(db)
    assert len(rows) == 7 and len(set(rows)) == 7  # exact count, nothing measured twice
    lines = out.getvalue().splitlines()
    assert {line.partition(": ")[0] for line in lines} == {"opencl:0:0.0", "opencl:0:0.1"}
    assert any("best" in line and "ok=" in line and "7/7" in line for line in lines)
    # Run again with a larger budget: resumes, the stored 7 are not measured again.
    again = tune_many(
        "vector_add", [_sub(0), _sub(1)], problem=PROBLEM, strategy="brute_force", db=db,
        settings=FAST, board=Board(io.StringIO(), live=False),
    )  # fmt: skip
    assert again[0].status is CampaignStatus.COMPLETE
    assert again[0].measured_here == 4 and len(set(_rows(db))) == len(_rows(db)) == 11


def test_different_devices_get_their_own_campaigns(db: Path) -> None:
    whole = get_device("opencl:0:0")
    results = tune_many(
        "vector_add", [Slot(whole, whole.id), _sub(0)], problem=PROBLEM,
        strategy="brute_force", budget=3, db=db, settings=FAST,
        board=Board(io.StringIO(), live=False),
    )  # fmt: skip
    assert [r.device.id for r in results] == ["opencl:0:0", "opencl:0:0.0"]
    assert len({r.campaign for r in results}) == 2
    rows = _rows(db)
    assert len(rows) == 6 and len(set(rows)) == 6
    assert all(len(r.measurements) == 3 for r in results)


def _cli(capfd, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(capfd, "tune", "vector_add", "--problem", "n=4096", *args)


def test_cli_repeated_device_json_and_plain_progress(db: Path, capfd) -> None:
    done = _cli(
        capfd, "--device", "opencl:0:0.0", "--device", "opencl:0:0.1", "--strategy", "brute_force",
        "--budget", "4", "--repeats", "2", "--db", str(db), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (campaign,) = json.loads(done.stdout)["campaigns"]
    assert campaign["measured"] == 4 and campaign["measured_this_session"] == 4
    assert "opencl:0:0." in done.stderr and "4/4" in done.stderr  # plain lines, not a terminal
    assert len(campaign["confirmed"]["candidates"]) == 3  # --confirm's default, as on one device


def test_cli_refuses_a_campaign_key_for_several_devices(db: Path, capfd) -> None:
    done = _cli(capfd, "--device", "all", "--campaign", "k", "--db", str(db))
    assert done.returncode == 2
    assert (
        done.stderr.strip().count("\n") == 0 and "--campaign works with one --device" in done.stderr
    )
    assert not db.exists()


class _AfterOthers:
    """A measurer that holds its first trial until ``others`` results of another campaign are
    stored: the device that joins a search already under way elsewhere."""

    def __init__(self, inner, db: Path, others: int) -> None:
        self._inner, self._db, self._others, self._waited = inner, db, others, False

    def measure(self, config):
        while not self._waited:
            with Store(self._db) as store:
                counts = [r[0] for r in store.query(
                    "SELECT count(*) FROM results GROUP BY campaign_id")]  # fmt: skip
            self._waited = max(counts, default=0) >= self._others
            time.sleep(0.05)
        return self._inner.measure(config)

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


def test_a_second_device_starts_from_the_first_devices_results(db: Path) -> None:
    """Different fingerprints, prior strategy: the sub-device's campaign opens with no prior
    (nothing is stored yet), then its first pick after the default is the whole device's best
    non-default configuration, read from the store as those results landed."""
    whole, sub = get_device("opencl:0:0"), get_device("opencl:0:0.0")

    @contextmanager
    def make(spec, problem, slot, settings):
        with local_measurer(spec, problem, slot, settings) as inner:
            yield inner if slot.device is whole else _AfterOthers(inner, db, 6)

    first, second = tune_many(
        "stencil", [Slot(whole, "whole"), Slot(sub, "sub")], problem={"width": 64, "height": 64},
        strategy="prior", budget=6, db=db, settings=FAST, board=Board(io.StringIO(), live=False),
        make_measurer=make,
    )  # fmt: skip
    default = builtin("stencil").default
    theirs = sorted(
        (m for m in first.measurements if m.ok and m.config != default), key=lambda m: m.time_ms
    )
    ours = [m.config for m in second.measurements if m.config != default]
    assert second.prior_sources == 1
    assert ours[0] == theirs[0].config


class _Idle:
    """A measurer that never gets a trial: it holds its slot's first ask until the other slot
    has stored the whole budget, so the search is over when it asks."""

    def __init__(self, inner, db: Path, budget: int) -> None:
        self._inner, self._db, self._budget = inner, db, budget
        self.verification, self.reference_note = "(no trial ran this session)", ""

    def measure(self, config):
        raise AssertionError("the idle slot was given a trial")

    def wait(self) -> None:
        deadline = time.monotonic() + 60
        while len(_rows(self._db)) < self._budget and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # let the busy slot's session end first, as in the race it guards


def test_a_slot_that_measured_nothing_keeps_the_others_verification(db: Path) -> None:
    """Two slots of one kind where one ran every trial: the campaign still reports how its
    outputs were checked (the idle slot ending last once blanked it, seen on CI)."""

    @contextmanager
    def make(spec, problem, slot, settings):
        with local_measurer(spec, problem, slot, settings) as inner:
            if slot.label.endswith("0"):
                yield inner
            else:
                idle = _Idle(inner, db, 3)
                idle.wait()
                yield idle

    (result,) = tune_many(
        "vector_add", [_sub(0), _sub(1)], problem=PROBLEM, strategy="brute_force", budget=3,
        db=db, settings=FAST, board=Board(io.StringIO(), live=False), make_measurer=make,
    )  # fmt: skip
    assert result.measured_here == 3
    assert result.verification == "numpy reference"


def test_a_reference_that_raises_leaves_its_campaign_failed(db: Path) -> None:
    """The sessions stop at the input (the numpy reference); the campaign stays, marked failed
    (another process may be writing to it)."""
    import dataclasses

    import pytest

    from perfport import SpecError

    spec = dataclasses.replace(builtin("vector_add"), reference=lambda p, i: {"c": i["nope"]})
    with pytest.raises(SpecError, match="the numpy reference raised KeyError"):
        tune_many(spec, [_sub(0)], problem=PROBLEM, strategy="brute_force", db=db, settings=FAST)
    with Store(db) as store:
        assert [r[0] for r in store.query("SELECT status FROM campaigns")] == ["failed"]


def test_a_budget_share_holds_for_several_slots(db: Path) -> None:
    """``--budget 25%`` on two slots is a quarter of the kind's space, as on one slot (it was
    never made a count there, so the whole space was measured)."""
    from perfport.tune.result import Budget

    (result,) = tune_many(
        "vector_add", [_sub(0), _sub(1)], problem=PROBLEM, strategy="random",
        budget=Budget(fraction=0.25), db=db, settings=FAST,
        board=Board(io.StringIO(), live=False),
    )  # fmt: skip
    assert result.status is CampaignStatus.BUDGET
    assert len(result.measurements) == 3  # 25% of 11, rounded up
    assert len(_rows(db)) == 3


def test_each_kind_re_times_its_best_once_after_its_last_session(db: Path) -> None:
    """--confirm on several devices: --confirm was not used there (every confirmed null). The
    last session of each kind to end its search re-times that campaign's best on its device."""
    whole = get_device("opencl:0:0")
    results = tune_many(
        "vector_add", [_sub(0), _sub(1), Slot(whole, whole.id)], problem=PROBLEM,
        strategy="brute_force", budget=4, db=db, settings=FAST,
        board=Board(io.StringIO(), live=False), confirm_top=2, confirm_seconds=0.5,
    )  # fmt: skip
    assert len(results) == 2
    for r in results:
        assert r.confirmed is not None and len(r.confirmed.candidates) == 2
        re_timed = {c.config for c in r.confirmed.candidates}
        samples = {m.config: len(m.times_ms) for m in r.measurements}
        # the search took two samples each (Timing.fixed(2)); one re-timing added rounds
        assert all(samples[c] > 2 for c in re_timed)
        assert all(n == 2 for c, n in samples.items() if c not in re_timed)
    assert len(set(_rows(db))) == len(_rows(db)) == 8  # still one result per configuration
