"""Layer 6: ``perfport report``, a static HTML report of a results database that opens
offline: inline SVG figures drawn here (no plotting library), sortable tables, no server."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfport._core import StoreError
from perfport.report.attached import Attached, Kind, read_all
from perfport.report.data import ReportData, gather
from perfport.report.page import render
from perfport.store import Store


@dataclass(frozen=True)
class WrittenReport:
    """What ``write_report`` wrote."""

    files: tuple[str, ...]
    results: int
    campaigns: int
    seconds: float
    # The sections beyond the campaigns': "split plans", "model calibrations" (from the
    # store) and each --with file's kind ("wg evaluate --json", ...), in page order.
    sections: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"files": list(self.files), "results": self.results,
                "campaigns": self.campaigns, "seconds": self.seconds,
                "sections": list(self.sections)}  # fmt: skip


def write_report(
    db: str | Path,
    out_dir: str | Path,
    kernel: str | None = None,
    device: str | None = None,
    attach: Sequence[str | Path] = (),
) -> WrittenReport:
    """Write ``out_dir/index.html`` from the results in ``db`` (only ``kernel``/``device``'s
    when given), with a section for each file in ``attach`` (the ``--json`` output of ``wg
    evaluate``, ``select evaluate``, ``model evaluate`` or ``split --sweep N``). Nothing
    matching is a StoreError naming the filters; a file of no known kind a PerfportError.

    >>> import perfport.report
    >>> perfport.report.write_report("perfport.db", "report")  # doctest: +SKIP
    """
    started = time.perf_counter()
    attached = read_all(attach)  # before the store: a wrong file writes nothing
    with Store(db, create=False) as store:
        data: ReportData = gather(store, kernel=kernel, device=device)
    attached = tuple(a for a in attached if not _stored_already(a, data))
    if not (data.campaigns or data.plans or data.calibrations or attached):
        given = " ".join(f"--{k} {v!r}" for k, v in (("kernel", kernel), ("device", device)) if v)
        raise StoreError(
            f"no results in {db} match {given}; 'perfport results --db {db}' lists what it holds"
            if kernel or device
            else f"{db} holds no results yet; run 'perfport tune' or 'perfport import' first"
        )
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise StoreError(f"{out} is a file, not a directory; give -o a directory")
    out.mkdir(parents=True, exist_ok=True)
    page = out / "index.html"
    title = (
        "perfport report" + (f": {kernel}" if kernel else "") + (f" on {device}" if device else "")
    )
    page.write_text(render(data, title, attached), encoding="utf-8")
    sections = (["split plans"] if data.plans else []) + (
        ["model calibrations"] if data.calibrations else []
    )
    return WrittenReport((str(page),), data.results, len(data.campaigns),
                         time.perf_counter() - started,
                         (*sections, *(a.kind.value for a in attached)))  # fmt: skip


def _stored_already(a: Attached, data: ReportData) -> bool:
    """A split's JSON whose plan the store holds (same id and measured time) is drawn with
    the store's plans: once is enough."""
    if a.kind is not Kind.SPLIT:
        return False
    return any(p.id == a.data.get("plan_id") and p.run is not None
               and p.run.get("measured_ms") == a.data["measured_ms"] for p in data.plans)  # fmt: skip


__all__ = ["WrittenReport", "write_report"]
