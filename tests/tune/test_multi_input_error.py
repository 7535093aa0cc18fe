"""Several devices, and bad input found only once the sessions run: one session's input error
stops every session (each campaign keeps what it stored, marked failed), while a device's own
failure stops only its session."""

from __future__ import annotations

import dataclasses
import io
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from perfport import PerfportError, RunSettings, SpecError, Timing, builtin
from perfport.devices import get_device
from perfport.store import Store
from perfport.tune.multi import Slot, local_measurer, tune_many
from perfport.tune.progress import Board
from tune.cli_in_process import run_cli

FAST = RunSettings(timing=Timing.fixed(2))
PROBLEM = {"n": 4096}  # vector_add: 11 work-group sizes, all legal on PoCL
SPACE = 11


def _second_call_raises(failed: threading.Event) -> object:
    """A numpy reference that answers once and raises after (``failed`` then set): the session
    that computes it second meets the error while the first one measures."""
    calls = itertools.count()

    def reference(problem, inputs):
        if next(calls):
            failed.set()
            raise ValueError("only once")
        return {"c": inputs["a"] + inputs["b"]}

    return reference


class _Patient:
    """A measurer that starts its second trial only once the input error has been met (at
    most 30 s): the session that did not meet it is mid-search when it happens."""

    def __init__(self, inner: Any, failed: threading.Event) -> None:
        self._inner, self._failed, self._trials = inner, failed, 0

    def measure(self, config: Any) -> Any:
        self._trials += 1
        if self._trials == 2:
            self._failed.wait(30)
        return self._inner.measure(config)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _run(db: Path, slots: list[Slot]) -> None:
    """vector_add on ``slots``, its reference raising in the session that computes it second."""
    failed = threading.Event()
    spec = dataclasses.replace(builtin("vector_add"), reference=_second_call_raises(failed))

    @contextmanager
    def make(spec, problem, slot, settings) -> Iterator[Any]:
        with local_measurer(spec, problem, slot, settings) as inner:
            yield _Patient(inner, failed)

    tune_many(
        spec, slots, problem=PROBLEM, strategy="brute_force", db=db, settings=FAST,
        board=Board(io.StringIO(), live=False), make_measurer=make,
    )  # fmt: skip


def _sub(k: int) -> Slot:
    return Slot(get_device(f"opencl:0:0.{k}"), f"opencl:0:0.{k}")


def _campaigns(db: Path) -> list[tuple[str, int]]:
    """(status, results stored) of every campaign."""
    with Store(db) as store:
        return [
            (r[0], r[1])
            for r in store.query(
                "SELECT k.status, (SELECT count(*) FROM results r WHERE r.campaign_id = k.id) "
                "FROM campaigns k ORDER BY k.id"
            )
        ]


def test_an_input_error_in_one_session_stops_the_others(db: Path) -> None:
    """Two sub-devices share a campaign: the one that meets the reference's error stops the
    other after its trial in flight, rather than it measuring the whole space."""
    with pytest.raises(SpecError, match="the numpy reference raised ValueError: only once"):
        _run(db, [_sub(0), _sub(1)])
    ((status, stored),) = _campaigns(db)
    assert status == "failed" and stored <= 2  # kept, not the 11 of the whole space


def test_every_campaign_ends_failed_with_the_input_error(db: Path) -> None:
    """Devices of two kinds get a campaign each: both end failed, keeping what they stored,
    though only one met the error."""
    whole = get_device("opencl:0:0")
    with pytest.raises(SpecError, match="only once"):
        _run(db, [Slot(whole, whole.id), _sub(0)])
    campaigns = _campaigns(db)
    assert [s for s, _ in campaigns] == ["failed", "failed"]
    assert sum(n for _, n in campaigns) <= 2


# No default configuration: both sessions start measuring (and compute the reference) at once,
# rather than one waiting for the other's first trial.
SPEC_FILE = """
import dataclasses, itertools
from perfport import builtin
calls = itertools.count()
def reference(problem, inputs):
    if next(calls):
        raise ValueError("only once")
    return {"c": inputs["a"] + inputs["b"]}
kernel = dataclasses.replace(builtin("vector_add"), reference=reference, default=None)
"""


def test_cli_prints_the_input_error_once_and_exits_2(tmp_path: Path, db: Path, capfd) -> None:
    spec = tmp_path / "once.py"
    spec.write_text(SPEC_FILE)
    done = run_cli(
        capfd, "tune", spec, "--problem", "n=4096", "--device", "opencl:0:0.0", "--device",
        "opencl:0:0.1", "--strategy", "brute_force", "--repeats", "2", "--db", db, "--json",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("perfport: error:")]
    assert errors == [
        "perfport: error: kernel vector_add: the numpy reference raised ValueError: only once"
    ]
    assert "Traceback" not in done.stderr and done.stdout == ""
    ((status, stored),) = _campaigns(db)
    assert status == "failed" and stored < SPACE


class _NoWorker:
    """A slot whose device cannot start a worker: its own failure, not the input's."""

    verification, reference_note = "(no trial ran this session)", ""

    def __init__(self, failed: threading.Event) -> None:
        self.failed = failed

    def measure(self, config: object) -> object:
        self.failed.set()
        raise PerfportError("cannot start a measurement worker on opencl:0:0.1: timed out")


class _AfterFailure:
    """The working slot, held after its first trial until the other slot has failed: else it
    could measure the whole space before the other asks for anything (a flaky test)."""

    def __init__(self, inner: Any, failed: threading.Event) -> None:
        self.inner, self.failed, self.trials = inner, failed, 0
        self.verification, self.reference_note = inner.verification, inner.reference_note

    def measure(self, config: object) -> object:
        self.trials += 1
        if self.trials > 1:
            self.failed.wait(10.0)
        m = self.inner.measure(config)
        self.verification, self.reference_note = self.inner.verification, self.inner.reference_note
        return m


def test_a_device_failure_stops_only_its_own_session(db: Path) -> None:
    failed = threading.Event()

    @contextmanager
    def make(spec, problem, slot, settings) -> Iterator[object]:
        if slot.label.endswith("1"):
            yield _NoWorker(failed)
        else:
            with local_measurer(spec, problem, slot, settings) as inner:
                yield _AfterFailure(inner, failed)

    with pytest.raises(PerfportError, match="cannot start a measurement worker"):
        tune_many(
            "vector_add", [_sub(0), _sub(1)], problem=PROBLEM, strategy="brute_force", db=db,
            settings=FAST, board=Board(io.StringIO(), live=False), make_measurer=make,
        )  # fmt: skip
    ((_, stored),) = _campaigns(db)
    assert stored == SPACE  # the other device measured the whole space
