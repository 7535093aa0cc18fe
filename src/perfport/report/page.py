"""The report as one self-contained HTML page: inline SVG figures, inline CSS and a few lines
of inline JavaScript that sort tables. No CDN, no server, no file beside it."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from perfport._core.version import __version__
from perfport.report import svg
from perfport.report.attached import Attached
from perfport.report.capabilities import SECTIONS, calibrations_section, sweep_figure, sweep_table
from perfport.report.data import (
    CampaignView,
    CrossDevice,
    Ranked,
    ReportData,
    config_text,
    shares,
)
from perfport.report.html import num as _num
from perfport.report.html import table as _table
from perfport.report.html import td as _td
from perfport.store import CampaignStatus

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:32px}
h3{font-size:15px;margin:18px 0 6px}.figs{display:flex;flex-wrap:wrap;gap:12px}
.small svg{width:300px;height:auto}table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th.sortable{cursor:pointer;background:#f3f3f3}th.sortable:after{content:" \\2195";color:#999}
td.num{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#777}
svg .axis{stroke:#333;fill:none}svg .grid{stroke:#eee}svg .line{fill:none;stroke-width:2}
svg .tick{font-size:10px;fill:#444}svg .label{font-size:11px;fill:#222}
svg .end{text-anchor:end}svg .mid{text-anchor:middle}
"""

# Click a header to sort its table by that column (numbers as numbers), again to reverse.
# The page sets data-sorted on <body> once the handlers are in place, so a test can see it ran.
JS = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.classList.add('sortable');
    th.addEventListener('click', function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute('data-dir') !== 'up';
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute('data-v') || a.cells[col].textContent;
        var y = b.cells[col].getAttribute('data-v') || b.cells[col].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return up ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
      th.setAttribute('data-dir', up ? 'up' : 'down');
    });
  });
});
document.body.setAttribute('data-sorted', document.querySelectorAll('th.sortable').length);
"""


_TOP_HEADERS = ("#", "configuration", "median ms", "CI low", "CI high", "samples",
                "speedup over default")  # fmt: skip

# A result nothing compared with expected outputs, and a configuration another campaign of its
# kernel, device and problem found wrong: marked where shown, each mark explained below once.
UNVERIFIED, WRONG = "\u2020", "\u2717"
_LEGEND = {
    UNVERIFIED: "not verified: nothing compared its outputs (--no-verify, or a sweep's later "
    "problems)",
    WRONG: "another campaign of this kernel, device and problem found its outputs wrong: "
    "perfport results never ranks it",
}


def _marks(unverified: bool, wrong: bool = False) -> str:
    marks = (WRONG if wrong else "") + (UNVERIFIED if unverified else "")
    return f" {marks}" if marks else ""


def _legend(marks: str, where: str = "") -> str:
    """One line explaining the marks shown (nothing where none is)."""
    shown = [f"{m} {text}" for m, text in _LEGEND.items() if m in marks]
    return f'<p class="muted">{escape("; ".join(shown))}{where}</p>' if shown else ""


def _ranked_marks(r: Ranked) -> str:
    return _marks(r.unverified, r.wrong_elsewhere)


def campaign_section(c: CampaignView) -> str:
    steps = c.best_so_far
    by_eval = svg.Series("best", tuple(float(e) for e, _, _ in steps), tuple(b for *_, b in steps))
    by_time = svg.Series("best", tuple(t for _, t, _ in steps), tuple(b for *_, b in steps))
    figures = [
        svg.step_chart("best so far against evaluations", [by_eval], "evaluations", "best ms"),
        svg.step_chart("best so far against time", [by_time], "seconds since the first result", "best ms"),
        svg.bar_chart("outcomes", list(c.outcomes), [float(v) for v in c.outcomes.values()], ""),
    ]  # fmt: skip
    if c.imported:  # its times are the import's duration, not the measurements': not drawn
        figures[1] = ('<p class="muted">no best so far against time: these results were '
                      "imported, and the store keeps when they were imported, not when they "
                      "were measured</p>")  # fmt: skip
    speedup = ""
    if c.default_ms and c.top:
        speedup = (f"<p>speedup over the default ({escape(config_text(c.default))}): "
                   f"<b>{c.default_ms / c.top[0].median_ms:.2f}x</b>"
                   f"{escape(_ranked_marks(c.top[0]))}</p>")  # fmt: skip
    elif c.default is not None:
        speedup = '<p class="muted">the default configuration has no ok result here</p>'
    top_rows = [
        [f'<td class="num" data-v="{i}">{i}</td>', _td(config_text(r.config) + _ranked_marks(r)),
         _num(r.median_ms),
         _num(r.ci_low_ms), _num(r.ci_high_ms), _num(float(r.n), ".0f"),
         _num(c.default_ms / r.median_ms if c.default_ms else None, ".2f")]
        for i, r in enumerate(c.top, 1)
    ]  # fmt: skip
    effects = [
        svg.bar_chart(f"{name}: median ms per value", list(values), list(values.values()), "ms")
        for name, values in sorted(c.effects.items())
        if len(values) > 1
    ]
    return (
        f"<h2>{escape(c.kernel)}{f' ({c.shown_hash})' if c.shown_hash else ''} on "
        f"{escape(c.device)}</h2>"
        f'<p class="muted">campaign {escape(c.key)}; problem {escape(c.problem)}; '
        f"{c.evaluations} results</p>{_unfinished(c)}{speedup}"
        f'<div class="figs">{"".join(figures)}</div>'
        "<h3>Top configurations (95% confidence interval of the median)</h3>"
        + _table(_TOP_HEADERS, top_rows)
        + _legend(
            "".join(_ranked_marks(r) for r in c.top),
            " (the speedup line's marks are those of #1)" if speedup else "",
        )
        + "<h3>Each parameter's effect</h3>"
        + f'<div class="figs small">{"".join(effects) or "<p>one value per parameter</p>"}</div>'
    )


def _unfinished(c: CampaignView) -> str:
    """A campaign that did not run to its budget or through its space: its best is partial."""
    if c.reported:  # stays running for good, and was never a search
        return ('<p class="muted">launches that clients of perfport serve reported the device '
                "refused: a record, not a search</p>")  # fmt: skip
    if c.status in (CampaignStatus.COMPLETE.value, CampaignStatus.BUDGET.value):
        return ""
    return (f"<p><b>campaign {escape(c.status)}</b> (still running, or killed, interrupted or "
            "failed): its best is of what it measured so far</p>")  # fmt: skip


def across_section(x: CrossDevice) -> str:
    unverified = x.unverified or (False,) * len(x.devices)
    best_rows = [
        [_td(d), _td(config_text(cfg) + _marks(u)), _num(ms)]
        for d, (cfg, ms), u in zip(x.devices, x.best, unverified, strict=True)
    ]
    failed = x.failed or tuple((None,) * len(x.devices) for _ in x.devices)
    matrix_rows = [
        [_td(f"best of {d}"),
         *(_failed(f) if v is None and f else _num(v, ".2f") for v, f in zip(row, fails, strict=True))]
        for d, row, fails in zip(x.devices, x.slowdown, failed, strict=True)
    ]  # fmt: skip
    return (
        f"<h3>{escape(x.kernel)}, {escape(x.problem)}</h3>"
        + _table(["device", "best configuration", "best ms"], best_rows)
        + _legend(_marks(any(unverified)))
        + "<p>Each device's best run on the others: time there over that device's own best "
        "(1.00 is as good as its own best; - where it was never measured there; failed and "
        "its outcome, such as launch_refused, where it ran there and gave no time).</p>"
        + _table(["configuration", *(f"on {d}" for d in x.devices)], matrix_rows)
    )


def _failed(outcome: str) -> str:
    """A matrix cell of a configuration tried on that device that gave no time (not "-",
    which says it was never tried there)."""
    return f'<td class="num" data-v="failed">failed ({escape(outcome)})</td>'


def plans_section(data: ReportData) -> str:
    if not data.plans:
        return ""
    parts = []
    for p in data.plans:
        predicted = p.plan.get("adjusted_theoretical_ms")
        measured = (p.run or {}).get("measured_ms")
        title = f"split plan {p.id}: {p.kernel}, {p.problem}"
        parts.append(svg.stacked_bar(title, list(shares(p, data.devices))))
        if p.run and p.run.get("sweep"):  # 'perfport split --sweep N' stored its curve
            parts.append(sweep_figure(f"sweep of plan {p.id}: time against the split", p.run))
            parts.append(sweep_table(p.run))
        parts.append(
            f'<p class="muted">predicted {predicted if predicted is None else f"{predicted:.4g}"}'
            f" ms, measured {measured if measured is None else f'{measured:.4g}'} ms</p>"
        )
    return "<h2>Split plans</h2>" + "".join(parts)


def render(data: ReportData, title: str, attached: Sequence[Attached] = ()) -> str:
    """The whole page: the store's sections, then one per file given with ``--with``."""
    body = [f"<h1>{escape(title)}</h1>",
            f'<p class="muted">{data.results} results, {len(data.campaigns)} campaigns; '
            f"perfport {escape(__version__)}</p>"]  # fmt: skip
    body += [campaign_section(c) for c in data.campaigns]
    if data.across:
        body.append("<h2>Across devices</h2>")
        body += [across_section(x) for x in data.across]
    body.append(plans_section(data))
    body.append(calibrations_section(data.calibrations))
    body += [SECTIONS[a.kind](a) for a in attached]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
        f"<body>{''.join(body)}<script>{JS}</script></body></html>\n"
    )
