"""Human-readable tables for the CLI (rich)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported on first use: --json output and --help need none of it
    from rich.console import Console
    from rich.table import Table

    from perfport._core import Check, DeviceInfo, KernelSpec, Measurement
    from perfport.space import PruningReport
    from perfport.store import BestResult
    from perfport.tune import TuneResult


def print_json(data: Any) -> None:
    """What every --json prints: one indented JSON document on stdout. A non-finite float
    (an interval of one test problem, a mean of none) is written as null: Python's NaN and
    Infinity are not JSON, and strict parsers (JavaScript, Go, jq --seq) refuse the document."""
    print(json_text(data))


def json_text(data: Any) -> str:
    """``data`` as print_json writes it (non-finite floats as null)."""
    from perfport.store.formats.json_text import finite_or_null

    return json.dumps(finite_or_null(data), indent=1, allow_nan=False)


def _table(title: str) -> Table:
    from rich.table import Table

    return Table(title=title)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _mib(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    return f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.0f} MiB"


def devices_table(console: Console, devices: Sequence[DeviceInfo]) -> None:
    """One column per device, one row per property (device names are long)."""
    table = _table("Devices")
    table.add_column("")
    for d in devices:
        table.add_column(d.id)
    rows = {
        "name": [d.name for d in devices],
        "type": [d.type.value for d in devices],
        "vendor": [d.vendor for d in devices],
        "driver": [d.driver for d in devices],
        "compute units": [str(d.compute_units) for d in devices],
        "max work-group": [str(d.max_work_group_size) for d in devices],
        "max work-items": ["x".join(map(str, d.max_work_item_sizes)) for d in devices],
        "local memory": [_mib(d.local_mem_bytes) for d in devices],
        "global memory": [_mib(d.global_mem_bytes) for d in devices],
        "sub-group": [str(d.subgroup_size or "-") for d in devices],
        "fingerprint": [d.fingerprint for d in devices],
    }
    for label, values in rows.items():
        table.add_row(label, *values)
    console.print(table)
    if not devices:
        # markup=False: rich would read [pocl] as a style tag and drop it
        console.print(
            "no devices: pip install 'perfport[pocl]' for PoCL's CPU device", markup=False
        )


def kernels_table(console: Console, specs: Sequence[KernelSpec]) -> None:
    table = _table("Built-in kernels")
    for col in ("name", "parameters", "problem (defaults)", "about"):
        table.add_column(col)
    for s in specs:
        params = ", ".join(f"{p.name}[{len(p.values)}]" for p in s.params)
        table.add_row(s.name, params, str(s.problem), s.doc)
    console.print(table)


def tune_report(console: Console, result: TuneResult, top: int = 10) -> None:
    from rich.text import Text

    console.print(
        Text.assemble((result.kernel, "bold"), " on ", (result.device.name, "bold"),
                      f" ({result.device.id})")
    )  # fmt: skip
    console.print(f"problem: {result.problem}")
    console.print(
        f"campaign: {result.campaign} ({result.status.value}), strategy {result.strategy}"
        + (
            f" (prior from {result.prior_sources} other result sets)"
            if result.prior_sources
            else ""
        )
        + ", "
        f"verification: {result.verification}, db: {result.db}"
    )
    ok = sorted(
        (m for m in result.measurements if m.ok and result.score(m) is not None),
        key=lambda m: result.score(m) or 0.0,
    )
    default_ms = result.default.time_ms if result.default else None
    which = "Fastest" if result.objective.is_time else f"Best by {result.objective}:"
    rows = []
    for rank, m in enumerate(ok[:top], 1):
        s = m.stats
        assert s is not None
        marker = (
            " (default)" if result.default is not None and m.config == result.default.config else ""
        )
        rows.append({
            "#": str(rank),
            "configuration": f"{m.config}{marker}",
            "median ms": _ms(s.median),
            "95% CI ms": f"{_ms(s.ci_low)}-{_ms(s.ci_high)}",
            "samples": str(s.n),
            "vs default": f"{default_ms / s.median:.2f}x" if default_ms else "-",
            "check": "-" if m.check is None else m.check.value,
            # a metric may share a fixed column's name (samples): it never replaces it
            **{_metric_label(k): _metric(k, v) for k, v in result.metrics(m).items()},
        })  # fmt: skip
    names = result.scoring.names if result.scoring else ()
    metrics = [_metric_label(k) for k in names if rows and _metric_label(k) in rows[0]]
    if rows:  # none when nothing ran correctly: the outcomes below say why
        _print_rows(console, rows, metrics, f"{which} {min(top, len(ok))} of {result.measured} "
                    "measured configurations")  # fmt: skip
    counts = ", ".join(f"{k} {v}" for k, v in result.outcomes.items() if v)
    console.print(
        f"configurations: {result.configs_total} in the space; outcomes: {counts or 'none yet'}"
    )
    failures = [m for m in result.measurements if not m.ok and m.outcome.measured]
    for m in failures[:5]:
        console.print(f"  {m.outcome.value}: {m.config}: {_first_line(m)}", markup=False)
    if len(failures) > 5:
        console.print(f"  ... and {len(failures) - 5} more (perfport export)")
    best = result.best
    if best is not None:
        console.print(Text(best_line(result, best), style="bold green"))
        _roofline_line(console, result)
    elif result.measurements:
        console.print(Text("no configuration ran correctly here", "bold red"), "(outcomes above)")


def best_line(result: TuneResult, best: Measurement) -> str:
    """The best, and how it compares with the default: by time, or by the objective and then
    by time (the best by a metric may be slower than the default: never 'faster' then)."""
    goal, default, speedup = result.objective, result.default, result.speedup
    line = f"best: {best.config} at {_ms(best.time_ms)} ms"
    if not goal.is_time:
        score = result.score(best)
        value = "-" if score is None else f"{goal.value(score):.4g}"
        line = f"best by {goal}: {best.config} at {_ms(best.time_ms)} ms ({goal.name} {value})"
    if default is None or default.config == best.config or not speedup:
        return line
    than = f"{speedup:.2f}x faster" if speedup >= 1 else f"{1 / speedup:.2f}x slower"
    ratio = None if goal.is_time else result.objective_ratio
    by = "" if ratio is None else f"{ratio:.2f}x the default's {goal.name} and "
    return line + f", {by}{than} than the default {default.config}"


def _print_rows(
    console: Console, rows: list[dict[str, str]], metrics: list[str], title: str
) -> None:
    shown, left_out = _fitting(rows, metrics, console.width)
    table = _table(title)
    for col in shown:
        wraps = col == "configuration"  # numbers never wrap; a parameter set may
        table.add_column(col, justify="left" if wraps else "right", overflow="fold",
                         no_wrap=not wraps)  # fmt: skip
    for row in rows:
        table.add_row(*(row[c] for c in shown))
    console.print(table)
    if left_out:
        console.print(f"left out at {console.width} columns: {', '.join(left_out)} (widen the "
                      "terminal or use --json)", markup=False)  # fmt: skip


_TUNE_FIXED = ("#", "configuration", "median ms", "95% CI ms", "samples", "vs default", "check")


def _metric_label(name: str) -> str:
    return f"{name} (metric)" if name in _TUNE_FIXED else name


def _fitting(
    rows: Sequence[dict[str, str]], metrics: Sequence[str], width: int
) -> tuple[list[str], list[str]]:
    """The tune table's columns that fit ``width``, in display order, and those left out for
    want of room: the rank, configuration, median, ratio and check always; then, while they
    fit, the interval, the sample count and each metric with a value (one that is "-" in every
    row, such as a roofline without ceilings, says nothing)."""

    def need(col: str) -> int:  # + 3: a border and a space each side
        if col == "configuration":  # wraps between words; its header may fold
            return max([6, *(len(w) for r in rows for w in r[col].split())]) + 3
        return max([len(col), *(len(r[col]) for r in rows)]) + 3  # numbers never wrap

    core = ["#", "configuration", "median ms", "vs default", "check"]
    used = sum(need(c) for c in core) + 1
    kept, left_out = set(core), []
    for col in ("95% CI ms", "samples", *(m for m in metrics if any(r[m] != "-" for r in rows))):
        if used + need(col) <= width:
            kept.add(col)
            used += need(col)
        else:
            left_out.append(col)
    order = [*_TUNE_FIXED[:-1], *metrics, "check"]
    return [c for c in order if c in kept], left_out


def _metric(name: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if name in ("roofline", "roofline_same_bytes") else f"{value:.4g}"


def _roofline_line(console: Console, result: TuneResult) -> None:
    """How far the best is from the device's ceiling, or how to measure the ceiling."""
    if result.scoring is None or "roofline" not in result.scoring.names:
        return  # the kernel declares no bytes or flops: no roofline to place it on
    fraction = result.roofline
    if fraction is None:
        console.print(
            f"roofline: no ceilings stored for this device; measure them once with "
            f"'perfport roofline --device {result.device.id} --db {result.db}'",
            markup=False,
            soft_wrap=True,  # a command to copy: never broken across lines
        )
        return
    rates = ", ".join(
        f"{v:.4g} {k}" for k, v in result.metrics(result.best).items()
        if k in ("GBps", "GFLOPs") and v is not None
    )  # fmt: skip
    console.print(
        f"roofline: the best reaches {fraction:.0%} of this device's measured ceiling, at "
        f"{rates}; " + (f"{1 - fraction:.0%} is left" if fraction < 1 else "at or above it"),
        markup=False,
    )  # fmt: skip
    same = result.metrics(result.best).get("roofline_same_bytes")
    if same is not None:
        console.print(
            f"roofline: and {same:.0%} of a copy of the same bytes on this device "
            + (f"({1 - same:.0%} is left)" if same < 1 else "(at or above it)"),
            markup=False,
        )
    elif "roofline_same_bytes" in result.scoring.names:
        console.print(
            "roofline: these ceilings have no copy curve by size; measure them again with "
            f"'perfport roofline --device {result.device.id} --db {result.db}' to compare with "
            "a copy of the same bytes",
            markup=False,
            soft_wrap=True,
        )


def _checked(check: Check | None, against: str | None) -> str:
    """A result's verification in a table cell."""
    if check is None:
        return "-"
    return f"against {against}" if check.value == "verified" else check.value


def _first_line(m: Measurement) -> str:
    return (m.message.splitlines() or [""])[0][:160]


# The columns of ``perfport results``: the first four always show; the others join, in this
# order, while the table still fits the terminal (COLUMNS), so no cell is ever cut.
_ALWAYS = ("kernel", "device", "best ms", "best configuration")
_OPTIONAL = ("speedup", "problem", "default ms", "verified", "outcomes", "best metrics", "backend")
_NUMERIC = ("best ms", "default ms", "speedup")


def _clashing(results: Sequence[BestResult]) -> frozenset[str]:
    """Kernel names that several kernels (sources) share here: their rows show the hash."""
    hashes: dict[str, set[str]] = {}
    for r in results:
        hashes.setdefault(r.kernel, set()).add(r.kernel_hash)
    return frozenset(name for name, found in hashes.items() if len(found) > 1)


def _result_cells(r: BestResult, clashing: frozenset[str] = frozenset()) -> dict[str, str]:
    from perfport.store.identities import short_hash

    return {
        "kernel": f"{r.kernel} {short_hash(r.kernel_hash)}" if r.kernel in clashing else r.kernel,
        "device": r.device,
        "best ms": _ms(r.best_ms) + ("" if r.finished else "*"),  # explained below the table
        "best configuration": "-" if r.best is None else str(r.best),
        "speedup": f"{r.speedup:.2f}x" if r.speedup else "-",
        "best metrics": " ".join(f"{k} {_metric(k, v)}" for k, v in r.best_metrics.items()) or "-",
        "problem": str(r.problem),
        "default ms": _ms(r.default_ms),
        "verified": _checked(r.best_verification, r.best_verified_against),
        "outcomes": ", ".join(f"{k} {v}" for k, v in r.outcomes.items()),
        "backend": r.backend,
    }


def _min_width(column: str, cells: Sequence[str]) -> int:
    """The narrowest a column may be: its longest word (cells wrap between words, never
    inside one), its header's longest word, and a readable floor for free text."""
    if column in _NUMERIC:  # numbers and their headers never wrap
        return max([len(column), *(len(c) for c in cells)])  # no cells: the header's
    words = [w for c in cells for w in c.split()] + column.split()
    floor = 12 if column in ("device", "best configuration", "outcomes") else 0
    return max([floor, *(len(w) for w in words)])


def _optional(cells: Sequence[dict[str, str]]) -> tuple[str, ...]:
    """The optional columns with something to say: no metrics column when no kernel here
    states its work or metrics."""
    empty = all(row["best metrics"] == "-" for row in cells)
    return tuple(c for c in _OPTIONAL if not (empty and c == "best metrics"))


def results_columns(results: Sequence[BestResult], width: int) -> dict[str, int]:
    """Which columns of ``results_table`` fit ``width`` characters, in display order, each
    with its width: every column gets its narrowest, then the room left widens the columns
    that wrap, up to their longest cell."""
    clashing = _clashing(results)
    cells = [_result_cells(r, clashing) for r in results]
    need = {c: _min_width(c, [row[c] for row in cells]) for c in (*_ALWAYS, *_OPTIONAL)}
    chosen = list(_ALWAYS)
    used = sum(need[c] + 3 for c in chosen) + 1  # 3: a border and a space each side
    for column in _optional(cells):
        if used + need[column] + 3 <= width:
            chosen.append(column)
            used += need[column] + 3
    widths = {c: need[c] for c in chosen}
    for column in ("best configuration", "device", "problem", "outcomes", "kernel", "verified",
                   "best metrics"):  # fmt: skip
        if column in widths and used < width:
            natural = max([len(row[column]) for row in cells] + [len(column)])
            extra = min(width - used, max(0, natural - widths[column]))
            widths[column] += extra
            used += extra
    order = ("kernel", "device", "backend", "problem", "best configuration", "best ms",
             "default ms", "speedup", "best metrics", "verified", "outcomes")  # fmt: skip
    return {c: widths[c] for c in order if c in widths}


def results_table(console: Console, results: Sequence[BestResult]) -> None:
    """Best configurations, readable at any width: parameter sets wrap between parameters,
    columns that do not fit are left out and named below the table (``--json`` has them all)."""
    columns = results_columns(results, console.width)
    table = _table("Best configurations")
    for col, col_width in columns.items():
        numeric = col in _NUMERIC
        table.add_column(
            col,
            justify="right" if numeric else "left",
            width=col_width,
            overflow="fold",  # a word too long for the column folds onto the next line
            no_wrap=numeric,
        )
    clashing = _clashing(results)
    for r in results:
        cells = _result_cells(r, clashing)
        table.add_row(*(cells[c] for c in columns))
    console.print(table)
    if not all(r.finished for r in results):  # a best of 3 results of 40 looked finished
        console.print(
            "* from a campaign that did not finish (still running or killed, interrupted or "
            "failed: --json has campaign_statuses): the best of what it measured so far",
            markup=False,
        )
    left_out = [c for c in _optional([_result_cells(r) for r in results]) if c not in columns]
    if left_out and results:
        console.print(
            f"left out at {console.width} columns: {', '.join(left_out)} "
            "(widen the terminal or use --json)",
            markup=False,
        )


def space_report(
    console: Console, kernel: str, device: DeviceInfo | None, report: PruningReport
) -> None:
    where = f" on {device.name} ({device.id})" if device else ""
    table = _table(f"Search space of {kernel}{where}")
    table.add_column("constraint")
    table.add_column("source")
    table.add_column("removed", justify="right")
    for label, n, source in report.removed_by:
        table.add_row(label, source.value, str(n))
    console.print(table)
    console.print(f"cartesian {report.cartesian}, legal {report.legal}")


def wg_table(console: Console, results: Sequence[Any]) -> None:
    table = _table("Work-group-size predictors")
    for col in (
        "method",
        "partition",
        "performance",
        "95% CI",
        "x baseline",
        "x expert",
        "accuracy",
        "validity",
        "refused",
        "ms",
    ):
        table.add_column(col, justify="left" if col in ("method", "partition") else "right")
    for r in results:
        low, high = r.performance_ci95
        interval = f"{low:.1%}-{high:.1%}" if math.isfinite(low) else "-"  # under two scenarios
        table.add_row(
            r.method, r.partition, f"{r.performance:.1%}", interval, f"{r.speedup_over_baseline:.2f}",
            f"{r.speedup_over_expert:.2f}", f"{r.accuracy:.0%}", f"{r.validity:.0%}", f"{r.refused:.0%}",
            f"{r.predict_ms:.1f}",
        )  # fmt: skip
    console.print(table)


def wg_device_table(console: Console, results: Sequence[Any]) -> None:
    """Performance per partition and device set-up, one column per method."""
    methods = list(dict.fromkeys(r.method for r in results))
    perf = {(r.partition, d, r.method): p for r in results for d, p, _ in r.per_device}
    counts = {(r.partition, d): n for r in results for d, _, n in r.per_device}
    table = _table("Performance per device set-up")
    for col in ("partition", "device", "n", *methods):
        table.add_column(col, justify="left" if col in ("partition", "device") else "right")
    for (partition, device), n in counts.items():
        cells = [perf.get((partition, device, m)) for m in methods]
        table.add_row(partition, device, str(n), *("-" if c is None else f"{c:.1%}" for c in cells))
    console.print(table)
