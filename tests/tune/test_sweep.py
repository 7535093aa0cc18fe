"""Sweeps: every configuration at each of many problems, in process, stored per problem."""

import dataclasses
import json
import threading
import time

import pytest

from conftest import DATA
from perfport import load_kernel
from perfport._core import Measurement, Outcome, PerfportError, SpecError
from perfport.kernels import load_problems, resolve_kernel
from perfport.measure import RunSettings, Timing, TrialEngine
from perfport.space import kernel_space
from perfport.store import CampaignStatus, Store, campaign_settings
from perfport.tune import (
    SWEEP_TIMING,
    Gold,
    SweepInterrupted,
    campaign_key,
    resolve_problem,
    sweep,
)
from tune.cli_in_process import run_cli

PROBLEMS = [{"n": 4096}, {"n": 1000}, {"n": 333}]


def test_sweep_stores_every_problem_and_resumes(cpu, db):
    steps = list(sweep("vector_add", PROBLEMS, device=cpu, db=db))
    assert [s.problem["n"] for s in steps] == [4096, 1000, 333]
    for step in steps:
        assert step.measured > 0 and step.outcomes["ok"] == step.measured
        assert step.best_ms is not None and step.best_ms > 0
    again = list(sweep("vector_add", PROBLEMS, device=cpu, db=db))
    assert [s.measured for s in again] == [0, 0, 0]  # nothing measured twice
    assert [s.outcomes for s in again] == [s.outcomes for s in steps]
    with Store(db, create=False) as store:
        rows = store.query("SELECT status, COUNT(*) FROM campaigns GROUP BY status")
    assert [tuple(r) for r in rows] == [("complete", 3)]


def test_sweep_stops_starting_problems_after_the_time_limit(cpu, db):
    assert list(sweep("vector_add", PROBLEMS, device=cpu, db=db, max_seconds=0)) == []


@pytest.mark.parametrize("gold", list(Gold))
def test_sweep_catches_wrong_results(cpu, db, gold):
    """MODE 2 of the probe writes a wrong answer: caught against the numpy reference and
    against the default configuration's output alike. Each (build, size) is checked once."""
    spec = dataclasses.replace(
        load_kernel(DATA / "probe.py"), restrictions=("MODE in (0, 2)", "lmem == 1")
    )
    settings = RunSettings(timing=SWEEP_TIMING)
    steps = list(
        sweep(spec, [{"n": 256}, {"n": 512}], device=cpu, db=db, settings=settings, gold=gold)
    )
    assert [s.problem["n"] for s in steps] == [256, 512]  # an empty loop would check nothing
    for step in steps:
        assert step.outcomes[Outcome.OK.value] == 2
        assert step.outcomes[Outcome.WRONG_RESULT.value] == 2


def test_sweep_never_times_a_configuration_by_one_launch():
    """One delayed launch must not stand as a configuration's time, however slow it is."""
    assert SWEEP_TIMING.repeats(first_ms=50.0) >= 3
    assert SWEEP_TIMING.repeats(first_ms=0.01) == SWEEP_TIMING.max_repeats


def test_problem_sets_and_files(tmp_path):
    gemm = load_problems("lawson-gemm")
    assert len(gemm) == 431
    assert len({(p["M"], p["N"], p["K"], p["batch"]) for p in gemm}) == 299
    assert set(gemm[0]) == {"M", "N", "K", "batch", "trans_a", "trans_b"}
    path = tmp_path / "p.csv"
    path.write_text("# comment\nn, dtype\n64, float\n128, double\n")
    assert load_problems(path) == [{"n": 64, "dtype": "float"}, {"n": 128, "dtype": "double"}]


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "header line"), ("n,n\n1,2\n", "once"), ("n,m\n1\n", "line 2 has 1 values")],
)
def test_malformed_problem_files(tmp_path, text, message):
    path = tmp_path / "p.csv"
    path.write_text(text)
    with pytest.raises(SpecError, match=message):
        load_problems(path)
    with pytest.raises(SpecError, match="no problem file"):
        load_problems(tmp_path / "missing.csv")


def test_sweep_cli_json(tmp_path, capfd):
    path = tmp_path / "p.csv"
    path.write_text("n\n512\n1024\n")
    done = run_cli(capfd, "sweep", "vector_add", "--problems", path, "--db", tmp_path / "s.db",
                   "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["problem"]["n"] for line in lines] == [512, 1024]
    assert all(line["outcomes"]["ok"] == line["measured"] > 0 for line in lines)
    assert [line["status"] for line in lines] == ["complete", "complete"]
    bad = run_cli(capfd, "sweep", "vector_add", "--problems", tmp_path / "x.csv")
    assert bad.returncode == 2 and "no problem file" in bad.stderr


def test_sweep_cli_says_what_max_time_left(tmp_path, capfd):
    """--max-time stopped a sweep silently, exit 0, nothing saying problems were left."""

    def perfport(*args):
        done = run_cli(capfd, *args)
        assert done.returncode == 0, done.stderr
        return done

    path = tmp_path / "p.csv"
    path.write_text("n\n512\n1024\n333\n")
    args = ("sweep", "vector_add", "--problems", path, "--db", tmp_path / "s.db", "--max-time")
    done = perfport(*args, "0.001", "--json")  # past it before the second problem at the latest
    *steps, last = [json.loads(line) for line in done.stdout.splitlines()]
    assert last["why"] == "--max-time" and last["skipped"]
    assert [s["problem"]["n"] for s in steps] + [p["n"] for p in last["skipped"]] == [
        512,
        1024,
        333,
    ]
    done = perfport(*args, "0.001")
    said = " ".join(done.stdout.split())  # as wrapped at 80 columns
    assert "problem(s) not measured (run the same command again to resume)" in said
    done = perfport(*args[:-1], "--json")  # no --max-time: all done, nothing skipped
    assert [json.loads(line)["problem"]["n"] for line in done.stdout.splitlines()] == [
        512,
        1024,
        333,
    ]


def test_rounds_interleave_and_keep_every_sample(cpu, db):
    """Three rounds: every configuration carries the samples of all three (one fixed-count
    batch per round), in a campaign of its own, which resumes without measuring again."""
    settings = RunSettings(timing=Timing.fixed(2, warmup=0))
    problems = PROBLEMS[:2]
    once = list(sweep("vector_add", problems, device=cpu, db=db, settings=settings))
    thrice = list(sweep("vector_add", problems, device=cpu, db=db, settings=settings, rounds=3))
    assert [s.campaign for s in once] != [s.campaign for s in thrice]
    assert [s.measured for s in thrice] == [s.measured for s in once]
    with Store(db, create=False) as store:
        for step in thrice:
            results = store.measurements(store.campaign(step.campaign))
            assert len(results) == step.measured
            assert {len(m.times_ms) for m in results if m.ok} == {6}
    again = list(sweep("vector_add", problems, device=cpu, db=db, settings=settings, rounds=3))
    assert [s.measured for s in again] == [0, 0]
    with pytest.raises(PerfportError, match="at least 1 round"):
        list(sweep("vector_add", problems, device=cpu, db=db, rounds=0))


def test_a_problem_table_with_a_byte_order_mark_reads_its_first_name(tmp_path):
    """A spreadsheet's BOM made the first column '\\ufeffn': 'no problem value \\ufeffn'."""
    from perfport.kernels import load_problems

    path = tmp_path / "p.csv"
    path.write_text("\ufeffn\n1024\n", encoding="utf-8")
    assert load_problems(path) == [{"n": 1024}]


def test_a_sweep_leaves_what_another_writer_claims_and_reports_what_the_store_holds(cpu, db):
    """Two sweeps of one --db both measured everything, and each reported the best of its own
    results, not the store's. Another writer holds two configurations here: one it stores
    (faster than any real run), one whose claim lapses (as if it had been killed)."""
    spec, settings = resolve_kernel("vector_add"), RunSettings(timing=SWEEP_TIMING)
    problem = resolve_problem(spec, {"n": 4096})
    space = kernel_space(spec, problem, cpu)
    configs = list(space)
    key = campaign_key(spec, problem, cpu, space, "sweep", settings)
    other = (
        "another-host:1:0"  # alive as far as this host can tell: its claims hold till they lapse
    )
    with Store(db) as store:
        ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(problem))
        made = campaign_settings(dataclasses.asdict(settings), spec)
        campaign = store.open_campaign(key, ids, "brute_force", settings.seed, made, space.report)
        store.claim(campaign, configs[0], other, lease_s=600)
        store.claim(campaign, configs[1], other, lease_s=1.0)

    def store_the_held_one() -> None:  # once the sweep has stored all it could claim
        with Store(db) as store:
            deadline = time.monotonic() + 120
            while len(store.measurements(campaign)) < len(configs) - 2:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            store.record(campaign, Measurement(configs[0], Outcome.OK, times_ms=(1e-6,) * 3))

    writer = threading.Thread(target=store_the_held_one)
    writer.start()
    (step,) = sweep(spec, [{"n": 4096}], device=cpu, db=db, settings=settings)
    writer.join()
    assert step.measured == len(configs) - 1  # the lapsed claim measured here, the held one not
    assert step.best_ms == 1e-6 and step.outcomes["ok"] == len(configs)
    with Store(db, create=False) as store:
        assert not store.live_claims(store.campaign(key))


def test_sweep_json_prints_the_interrupted_problem_then_exits_130(tmp_path, capsys, monkeypatch):
    """'tune --json' prints its result on an interrupt; 'sweep --json' printed no line for the
    problem it stopped in."""
    from perfport.cli import main

    real, calls = TrialEngine.run, []

    def interrupted_third(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 3:  # as Ctrl-C or SIGTERM during the third trial
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TrialEngine, "run", interrupted_third)
    path, db = tmp_path / "p.csv", tmp_path / "s.db"
    path.write_text("n\n512\n1024\n")
    assert main(["sweep", "vector_add", "--problems", str(path), "--db", str(db), "--json"]) == 130
    out, err = capsys.readouterr()
    (line,) = [json.loads(text) for text in out.splitlines()]
    assert line["problem"]["n"] == 512 and line["status"] == "interrupted"
    assert line["measured"] == line["outcomes"]["ok"] == 2
    assert err.strip() == "perfport: interrupted"
    with Store(db, create=False) as store:
        campaign = store.campaign(line["campaign"])
        assert campaign.status.value == "interrupted" and len(store.measurements(campaign)) == 2


def test_an_interrupted_sweep_raises_with_the_problem_it_stopped_in(cpu, db, monkeypatch):
    """A caller still gets a KeyboardInterrupt, never a step for the interrupted problem (a
    caller zipping problems with steps would miss an interrupt in its last problem)."""
    real, calls = TrialEngine.run, []

    def interrupted_third(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 3:  # as Ctrl-C or SIGTERM during the third trial
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TrialEngine, "run", interrupted_third)
    steps = sweep("vector_add", PROBLEMS[:1], device=cpu, db=db)
    with pytest.raises(SweepInterrupted) as stop:
        next(steps)
    assert isinstance(stop.value, KeyboardInterrupt)
    assert stop.value.progress.status is CampaignStatus.INTERRUPTED
    assert stop.value.progress.measured == stop.value.progress.outcomes["ok"] == 2


def test_every_problem_and_round_starts_from_the_seeded_data(cpu, db):
    """A sweep verifies a configuration at the first problem only, and in its later rounds not
    at all: those launches ran on what the previous configuration left (heavy_once is slow
    only on its seeded data, so only the first configuration timed paid for it)."""
    settings = RunSettings(timing=Timing.fixed(2, warmup=0))
    problems = [{"n": 64}, {"n": 128}]
    steps = list(sweep(load_kernel(DATA / "heavy_once.py"), problems, device=cpu, db=db,
                       settings=settings, rounds=2))  # fmt: skip
    with Store(db, create=False) as store:
        for step in steps:
            assert step.outcomes[Outcome.OK.value] == 3
            for m in store.measurements(store.campaign(step.campaign)):
                light = min(m.times_ms[1], m.times_ms[3])  # repetitions: on the data left
                # At the first problem the untimed verification launch ran on the seeded data.
                firsts = m.times_ms[2:3] if step.problem["n"] == 64 else m.times_ms[0:3:2]
                assert all(t > 10.0 * light for t in firsts), (step.problem, m.times_ms)


def test_a_sweep_resets_an_input_used_as_scratch(cpu, db):
    """An input the kernel overwrites reached later configurations as earlier ones left it."""
    (step,) = sweep(load_kernel(DATA / "scratch_input.py"), [{"n": 4096}], device=cpu, db=db)
    assert step.outcomes[Outcome.OK.value] == 3
