"""``perfport results`` at 80 columns: the best configuration and its time read in full."""

from __future__ import annotations

import io

from rich.console import Console

from perfport import Config, Measurement, Outcome, Problem
from perfport._core import Check
from perfport.cli.render import results_columns, results_table
from perfport.store import BestResult

GEMM_BEST = Config.of(
    KWG=32, KWI=2, MDIMA=16, MDIMC=16, MWG=128, NDIMB=32, NDIMC=8, NWG=128, PRECISION=32,
    SA=1, SB=1, STRM=0, STRN=0, VWM=8, VWN=2,
)  # fmt: skip


def _result(device: str, best_ms: float) -> BestResult:
    return BestResult(
        device=device, backend="opencl", device_fingerprint="0123456789abcdef", kernel="Xgemm",
        problem=Problem.of(problem_size="4096x4096"), best=GEMM_BEST, best_ms=best_ms,
        default=Config.of(KWG=16), default_ms=12.3456, outcomes={"ok": 17000, "launch_refused": 956},
        campaigns=1, best_verification=Check.VERIFIED, best_verified_against="numpy reference",
    )  # fmt: skip


def _render(width: int) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    results_table(console, [_result("NVIDIA GeForce RTX 3090", 5.657552), _result("gfx90a", 7.5)])
    return out.getvalue().splitlines()


def test_results_at_80_columns_show_the_best_configuration_in_full():
    lines = _render(80)
    assert all(len(line) <= 80 for line in lines)
    text = " ".join(lines)
    assert "…" not in text  # nothing cut with an ellipsis
    words = {w for line in lines for w in line.replace("│", " ").split()}
    for token in str(GEMM_BEST).split():
        assert token in words  # every parameter=value whole, on one line
    assert {"5.658", "7.5", "12.35", "2.18x"} <= words
    assert "left out at 80 columns:" in text


def test_wide_terminals_show_every_column():
    assert list(results_columns([_result("a device", 1.0)], 200)) == [
        "kernel", "device", "backend", "problem", "best configuration", "best ms", "default ms",
        "speedup", "verified", "outcomes",
    ]  # fmt: skip
    lines = _render(200)
    assert all(len(line) <= 200 for line in lines) and "left out" not in "\n".join(lines)


def test_no_results_render_without_a_traceback():
    """An empty store (or a --kernel matching nothing) raised TypeError in the renderer."""
    out = io.StringIO()
    results_table(Console(file=out, width=80, color_system=None), [])
    assert "Best configurations" in out.getvalue()


def test_no_results_size_the_columns_by_their_headers():
    assert results_columns([], 80)["best ms"] == len("best ms")


def test_the_tune_table_keeps_its_fixed_columns_and_the_metrics_that_fit():
    from perfport.cli.render import _fitting

    row = {"#": "1", "configuration": "wg=1024 (default)", "median ms": "0.6929",
           "95% CI ms": "0.6488-0.7288", "samples": "155", "vs default": "1.14x",
           "GBps": "18.07", "GFLOPs": "1.504", "roofline": "-", "check": "verified"}  # fmt: skip
    wide, none_left = _fitting([row], ["GBps", "GFLOPs", "roofline"], 200)
    assert wide[-3:] == ["GBps", "GFLOPs", "check"] and not none_left  # roofline: all "-"
    narrow, left_out = _fitting([row], ["GBps", "GFLOPs", "roofline"], 80)
    assert narrow == ["#", "configuration", "median ms", "95% CI ms", "samples", "vs default",
                      "check"] and left_out == ["GBps", "GFLOPs"]  # fmt: skip
    tiny, left_out = _fitting([row], ["GBps"], 60)  # the interval and sample count go first
    assert tiny == ["#", "configuration", "median ms", "vs default", "check"]
    assert left_out == ["95% CI ms", "samples", "GBps"]


def test_both_roofline_metrics_read_as_percentages():
    """results showed 'roofline 173%' beside 'roofline_same_bytes 0.3508'."""
    from perfport.cli.render import _metric

    assert _metric("roofline", 1.73) == "173%" and _metric("roofline_same_bytes", 0.3508) == "35%"
    assert _metric("GBps", 12.345678) == "12.35"


def test_a_best_of_an_unfinished_campaign_is_marked():
    """A 3-of-40 best of a killed campaign read as a finished one in the table."""
    import dataclasses

    out = io.StringIO()
    partial = dataclasses.replace(
        _result("gfx90a", 7.5), campaign_statuses={"running": 1}, finished=False
    )
    results_table(Console(file=out, width=200, color_system=None), [_result("a", 1.0), partial])
    text = out.getvalue()
    assert "7.5*" in text and "1* " not in text
    assert "* from a campaign that did not finish" in text
    out = io.StringIO()
    results_table(Console(file=out, width=200, color_system=None), [_result("a", 1.0)])
    assert "did not finish" not in out.getvalue()


def test_kernels_sharing_a_name_show_their_hash_and_json_has_it(db, cpu, capsys):
    """After a source edit two kernels share a name: two identical-looking rows, and --json
    had no field telling them apart."""
    import dataclasses
    import json

    from perfport import builtin
    from perfport.cli import main
    from perfport.space import PruningReport
    from perfport.store import Store

    first = builtin("vector_add")
    edited = dataclasses.replace(first, source=first.source + "\n// edited\n")
    with Store(db) as store:
        for key, spec in (("a", first), ("b", edited)):
            ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(first.problem))
            campaign = store.open_campaign(key, ids, "brute_force", 0, {}, PruningReport(0, 0, ()))
            store.record(campaign, Measurement(spec.default, Outcome.OK, times_ms=(1.0,)))
    assert main(["results", "--db", str(db), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    hashes = {first.source_hash[:12], edited.source_hash[:12]}
    assert {r["kernel_hash"] for r in rows} == hashes and len(hashes) == 2
    assert main(["results", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert all(h in text for h in hashes)
    # one kernel of the name: no hash in the table
    assert main(["results", "--db", str(db), "--kernel", first.source_hash[:12]]) == 0
    assert first.source_hash[:12] not in capsys.readouterr().out


def test_a_daemons_reported_refusals_are_not_an_unfinished_campaign(db, cpu, capsys):
    """perfport serve's campaign of its clients' refusals stays running for good: results
    marked its target '* from a campaign that did not finish'."""
    import json

    from perfport import builtin
    from perfport.cli import main
    from perfport.space import PruningReport
    from perfport.store import REPORTED, Store

    spec = builtin("sobel")
    with Store(db) as store:
        ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(spec.problem))
        campaign = store.open_campaign("r", ids, REPORTED, 0, {}, PruningReport(0, 0, ()))
        store.record(campaign, Measurement(Config.of(wc=32, wr=32), Outcome.LAUNCH_REFUSED, "x"))
    assert main(["results", "--db", str(db)]) == 0
    shown = capsys.readouterr()
    assert "did not finish" not in shown.out + shown.err and "sobel" in shown.out
    assert main(["results", "--db", str(db), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert row["finished"] is True and row["campaign_statuses"] == {"running": 1}
