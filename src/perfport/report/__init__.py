"""Layer 6: ``perfport report``, a static HTML report of a results database that opens
offline: inline SVG figures drawn here (no plotting library), sortable tables, no server."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfport._core import StoreError
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

    def to_json(self) -> dict[str, Any]:
        return {"files": list(self.files), "results": self.results,
                "campaigns": self.campaigns, "seconds": self.seconds}  # fmt: skip


def write_report(
    db: str | Path, out_dir: str | Path, kernel: str | None = None, device: str | None = None
) -> WrittenReport:
    """Write ``out_dir/index.html`` from the results in ``db`` (only ``kernel``/``device``'s
    when given). Nothing matching is a StoreError naming the filters.

    >>> import perfport.report
    >>> perfport.report.write_report("perfport.db", "report")  # doctest: +SKIP
    """
    started = time.perf_counter()
    with Store(db, create=False) as store:
        data: ReportData = gather(store, kernel=kernel, device=device)
    if not data.campaigns:
        raise StoreError(
            f"no results in {db} match --kernel {kernel!r} --device {device!r}; "
            "see 'perfport results --db ...' for what it holds"
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
    page.write_text(render(data, title), encoding="utf-8")
    return WrittenReport((str(page),), data.results, len(data.campaigns),
                         time.perf_counter() - started)  # fmt: skip


__all__ = ["WrittenReport", "write_report"]
