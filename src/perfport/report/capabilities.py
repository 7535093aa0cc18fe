"""The report's sections for the other capabilities, drawn from their commands' JSON (a file
given with ``--with``) or from what they stored: work-group-size prediction evaluations, subset
selection curves, calibrated-model evaluations and calibrations, and split sweeps."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from perfport.report import svg
from perfport.report.attached import Attached, Kind
from perfport.report.html import num, table, td
from perfport.report.model_figures import (
    _first_sizes,
    breakdown_figure,
    breakdowns,
    curves,
    variant_figure,
)
from perfport.store.calibrations import StoredCalibration

LABEL = 19  # characters of a bar's label: longer names are cut (the table beside has them whole)


def _short(text: str) -> str:
    return text if len(text) <= LABEL else text[: LABEL - 1] + "\u2026"


def _figs(figures: Sequence[str]) -> str:
    return f'<div class="figs">{"".join(figures)}</div>'


def _source(a: Attached) -> str:
    return f'<p class="muted">from {escape(a.path)} (perfport {escape(a.kind.value)})</p>'


# ---- work-group-size prediction: perfport wg evaluate ------------------------------------

_WG_HEADERS = ("method", "partition", "fraction of oracle", "CI low", "CI high",
               "speedup over baseline", "speedup over expert", "accuracy", "validity",
               "refused", "scenarios")  # fmt: skip


def _wg_row(r: Mapping[str, Any]) -> list[str]:
    low, high = (r.get("performance_ci95") or [None, None])[:2]
    return [td(r["method"]), td(r["partition"]), num(r["performance"], ".3f"), num(low, ".3f"),
            num(high, ".3f"), num(r.get("speedup_over_baseline"), ".3f"),
            num(r.get("speedup_over_expert"), ".3f"), num(r.get("accuracy"), ".3f"),
            num(r.get("validity"), ".3f"), num(r.get("refused"), ".3f"),
            num(float(r["scenarios"]), ".0f")]  # fmt: skip


def wg_section(a: Attached) -> str:
    """Per device and per kernel, the fraction of the oracle's performance each method
    reached (``--by-device`` output), and every result's figures in a table."""
    results = a.data["results"]
    figures, groups = [], []
    for r in results:
        for key, what in (("per_device", "device"), ("per_kernel", "kernel")):
            per = r.get(key) or {}
            if not per:
                continue
            title = f"fraction of the oracle per {what}: {r['method']}, {r['partition']}"
            figures.append(svg.bar_chart(title, [_short(n) for n in per],
                                         [float(v["performance"]) for v in per.values()], ""))  # fmt: skip
            groups += [[td(r["method"]), td(r["partition"]), td(what), td(n),
                        num(v["performance"], ".3f"), num(float(v["scenarios"]), ".0f")]
                       for n, v in per.items()]  # fmt: skip
    note = ""
    if not figures:  # no per-device breakdown in the file: one bar per method and partition
        labels = [_short(f"{r['method']} / {r['partition']}") for r in results]
        figures.append(svg.bar_chart("fraction of the oracle reached", labels,
                                     [float(r["performance"]) for r in results], ""))  # fmt: skip
        note = ('<p class="muted">run <code>perfport wg evaluate --by-device --json</code> for '
                "the bars per device and per kernel</p>")  # fmt: skip
    parts = ["<h2>Work-group-size prediction</h2>", _source(a), note, _figs(figures),
             "<h3>Every method and partition</h3>",
             table(_WG_HEADERS, [_wg_row(r) for r in results])]  # fmt: skip
    if groups:
        parts += ["<h3>Per device and per kernel</h3>",
                  table(("method", "partition", "by", "name", "fraction of oracle", "scenarios"),
                        groups)]  # fmt: skip
    return "".join(parts)


# ---- subset selection: perfport select evaluate ------------------------------------------


def _select_figures(rows: Sequence[Mapping[str, Any]], group: str) -> list[str]:
    """Mean and worst fraction of the best against the subset size k, one line per selector,
    and the best the chosen set allows (dashed)."""
    by_classifier: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        by_classifier[r["classifier"]].append(r)
    mean, worst, limit = [], [], {}
    for name, rs in by_classifier.items():
        rs = sorted(rs, key=lambda r: r["k"])
        ks = tuple(float(r["k"]) for r in rs)
        mean.append(svg.Series(name, ks, tuple(float(r["performance"]) for r in rs)))
        drawn = [r for r in rs if r.get("worst") is not None]
        if drawn:
            worst.append(svg.Series(name, tuple(float(r["k"]) for r in drawn),
                                    tuple(float(r["worst"]) for r in drawn)))  # fmt: skip
        limit.update({float(r["k"]): float(r["max_achievable"]) for r in rs
                      if r.get("max_achievable") is not None})  # fmt: skip
    best = "best in the set"
    if limit and set(by_classifier) != {"oracle"}:
        ks = tuple(sorted(limit))
        mean.append(svg.Series(best, ks, tuple(limit[k] for k in ks)))
    figures = [svg.line_chart(f"mean fraction of best: {group}", mean, "configurations kept (k)",
                              "geomean fraction of best", dashed=frozenset({best}))]  # fmt: skip
    if worst:
        figures.append(svg.line_chart(f"worst fraction of best: {group}", worst,
                                      "configurations kept (k)", "lowest fraction of best"))  # fmt: skip
    return figures


def select_section(a: Attached) -> str:
    results = a.data["results"]
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in results:
        groups[f"{r['normalisation']}, {r['pruning']}"].append(r)
    figures = [f for name, rows in groups.items() for f in _select_figures(rows, name)]
    rows = []
    for r in results:
        low, high = (r.get("performance_ci95") or [None, None])[:2]
        rows.append([td(r["normalisation"]), td(r["pruning"]), td(r["classifier"]),
                     num(float(r["k"]), ".0f"), num(r["performance"], ".3f"), num(low, ".3f"),
                     num(high, ".3f"), num(r.get("max_achievable"), ".3f"),
                     num(r.get("worst"), ".3f")])  # fmt: skip
    headers = ("normalisation", "pruning", "classifier", "k", "fraction of best", "CI low",
               "CI high", "best in the set", "worst")  # fmt: skip
    return ("<h2>Kernel subset selection</h2>" + _source(a) + _figs(figures)
            + "<h3>Every normalisation, pruning, classifier and k</h3>" + table(headers, rows))  # fmt: skip


# ---- calibrated models: perfport model evaluate, and stored calibrations ----------------


def _parameters_table(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """One row per calibration: its device, each parameter, the residual and measurements."""
    names = sorted({p for _, c in rows for p in c.get("parameters") or {}})
    body = [[td(device), *(num((c.get("parameters") or {}).get(p)) for p in names),
             num(c.get("residual")), num(c.get("n_measurements"), ".0f")]
            for device, c in rows]  # fmt: skip
    return table(("device", *names, "residual", "measurements"), body)


def model_section(a: Attached) -> str:
    """Figures 7-9 (measured and predicted time against size), the term breakdown, each
    variant's error and the calibrated parameters."""
    evaluation = a.data
    figures = []
    for (family, device), drawn in sorted(curves(evaluation).items()):
        xlabel = next(iter(_first_sizes(evaluation, drawn[0].variant)), "size")
        figures.append(variant_figure(f"{family} on {device}: measured and predicted", xlabel,
                                      drawn))  # fmt: skip
    for device, rows in sorted(breakdowns(evaluation).items()):
        figures.append(breakdown_figure(f"Share of each model term in the prediction, {device}",
                                        rows))  # fmt: skip
    error, ranking = evaluation.get("geomean_rel_error"), evaluation.get("ranking_correct")
    summary = (f"<p>geometric-mean relative error <b>{error:.1%}</b>"
               if isinstance(error, float) else "<p>")  # fmt: skip
    if ranking is not None:
        misranked = "; ".join(evaluation.get("misranked") or ()) or "none"
        summary += f"; ranking {'correct' if ranking else 'wrong'} (misranked: {escape(misranked)})"
    variants = [[td(r["variant"]), td(r["device"]), num(float(len(r["points"])), ".0f"),
                 num(r.get("geomean_rel_error"), ".1%")] for r in evaluation["results"]]  # fmt: skip
    calibrations = [(c.get("device") or "-", c) for c in evaluation.get("calibrations") or ()]
    expression = (evaluation.get("model") or {}).get("expression")
    return (
        "<h2>Calibrated model</h2>" + _source(a)
        + (f"<p>model: <code>{escape(expression)}</code></p>" if expression else "")
        + summary + "</p>" + _figs(figures)
        + "<h3>Each variant's error</h3>"
        + table(("variant", "device", "sizes", "geomean relative error"), variants)
        + ("<h3>Calibrated parameters</h3>" + _parameters_table(calibrations) if calibrations else "")
    )  # fmt: skip


def calibrations_section(stored: Sequence[StoredCalibration]) -> str:
    """The calibrations the store holds (``perfport model calibrate``), one table per model."""
    if not stored:
        return ""
    by_model: dict[tuple[str, str], list[StoredCalibration]] = defaultdict(list)
    for c in stored:
        by_model[c.output, c.expression].append(c)
    parts = ["<h2>Stored model calibrations</h2>"]
    for (output, expression), cs in by_model.items():
        parts.append(f"<p><code>{escape(output)} = {escape(expression)}</code></p>")
        parts.append(_parameters_table([(c.device, c.calibration) for c in cs]))
    return "".join(parts)


# ---- split sweeps: perfport split --sweep, and stored plans --------------------------------


def sweep_figure(title: str, run: Mapping[str, Any]) -> str:
    """Time against the first device's share, the computed split ringed; empty when the run
    swept nothing. Points whose output was wrong are drawn apart."""
    points = sorted(run.get("sweep") or (), key=lambda p: p["share"])
    if not points:
        return ""
    series = []
    for label, ok in (("verified", True), ("wrong output", False)):
        drawn = [p for p in points if bool(p.get("verified", True)) is ok]
        if drawn:
            series.append(svg.Series(label, tuple(float(p["share"]) for p in drawn),
                                     tuple(float(p["measured_ms"]) for p in drawn)))  # fmt: skip
    factors, measured = run.get("adjusted_factors") or [], run.get("measured_ms")
    mark = (svg.Mark(float(factors[0]), float(measured), f"computed {factors[0]:.2f}")
            if factors and isinstance(measured, int | float) else None)  # fmt: skip
    return svg.line_chart(title, series, "share of the first device", "time (ms)", mark=mark,
                          dashed=frozenset({"wrong output"}))  # fmt: skip


def sweep_table(run: Mapping[str, Any]) -> str:
    rows = [[num(float(p["share"]), ".3f"), num(float(p["measured_ms"])),
             td("yes" if p.get("verified", True) else "no")]
            for p in sorted(run.get("sweep") or (), key=lambda p: p["share"])]  # fmt: skip
    return table(("share of the first device", "measured ms", "verified"), rows) if rows else ""


def split_section(a: Attached) -> str:
    run = a.data
    devices = [str(d) for d in run["devices"]]
    shares = [(d, float(p[1] - p[0])) for d, p in zip(devices, run["parts"], strict=False)]
    title = f"split of {run['kernel']}"
    figures = [svg.stacked_bar(title, shares)]
    sweep = sweep_figure(f"sweep of {run['kernel']}: time against the split", run)
    best = run.get("best_single") or {}
    return (
        f"<h2>Split: {escape(str(run['kernel']))} on {escape(', '.join(devices))}</h2>"
        + _source(a)
        + f"<p>measured {run['measured_ms']:.4g} ms"
        + (f"; best single device {escape(str(best.get('device')))} {best['time_ms']:.4g} ms"
           if isinstance(best.get("time_ms"), int | float) else "")
        + (f"; decision: {escape(str(run['decision']))}" if "decision" in run else "") + "</p>"
        + _figs([*figures, sweep] if sweep else figures)
        + (sweep_table(run) or '<p class="muted">no sweep: run with --sweep N</p>')
    )  # fmt: skip


SECTIONS = {Kind.WG: wg_section, Kind.SELECT: select_section, Kind.MODEL: model_section,
            Kind.SPLIT: split_section}  # fmt: skip
