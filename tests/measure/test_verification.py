"""Verification stored per result: against what, and what happens when the reference fails."""

import dataclasses
import json
import sqlite3

from conftest import DATA
from perfport import (
    ArrayArg,
    KernelSpec,
    Param,
    ParamKind,
    RunSettings,
    Timing,
    load_kernel,
    tune,
)
from perfport._core import Check, Outcome
from perfport.store import SCHEMA_VERSION, Store, export_rows
from perfport.store.schema import MIGRATIONS, _statements
from tune.cli_in_process import run_cli

SETTINGS = RunSettings(timing=Timing.fixed(2), timeout_s=3.0)


def test_a_crashing_default_hands_the_reference_to_the_next_configuration(db):
    """No numpy reference and a default configuration that kills its worker: the first
    configuration that runs becomes the reference, the results say so (also after the worker
    was restarted), and a wrong result is still caught."""
    spec = dataclasses.replace(
        load_kernel(DATA / "probe.py"),
        reference=None,
        restrictions=("MODE in (0, 2, 4)", "MODE != 4 or wg == 8"),
        default={"MODE": 4, "wg": 8, "lmem": 1},
    )
    result = tune(spec, strategy="brute_force", db=db, settings=SETTINGS)
    by = {(m.config["MODE"], m.config["wg"]): m for m in result.measurements if m.outcome.measured}
    assert by[(4, 8)].outcome is Outcome.CRASHED and by[(4, 8)].check is None
    assert by[(0, 8)].check is Check.REFERENCE  # the first that ran after the default
    assert by[(0, 16)].check is Check.VERIFIED
    assert by[(2, 8)].outcome is Outcome.WRONG_RESULT and by[(2, 8)].check is Check.VERIFIED
    against = by[(0, 16)].verified_against
    assert against.startswith("reference configuration MODE=0 lmem=1 wg=8")
    assert "MODE=4 lmem=1 wg=8 gave crashed" in against
    assert result.verification == against and result.unverified == 0
    assert any("another configuration" in w for w in result.warnings)
    entry = result.to_json()["best"]
    assert entry["verified"] in (True, False) and "verified_against" in entry
    with Store(db) as store:  # stored per result, as measured
        rows = {(r.config["MODE"], r.config["wg"]): r for r in export_rows(store)}
    assert rows[(0, 16)].verified is True and rows[(0, 16)].verified_against == against
    assert rows[(0, 8)].verification is Check.REFERENCE and rows[(0, 8)].verified is False


def test_unverified_campaign_is_loud(tmp_path, capfd):
    db = tmp_path / "u.db"
    done = run_cli(capfd, "tune", "vector_add", "--problem", "n=4096", "--budget", "2",
                   "--repeats", "2", "--no-verify", "--db", db, "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["unverified"] == 2 and report["best"]["verified"] is False
    assert report["best"]["verification"] == "unverified"
    assert "warning: 2 of 2 correct-looking results are not verified" in done.stderr
    assert "--no-verify" in done.stderr
    said = done.stderr.splitlines()  # and before the campaign, too
    assert (
        said[0]
        == "warning: outputs will not be verified (verification is off): wrong results are timed"
    )
    done = run_cli(capfd, "results", "--db", db, "--json")
    (best,) = json.loads(done.stdout)["results"]
    assert best["verified"] is False and best["unverified"] == 2
    assert "warning: 2 correct-looking results are not verified" in done.stderr
    rows = json.loads(run_cli(capfd, "export", "--db", db, "--format", "json").stdout)
    assert [(r["verified"], r["verified_against"]) for r in rows] == [(False, None)] * 2


def test_verified_tune_is_quiet_and_says_against_what(db):
    result = tune("vector_add", problem={"n": 4096}, budget=2, db=db, settings=SETTINGS)
    assert result.warnings == () and result.unverified == 0
    assert {(m.check, m.verified_against) for m in result.measurements} == {
        (Check.VERIFIED, "numpy reference")
    }


def _schema_1_database(path):
    """A database as perfport wrote it at schema version 1, with one result."""
    with sqlite3.connect(path) as conn:
        for statement in _statements(MIGRATIONS[0]):
            conn.execute(statement)
        conn.execute("PRAGMA user_version = 1")
        conn.execute("INSERT INTO devices VALUES (1, 'fp', 'opencl', 'dev', 'v', 'cpu', 'd', '{}')")
        spec = json.dumps({"name": "k", "params": [{"name": "wg", "values": [1]}]})
        conn.execute("INSERT INTO kernels VALUES (1, 'h', 'k', 'opencl', 'k', '', ?)", (spec,))
        conn.execute("""INSERT INTO problems VALUES (1, '{"n": 1}')""")
        conn.execute("""INSERT INTO configs VALUES (1, 1, '{"wg": 1}')""")
        conn.execute(
            "INSERT INTO campaigns VALUES (1, 'c', 1, 1, 1, 'random', 0, '{}', "
            """'{"cartesian": 1, "legal": 1, "removed_by": [], "pruned": 0}', 'complete', """
            "'0.1', 0, 0)"
        )
        conn.execute(
            "INSERT INTO results (id, campaign_id, config_id, outcome, message, n, median_ms, "
            "tool_version, created) VALUES (1, 1, 1, 'ok', '', 1, 2.5, '0.1', 0)"
        )
        conn.execute("INSERT INTO samples VALUES (1, ?)", (b"\x00" * 4 + b"\x00\x00\x04@",))


def test_schema_1_database_migrates_with_verification_unknown(tmp_path):
    path = tmp_path / "old.db"
    _schema_1_database(path)
    with Store(path) as store:
        assert store.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION >= 5
        (row,) = export_rows(store)
        assert row.median_ms == 2.5 and row.times_ms == (2.5,)
        assert row.verification is None and row.verified is None
        assert row.to_json()["verified"] is None and row.to_json()["verified_against"] is None
        (m,) = store.measurements(store.campaign("c"))
        assert m.check is None and m.time_ms == 2.5
        assert store.live_claims(store.campaign("c")) == frozenset()  # the claims table is there


def test_the_reference_outlives_a_worker_restart(db):
    """The reference outputs stay with the parent: after a crash, the fresh worker verifies
    against them without measuring the reference configuration again."""
    spec = dataclasses.replace(load_kernel(DATA / "probe.py"), reference=None)
    configs = [{"MODE": 4, "wg": 8, "lmem": 1}, {"MODE": 0, "wg": 16, "lmem": 1},
               {"MODE": 2, "wg": 8, "lmem": 1}]  # fmt: skip
    result = tune(spec, configs=configs, db=db, settings=SETTINGS)
    crashed, correct, wrong = result.measurements
    assert crashed.outcome is Outcome.CRASHED
    assert correct.check is Check.VERIFIED and wrong.outcome is Outcome.WRONG_RESULT
    assert correct.verified_against == "reference configuration MODE=0 lmem=1 wg=8"
    assert wrong.verified_against == correct.verified_against


def test_a_default_outside_the_restrictions_is_not_the_reference(db):
    """A default the kernel's restrictions exclude is never run to make the reference
    outputs: here it computes wrong results, which judged every legal configuration wrong."""
    spec = dataclasses.replace(
        load_kernel(DATA / "probe.py"),
        reference=None,
        restrictions=("MODE == 0", "lmem == 1"),
        default={"MODE": 2, "wg": 8, "lmem": 1},
    )
    result = tune(spec, strategy="brute_force", db=db, settings=SETTINGS)
    assert result.outcomes["ok"] == 2 and result.outcomes["wrong_result"] == 0
    assert "breaks the kernel's restriction MODE == 0" in result.verification
    assert {m.config["MODE"] for m in result.measurements} == {0}


def test_a_default_of_only_nan_is_not_the_reference(db):
    """Without a numpy reference, a default configuration whose output is NaN everywhere is
    not the reference (it judged every correct configuration wrong: 'expected nan'): its
    result is unverified, and the first configuration that runs with finite outputs serves."""
    src = """__kernel void k(__global float* y, __global const float* x) {
        int i = get_global_id(0);
        y[i] = (get_local_size(0) == 64) ? NAN : x[i];
    }"""
    spec = KernelSpec(
        name="gold_nan", source=src, entry="k",
        params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),), global_size=("n",),
        local_size=("wg",), problem={"n": 1024}, default={"wg": 64},
        args=(ArrayArg("y", "float", ("n",), output=True), ArrayArg("x", "float", ("n",))),
    )  # fmt: skip
    result = tune(spec, configs=[{"wg": 64}, {"wg": 16}, {"wg": 32}], db=db, settings=SETTINGS)
    default, first, second = result.measurements
    assert [m.outcome for m in result.measurements] == [Outcome.OK] * 3
    assert default.check is Check.UNVERIFIED
    assert "wrote no finite value to output 'y'" in default.message
    assert first.check is Check.REFERENCE and second.check is Check.VERIFIED
    assert second.verified_against.startswith("reference configuration wg=16 (the default ")
    assert "wg=64 wrote no finite value to output 'y'" in second.verified_against
    assert result.unverified == 1
    assert any("another configuration" in w for w in result.warnings)
