"""Where Ctrl-C lands decides the campaign's status: only an interrupt that stops the search
leaves it ``interrupted``; once the search has ended (re-timing the best, stopping the worker)
or before it begins on a finished campaign, the campaign keeps its status, while the session
still says it was interrupted (exit 130)."""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import threading
import time

from perfport import RunSettings, Timing, tune
from perfport.cli import main
from perfport.measure import Runner
from perfport.store import CampaignStatus, Store
from perfport.tune import multi
from perfport.tune.result import Stage

TUNE_MODULE = importlib.import_module("perfport.tune.tune")  # the package exports tune()
FAST = RunSettings(timing=Timing.fixed(2))
SMALL = {"kernel": "vector_add", "problem": {"n": 4096}, "strategy": "brute_force"}


def _stored_status(db, key):
    with Store(db) as store:
        return store.campaign(key).status


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_while_re_timing_keeps_the_status_the_search_ended_with(cpu, db, monkeypatch):
    monkeypatch.setattr(TUNE_MODULE, "confirm_campaign", _interrupt)
    result = tune(**SMALL, device=cpu.id, db=db, settings=FAST, budget=3, confirm_top=2)
    assert result.status is CampaignStatus.BUDGET and result.interrupted is Stage.CONFIRM
    assert _stored_status(db, result.campaign) is CampaignStatus.BUDGET
    assert len(result.measurements) == 3
    assert result.to_json()["interrupted"] == "re-timing"


def test_ctrl_c_while_the_worker_starts_keeps_a_finished_campaign(cpu, db, monkeypatch):
    first = tune(**SMALL, device=cpu.id, db=db, settings=FAST)
    assert first.status is CampaignStatus.COMPLETE and first.interrupted is None
    monkeypatch.setattr(Runner, "__enter__", _interrupt)
    again = tune(**SMALL, device=cpu.id, db=db, settings=FAST)
    assert again.status is CampaignStatus.COMPLETE and again.interrupted is Stage.START
    assert _stored_status(db, again.campaign) is CampaignStatus.COMPLETE
    # a campaign that had not finished (here: a new one) is interrupted, as before
    fresh = tune(**SMALL, device=cpu.id, db=db.with_name("new.db"), settings=FAST)
    assert fresh.status is CampaignStatus.INTERRUPTED and fresh.interrupted is Stage.START


def test_cli_exits_130_and_says_the_campaign_kept_its_status(cpu, db, monkeypatch, capsys):
    monkeypatch.setattr(TUNE_MODULE, "confirm_campaign", _interrupt)
    argv = ["tune", "vector_add", "--problem", "n=4096", "--strategy", "brute_force",
            "--repeats", "2", "--budget", "3", "--device", cpu.id, "--db", str(db), "--json"]  # fmt: skip
    assert main(argv) == 130
    out, err = capsys.readouterr()
    printed = json.loads(out)
    assert printed["status"] == "budget" and printed["interrupted"] == "re-timing"
    assert "interrupted after the search ended, during the re-timing" in err
    assert "keeps its status budget" in err


def test_many_devices_ctrl_c_leaves_a_campaign_that_had_ended_as_it_ended(monkeypatch):
    """Ctrl-C made every campaign interrupted, one whose sessions had all ended too."""
    release = threading.Event()

    def session(store, run, kind, slot, lane, errors, ahead):
        if kind.name == "done":
            kind.statuses.append(CampaignStatus.COMPLETE)
            return
        while not run.stop.is_set():  # stops when asked, as a real session does
            time.sleep(0.05)
        kind.statuses.append(CampaignStatus.INTERRUPTED)
        release.set()

    monkeypatch.setattr(multi, "_session", session)
    run = type("Run", (), {"stop": threading.Event()})()
    slot = type("Slot", (), {"label": "a"})()
    done, busy = (type("Kind", (), {"slots": [slot], "statuses": [], "name": n})()
                  for n in ("done", "busy"))  # fmt: skip
    board = type("Board", (), {"stream": sys.stderr, "lane": lambda self, label: None})()
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    multi._run_sessions(None, run, [done, busy], board, [])
    assert release.is_set() and run.stop.is_set()
    assert done.statuses == [CampaignStatus.COMPLETE] and done.interrupted
    assert busy.statuses == [CampaignStatus.INTERRUPTED] and busy.interrupted
