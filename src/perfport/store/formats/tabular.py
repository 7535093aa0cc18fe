"""Write stored results as CSV or JSON, one row at a time: an export of a million results
holds one in memory, not all of them."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import TextIO

from perfport.store.formats.json_text import finite_or_null
from perfport.store.queries import EXPORT_COLUMNS, ResultRow


def write_json(rows: Iterable[ResultRow], out: TextIO) -> int:
    """A JSON list of result records; returns how many. The text is what
    ``json.dump(records, out, indent=1)`` writes, produced record by record."""
    n = 0
    for n, row in enumerate(rows, 1):
        record = row.to_json()
        try:
            text = json.dumps(record, indent=1, allow_nan=False)
        except ValueError:  # NaN or Infinity, which no JSON reader takes: null, as for no time
            text = json.dumps(finite_or_null(record), indent=1)
        text = text.replace("\n", "\n ")
        out.write(("[\n " if n == 1 else ",\n ") + text)
    out.write("\n]\n" if n else "[]\n")
    return n


def write_csv(
    rows: Iterable[ResultRow],
    out: TextIO,
    problem_keys: Sequence[str] | None = None,
    param_keys: Sequence[str] | None = None,
    metric_keys: Sequence[str] | None = None,
) -> int:
    """One row per result. Problem values and parameters also get a column each
    (``problem.<name>``, ``param.<name>``, ``metric.<name>``) so the file loads straight into a
    data frame. Given the names (``export_keys``), the rows stream; without them they are read
    first."""
    if problem_keys is None or param_keys is None or metric_keys is None:
        rows = list(rows)
        problem_keys = sorted({k for r in rows for k in r.problem})
        param_keys = sorted({k for r in rows for k in r.config})
        metric_keys = list(dict.fromkeys(k for r in rows for k in r.metrics))
    columns = [
        *EXPORT_COLUMNS,
        *(f"problem.{k}" for k in problem_keys),
        *(f"param.{k}" for k in param_keys),
        *(f"metric.{k}" for k in metric_keys),
    ]
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    n = 0
    for row in rows:
        n += 1
        r = row.to_json()
        # The record's keys are the export columns, so the CSV header is the JSON's keys.
        flat = {k: r[k] for k in EXPORT_COLUMNS}
        flat["problem"] = json.dumps(r["problem"], sort_keys=True)
        flat["config"] = json.dumps(r["config"], sort_keys=True)
        flat["times_ms"] = " ".join(repr(t) for t in r["times_ms"])
        flat["metrics"] = json.dumps(r["metrics"])
        flat.update({f"problem.{k}": v for k, v in r["problem"].items()})
        flat.update({f"param.{k}": v for k, v in r["config"].items()})
        flat.update({f"metric.{k}": v for k, v in r["metrics"].items()})
        writer.writerow(flat)
    return n
