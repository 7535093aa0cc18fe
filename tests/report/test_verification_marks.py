"""The report marks results nothing verified and configurations another campaign found wrong:
a --no-verify campaign showed a wrong configuration's '110.00x' speedup, unflagged."""

from __future__ import annotations

import re
from pathlib import Path

from perfport import Config, Measurement, Outcome, builtin
from perfport._core import Check
from perfport.report import write_report
from perfport.space import PruningReport
from perfport.store import CampaignStatus, Store
from perfport.store.formats.imported import external_device

SPEC = builtin("vector_add")  # its default is wg=64
V, U = Check.VERIFIED, Check.UNVERIFIED
# campaign -> (device, [(wg, outcome, ms, check)])
RUNS = {
    "verified": ("GPU Alpha", [(8, Outcome.WRONG_RESULT, None, None), (64, Outcome.OK, 1.0, V),
                               (16, Outcome.OK, 2.0, V)]),
    "noverify": ("GPU Alpha", [(8, Outcome.OK, 0.01, U), (64, Outcome.OK, 1.1, U)]),
    "beta": ("GPU Beta", [(8, Outcome.OK, 0.5, U), (64, Outcome.OK, 1.0, V)]),
}  # fmt: skip


def _store(db: Path) -> Path:
    with Store(db) as store:
        for key, (name, results) in RUNS.items():
            ids = (store.device_id(external_device(name)), store.kernel_id(SPEC),
                   store.problem_id(SPEC.problem))  # fmt: skip
            campaign = store.open_campaign(key, ids, "brute_force", 0, {}, PruningReport(0, 0, ()))
            for wg, outcome, ms, check in results:
                times = (ms,) if ms is not None else ()
                store.record(
                    campaign, Measurement(Config.of(wg=wg), outcome, "", times, check=check)
                )
            store.set_status(campaign, CampaignStatus.COMPLETE)
    return db


def _section(page: str, key: str) -> str:
    start = page.index(f"campaign {key};")
    return page[start : page.find("<h2>", start)]


def test_unverified_results_and_configurations_wrong_elsewhere_are_marked(tmp_path: Path):
    page = Path(write_report(_store(tmp_path / "m.db"), tmp_path / "out").files[0]).read_text()
    noverify = _section(page, "noverify")
    assert "<b>110.00x</b> \u2717\u2020</p>" in noverify  # the speedup line, of #1: wg=8
    assert "<td>wg=8 \u2717\u2020</td>" in noverify and "<td>wg=64 \u2020</td>" in noverify
    assert noverify.count("not verified: nothing compared its outputs") == 1  # the legend, once
    assert "another campaign of this kernel, device and problem found its outputs wrong" in noverify
    verified = _section(page, "verified")
    assert "\u2020" not in verified and "\u2717" not in verified and "not verified" not in verified


def test_across_devices_never_ranks_a_wrong_configuration_and_marks_an_unverified_best(
    tmp_path: Path,
):
    page = Path(write_report(_store(tmp_path / "m.db"), tmp_path / "out").files[0]).read_text()
    across = page[page.index("<h2>Across devices</h2>") :]
    # Alpha's best is wg=64 (wg=8 is wrong there, though the --no-verify campaign timed it)
    assert re.search(r"<td>GPU Alpha</td><td>wg=64</td>", across)
    assert re.search(r"<td>GPU Beta</td><td>wg=8 \u2020</td>", across)  # no campaign checked it
    row = re.search(r"<td>best of GPU Beta</td>(.*?)</tr>", across)
    assert row is not None and "failed (wrong_result)" in row.group(1)  # wg=8 on Alpha
    assert "not verified: nothing compared its outputs" in across
