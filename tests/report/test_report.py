"""``perfport report``: one offline page holding every section, figures as inline SVG."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from report_store import imported_store_at, small_store_at

from perfport._core import StoreError
from perfport.report import write_report


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    return small_store_at(tmp_path)


def test_report_holds_every_section_offline(small_store: Path, tmp_path: Path):
    written = write_report(small_store, tmp_path / "out")
    page = Path(written.files[0]).read_text()
    assert written.results == 14 and written.campaigns == 2
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    assert "https://" not in page
    for title in ("best so far against evaluations", "best so far against time", "outcomes",
                  "wg: median ms per value", "split plan"):  # fmt: skip
        assert f"<title>{title}" in page, title
    assert page.count("<svg") == 2 * 4 + 1  # per campaign 3 figures + 1 effect; 1 plan
    assert "Across devices" in page and "best of GPU Alpha" in page
    assert "speedup over the default (wg=64)" in page  # the default measured on both
    assert 'class="sortable"' in page and "<script>" in page
    # The best of GPU Alpha (wg=64) runs 1.50x its own best... on Beta: the matrix says so.
    assert re.search(r'data-v="1\.0">1\.00<', page)


def test_report_filters_and_refuses_empty(small_store: Path, tmp_path: Path):
    one = write_report(small_store, tmp_path / "one", device="GPU Beta")
    assert one.campaigns == 1 and "Across devices" not in Path(one.files[0]).read_text()
    with pytest.raises(StoreError, match=r"no results in .* match --kernel 'nothing'; ") as e:
        write_report(small_store, tmp_path / "none", kernel="nothing")
    assert "None" not in str(e.value)  # it said "--device None" of a flag not given
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="is a file, not a directory"):
        write_report(small_store, tmp_path / "file")


def test_cli_report_json_lists_the_written_files(small_store: Path, tmp_path: Path):
    out = tmp_path / "cli"
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "report", "--db", str(small_store), "-o", str(out),
         "--json"], capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(done.stdout)["files"] == [str(out / "index.html")]
    bad = subprocess.run(
        [sys.executable, "-m", "perfport", "report", "--db", str(tmp_path / "no.db"), "-o",
         str(out)], capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_imported_campaigns_draw_no_time_axis(tmp_path: Path):
    # An import stores when it ran, not when Kernel Tuner measured: the figure drew the
    # import's 0-1.5 s for a cache measured over 31 hours. Now it is left out, with a note.
    db = imported_store_at(tmp_path, {"GPU A": {32: 2.0, 64: 1.0, 128: 3.0}})
    page = Path(write_report(db, tmp_path / "out").files[0]).read_text()
    assert "<title>best so far against evaluations" in page
    assert "<title>best so far against time" not in page
    assert "these results were imported" in page


def test_cross_device_matrix_says_failed_not_unmeasured(tmp_path: Path):
    # A's best (wg=64) failed on B: the cell said "-", which the page defines as never measured.
    db = imported_store_at(tmp_path, {
        "GPU A": {32: 2.0, 64: 1.0, 128: 3.0, 256: 4.0},
        "GPU B": {32: 1.0, 64: "RuntimeFailedConfig", 128: 2.0, 256: 3.0},
    })  # fmt: skip
    page = Path(write_report(db, tmp_path / "out").files[0]).read_text()
    row = re.search(r"<td>best of GPU A</td>(.*?)</tr>", page)
    assert row is not None
    assert 'data-v="1.0">1.00<' in row.group(1)  # on A itself
    assert "failed (launch_refused)" in row.group(1)  # on B: tried, no time
    assert "where it ran there and gave no time" in page  # the legend says what it means
    other = re.search(r"<td>best of GPU B</td>(.*?)</tr>", page)
    assert other is not None and "failed" not in other.group(1)  # B's best ran on A: 2.00


def test_a_campaign_that_did_not_finish_says_so(small_store: Path, tmp_path: Path):
    """A killed campaign's page read as a finished one: its status was shown nowhere."""
    import sqlite3

    with sqlite3.connect(small_store) as conn:
        conn.execute("UPDATE campaigns SET status = 'running' WHERE key = 'c0'")
    conn.close()
    page = Path(write_report(small_store, tmp_path / "out").files[0]).read_text()
    assert page.count("<b>campaign running</b>") == 1
    assert "its best is of what it measured so far" in page


def test_kernels_sharing_a_name_have_titles_that_tell_them_apart(tmp_path: Path):
    """After a source edit two kernels share a name: their sections had one title, and the
    cross-device matrix mixed both kernels' results."""
    import dataclasses

    from perfport import Measurement, Outcome, builtin
    from perfport.space import PruningReport
    from perfport.store import Store
    from perfport.store.formats.imported import external_device

    first = builtin("vector_add")
    edited = dataclasses.replace(first, source=first.source + "\n// edited\n")
    db = tmp_path / "r.db"
    runs = ((first, "GPU A"), (edited, "GPU B"), (first, "GPU B"))
    with Store(db) as store:
        for n, (spec, name) in enumerate(runs):
            device, problem, report = external_device(name), spec.problem, PruningReport(0, 0, ())
            ids = (store.device_id(device), store.kernel_id(spec), store.problem_id(problem))
            campaign = store.open_campaign(f"c{n}", ids, "brute_force", 0, {}, report)
            store.record(campaign, Measurement(spec.default, Outcome.OK, times_ms=(1.0 + n,)))
    page = Path(write_report(db, tmp_path / "out").files[0]).read_text()
    one, two = first.source_hash[:12], edited.source_hash[:12]
    assert f"<h2>vector_add ({one}) on GPU A</h2>" in page
    assert f"<h2>vector_add ({two}) on GPU B</h2>" in page
    assert f"<h2>vector_add ({one}) on GPU B</h2>" in page
    # only the first kernel ran on both devices: its matrix alone, titled with its hash
    assert page.count("<h3>vector_add (") == 1 and f"<h3>vector_add ({one})," in page


def test_a_daemons_reported_refusals_are_not_called_unfinished(tmp_path: Path):
    """perfport serve's campaign of its clients' refusals stays running for good: its section
    said 'campaign running (still running, or killed, ...)'."""
    from perfport import Config, Measurement, Outcome, builtin
    from perfport.space import PruningReport
    from perfport.store import REPORTED, Store
    from perfport.store.formats.imported import external_device

    db, spec = tmp_path / "r.db", builtin("vector_add")
    with Store(db) as store:
        ids = (store.device_id(external_device("GPU A")), store.kernel_id(spec),
               store.problem_id(spec.problem))  # fmt: skip
        reported = store.open_campaign("r", ids, REPORTED, 0, {}, PruningReport(0, 0, ()))
        store.record(reported, Measurement(Config.of(wg=1024), Outcome.LAUNCH_REFUSED, "x"))
        running = store.open_campaign("s", ids, "random", 0, {}, PruningReport(0, 0, ()))
        store.record(running, Measurement(Config.of(wg=64), Outcome.OK, "", (1.0,)))
    page = Path(write_report(db, tmp_path / "out").files[0]).read_text()
    first, second = page.split("campaign r;")[1].split("campaign s;")
    assert "campaign running" not in first and "a record, not a search" in first
    assert "<b>campaign running</b>" in second  # a search still running says so
