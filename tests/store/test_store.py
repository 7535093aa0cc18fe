import dataclasses
import io
import json
import sqlite3

import pytest

from conftest import vector_add_campaign
from perfport import Config, Measurement, Outcome, Problem, builtin
from perfport._core import StoreError
from perfport.space import kernel_space
from perfport.store import (
    SCHEMA_VERSION,
    CampaignStatus,
    Store,
    best_results,
    export_rows,
    write_csv,
    write_json,
)


def test_records_round_trip_with_samples(db, cpu):
    with Store(db) as store:
        assert store.wal
        _, c = vector_add_campaign(store, cpu)
        ok = Measurement(Config.of(wg=64), Outcome.OK, times_ms=(1.0, 2.0, 3.0), compile_ms=5.0)
        bad = Measurement(Config.of(wg=8), Outcome.LAUNCH_REFUSED, "INVALID_WORK_GROUP_SIZE: no")
        assert store.record(c, ok) and store.record(c, bad)
        assert not store.record(c, ok)  # never a duplicate
        got = store.measurements(c)
    assert [m.config for m in got] == [ok.config, bad.config]
    assert got[0].times_ms == (1.0, 2.0, 3.0) and got[0].stats.median == 2.0
    assert got[1].outcome is Outcome.LAUNCH_REFUSED and got[1].message == bad.message


def test_reopen_resumes_same_campaign(db, cpu):
    with Store(db) as store:
        _spec, c = vector_add_campaign(store, cpu)
        store.record(c, Measurement(Config.of(wg=64), Outcome.OK, times_ms=(1.0,)))
        store.set_status(c, CampaignStatus.BUDGET)
    with Store(db) as store:
        _, again = vector_add_campaign(store, cpu)
        assert again.id == c.id and again.status is CampaignStatus.RUNNING
        assert len(store.measurements(again)) == 1
        other = builtin("stencil")
        with pytest.raises(StoreError, match=r"another kernel \(stored 'vector_add'"):
            ids = (store.device_id(cpu), store.kernel_id(other), store.problem_id(other.problem))
            store.open_campaign("c1", ids, "random", 0, {}, kernel_space(other, None, cpu).report)


def test_a_campaign_key_refused_says_what_differs(db, cpu):
    """A spec whose source was edited is a new kernel: the refusal says so, with both hashes
    and the way out, rather than 'another device, kernel or problem'."""
    with Store(db) as store:
        spec, c = vector_add_campaign(store, cpu)
        problem = spec.problem.merged({"n": 100})
        edited = dataclasses.replace(spec, source=spec.source + "\n// edited\n")
        was, now = spec.source_hash[:12], edited.source_hash[:12]
        refused = rf"kernel 'vector_add' whose source changed \({was}, now {now}\); .*restore"
        with pytest.raises(StoreError, match=refused):
            store.check_campaign_key(
                "c1", cpu, edited.source_hash, problem, kernel_name="vector_add"
            )
        ids = (store.device_id(cpu), store.kernel_id(edited), store.problem_id(problem))
        with pytest.raises(StoreError, match=refused):
            store.open_campaign("c1", ids, "random", 0, {}, kernel_space(spec, problem, cpu).report)
        other = spec.problem.merged({"n": 200})
        with pytest.raises(StoreError, match=r"another problem .*n.:200") as refusal:
            store.check_campaign_key("c1", cpu, spec.source_hash, other, kernel_name="vector_add")
        assert "kernel" not in str(refusal.value) and "restore" not in str(refusal.value)
        assert store.campaign("c1").id == c.id


def test_best_results_and_export(db, cpu):
    with Store(db) as store:
        _, c = vector_add_campaign(store, cpu)
        store.record(c, Measurement(Config.of(wg=64), Outcome.OK, times_ms=(4.0,)))  # the default
        store.record(c, Measurement(Config.of(wg=256), Outcome.OK, times_ms=(1.0, 1.0)))
        store.record(c, Measurement(Config.of(wg=1), Outcome.WRONG_RESULT, "off by one"))
        (best,) = best_results(store)
        assert best.best == Config.of(wg=256) and best.speedup == pytest.approx(4.0)
        assert best.outcomes == {"ok": 2, "wrong_result": 1}
        rows = list(export_rows(store))
        out = io.StringIO()
        assert write_json(rows, out) == 3
        assert json.loads(out.getvalue())[1]["times_ms"] == [1.0, 1.0]
        out = io.StringIO()
        write_csv(rows, out)
        lines = out.getvalue().splitlines()
        assert len(lines) == 4 and "param.wg" in lines[0] and "problem.n" in lines[0]


def test_not_a_database(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, not sqlite " * 100)
    with pytest.raises(StoreError, match="give another --db path"):
        Store(path)
    assert path.read_text().startswith("hello")  # untouched


def test_a_database_locked_past_the_busy_timeout_says_so_not_use_another():
    from perfport.store.integrity import unusable

    locked = str(unusable("r.db", sqlite3.OperationalError("database is locked")))
    assert "locked by another process" in locked and "retry" in locked and "--db" not in locked
    other = str(unusable("r.db", sqlite3.DatabaseError("file is not a database")))
    assert "cannot use r.db" in other and "give another --db" in other


def test_foreign_sqlite_and_newer_schema_refused(tmp_path):
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE stuff (x)")
    before = foreign.read_bytes()
    with pytest.raises(StoreError, match="not a perfport one"):
        Store(foreign)
    assert foreign.read_bytes() == before  # not even switched to WAL: the file is not ours
    newer = tmp_path / "newer.db"
    Store(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="upgrade perfport"):
        Store(newer)


def test_problem_identity_includes_defaults(db, cpu):
    with Store(db) as store:
        spec = builtin("vector_add")
        assert store.problem_id(spec.problem.merged({})) == store.problem_id(
            spec.problem.merged({"n": spec.problem["n"]})
        )
        assert store.problem_id(spec.problem) != store.problem_id(Problem.of(n=1))


def test_migration_steps_apply_in_place_and_keep_data(db, cpu, monkeypatch):
    from perfport.store import schema

    with Store(db) as store:
        _, c = vector_add_campaign(store, cpu)
        store.record(c, Measurement(Config.of(wg=64), Outcome.OK, times_ms=(1.5,)))
    step = "ALTER TABLE results ADD COLUMN note TEXT; CREATE TABLE extra (x INTEGER)"
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, step))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with Store(db) as store:
        assert store.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION + 1
        assert store.query("SELECT median_ms, note FROM results")[0][:] == (1.5, None)
        assert [m.time_ms for m in store.measurements(store.campaign("c1"))] == [1.5]


def test_read_only_commands_do_not_create_databases(tmp_path):
    with pytest.raises(StoreError, match="no results database"):
        Store(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()
    import perfport

    with pytest.raises(StoreError, match="no results database"):
        perfport.results(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_a_closed_store_or_one_from_another_thread_is_a_store_error(db, cpu):
    """Both were raw sqlite3.ProgrammingErrors naming neither the database nor the fix."""
    import threading

    with Store(db) as store:
        vector_add_campaign(store, cpu)
        campaign = store.campaign("c1")
        caught: list[Exception] = []

        def elsewhere() -> None:
            try:
                best_results(store)
            except Exception as exc:
                caught.append(exc)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        assert isinstance(caught[0], StoreError)
        assert "opened in another thread" in str(caught[0]) and "in each thread" in str(caught[0])
    for use in (
        lambda: best_results(store),
        lambda: store.campaign("c1"),
        lambda: store.record_many(campaign, []),
    ):
        with pytest.raises(StoreError, match=f"^{db}: this Store is closed; open it again"):
            use()


def test_read_only_refuses_a_foreign_or_empty_sqlite_file_as_not_perfport(tmp_path):
    """Opened read-only, a file perfport did not make is named as such, not offered a
    migration (migrating would write perfport's tables into someone else's database)."""
    from perfport.store import ReadOnlyStore

    foreign = tmp_path / "other.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    for path, what in ((foreign, "not a perfport one"), (empty, "is empty")):
        with pytest.raises(StoreError, match=what) as caught:
            ReadOnlyStore(path)
        assert "migrate" not in str(caught.value)
    with sqlite3.connect(foreign) as conn:  # untouched
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["t"]


def test_results_say_which_best_comes_from_a_campaign_that_did_not_finish(db, cpu):
    """A campaign killed after 3 of its 40 results (status still 'running'), interrupted or
    failed showed its best in `results --json` as if it were finished."""
    from perfport.store import CampaignStatus, best_results

    with Store(db) as store:
        _, campaign = vector_add_campaign(store, cpu)
        store.record(campaign, Measurement(Config.of(wg=64), Outcome.OK, times_ms=(1.5,)))
        (running,) = best_results(store)
        assert not running.finished and running.campaign_statuses == {"running": 1}
        assert running.to_json()["finished"] is False
        assert running.to_json()["campaign_statuses"] == {"running": 1}
        store.set_status(campaign, CampaignStatus.BUDGET)
        (done,) = best_results(store)
        assert done.finished and done.to_json()["campaign_statuses"] == {"budget": 1}
        _, second = vector_add_campaign(store, cpu, key="c2")  # the same target, killed
        store.record(second, Measurement(Config.of(wg=32), Outcome.OK, times_ms=(2.0,)))
        store.set_status(second, CampaignStatus.INTERRUPTED)
        (both,) = best_results(store)
        # The best (1.5 ms) is the finished campaign's: a killed one beside it does not make
        # it partial (it was marked '*' whenever any campaign of the target was unfinished).
        assert both.finished and both.campaign_statuses == {"budget": 1, "interrupted": 1}
        store.record(second, Measurement(Config.of(wg=16), Outcome.OK, times_ms=(1.0,)))
        (faster,) = best_results(store)
        assert faster.best_ms == 1.0 and not faster.finished  # the best is the killed one's
