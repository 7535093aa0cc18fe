"""The calibrated-model paper's Figures 7-9 and a per-term breakdown, as SVG files.

Drawn from the JSON of ``perfport model evaluate`` (its ``results``: one per variant and
device, each point with ``sizes``, ``measured_ms``, ``predicted_ms``, ``rel_error`` and
``terms``), so a saved evaluation draws again with no device, loopy or plotting library:
one figure per application family (matmul, dg, fd: the paper's Figures 7, 8 and 9) and
device, measured and predicted time against size with each point's relative error, and one
breakdown per device, each variant's prediction at its largest size split into the model's
terms (for the per-pattern model, the cost of each tagged access pattern).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from perfport.report.svg import COLOURS, HEIGHT, LEFT, RIGHT, TOP, WIDTH, _Axes, _fmt, _svg


@dataclass(frozen=True)
class Curve:
    """One variant on one device: sizes, and measured and predicted milliseconds."""

    variant: str
    xs: tuple[float, ...]
    measured: tuple[float, ...]
    predicted: tuple[float, ...]
    errors: tuple[float, ...]


# The report page's figure rules (report/page.py), inside each file: these stand alone.
STYLE = (
    "<style>.axis{stroke:#333;fill:none}.grid{stroke:#eee}.tick{font-size:10px;fill:#444}"
    ".label{font-size:11px;fill:#222}.end{text-anchor:end}.mid{text-anchor:middle}</style>"
)


def _standalone(svg: str) -> str:
    head, _, rest = svg.partition(">")
    return f"{head}>{STYLE}{rest}"


BREAKDOWN_WIDTH = 600  # wider than the report's charts: variant names and many terms


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"


def _size(sizes: Mapping[str, Any]) -> tuple[str, float]:
    """The size a figure's x axis shows: the first (for the built-ins, only) size."""
    name, value = next(iter(sizes.items()))
    return name, float(value)


def curves(evaluation: Mapping[str, Any]) -> dict[tuple[str, str], list[Curve]]:
    """{(family, device): curves}; the family is the variant's name up to its first '-'."""
    out: dict[tuple[str, str], list[Curve]] = defaultdict(list)
    for r in evaluation["results"]:
        points = sorted(r["points"], key=lambda p: _size(p["sizes"])[1])
        if not points:
            continue
        out[r["variant"].split("-")[0], r["device"]].append(
            Curve(
                r["variant"],
                tuple(_size(p["sizes"])[1] for p in points),
                tuple(float(p["measured_ms"]) for p in points),
                tuple(float(p["predicted_ms"]) for p in points),
                tuple(float(p["rel_error"]) for p in points),
            )
        )
    return dict(out)


def variant_figure(title: str, xlabel: str, drawn: Sequence[Curve]) -> str:
    """Measured (solid, dots) and predicted (dashed) time per variant against size, log
    time; each measured dot is labelled with the prediction's relative error."""
    ys = [y for c in drawn for y in (*c.measured, *c.predicted) if y > 0]
    axes = _Axes([x for c in drawn for x in c.xs], ys or [1.0], log_y=True)
    body = axes.frame(xlabel, "time (ms): measured solid, predicted dashed")
    for i, c in enumerate(drawn):
        colour = COLOURS[i % len(COLOURS)]
        for ys_, dash in ((c.measured, ""), (c.predicted, ' stroke-dasharray="5,3"')):
            pts = [(axes.x(x), axes.y(y)) for x, y in zip(c.xs, ys_, strict=True) if y > 0]
            if pts:
                d = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
                body.append(f'<path d="{d}" fill="none" stroke="{colour}"{dash}/>')
        for j, (x, y, e) in enumerate(zip(c.xs, c.measured, c.errors, strict=True)):
            px, py = axes.x(x), axes.y(y)
            body.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{colour}"/>')
            # The last label goes left of its dot, so it stays inside the frame.
            at = f'x="{px - 3:.1f}" class="tick end"' if j == len(c.xs) - 1 and j else (
                f'x="{px + 3:.1f}" class="tick"')  # fmt: skip
            body.append(f'<text {at} y="{py - 3:.1f}" style="fill:{colour}">{e:.0%}</text>')
        body.append(f'<text x="{LEFT + 6}" y="{TOP + 10 + 12 * i}" class="tick" '
                    f'style="fill:{colour}">{escape(c.variant)}</text>')  # fmt: skip
    body.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="14" class="label mid">'
                f"{escape(title)}</text>")  # fmt: skip
    return _svg(title, body, HEIGHT)


def _term_label(term: str) -> str:
    """A term by its parameters (``p_gload * f_...`` is ``p_gload``): feature names are long."""
    names = re.findall(r"\bp_\w+", term)
    return " ".join(dict.fromkeys(names)) or term[:24]


def breakdown_figure(title: str, rows: Sequence[tuple[str, Mapping[str, float]]]) -> str:
    """One horizontal bar per variant, split into its terms' shares of the prediction
    (negative shares, which an overlap model's terms can have, are left out and counted)."""
    labels = sorted({_term_label(t) for _, terms in rows for t in terms})
    colour = {t: _colour(i, len(labels)) for i, t in enumerate(labels)}
    row, label_w, span = 18, 200, BREAKDOWN_WIDTH - 200 - RIGHT
    body = []
    for i, (variant, terms) in enumerate(rows):
        y, x = TOP + i * row, float(label_w)
        body.append(f'<text x="{label_w - 6}" y="{y + 12}" class="tick end">'
                    f"{escape(variant)}</text>")  # fmt: skip
        for term, share in terms.items():
            if share is None or share <= 0:  # null: --json's non-finite share
                continue
            w = min(share, 1.0) * span
            body.append(f'<rect x="{x:.1f}" y="{y + 2}" width="{max(w, 0.5):.1f}" '
                        f'height="{row - 5}" fill="{colour[_term_label(term)]}">'
                        f"<title>{escape(term)}: {share:.1%}</title></rect>")  # fmt: skip
            x += w
    legend_y = TOP + len(rows) * row + 14
    for i, t in enumerate(labels):
        lx, ly = 10 + (i % 4) * (BREAKDOWN_WIDTH // 4), legend_y + (i // 4) * 13
        body.append(f'<rect x="{lx}" y="{ly - 8}" width="9" height="9" fill="{colour[t]}"/>'
                    f'<text x="{lx + 12}" y="{ly}" class="tick">{escape(t)}</text>')  # fmt: skip
    body.append(f'<text x="{BREAKDOWN_WIDTH / 2}" y="14" class="label mid">'
                f"{escape(title)}</text>")  # fmt: skip
    height = legend_y + 13 * ((len(labels) + 3) // 4) + 6
    return _svg(title, body, height).replace(
        f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}"',
        f'viewBox="0 0 {BREAKDOWN_WIDTH} {height}" width="{BREAKDOWN_WIDTH}"',
    )


def _colour(i: int, n: int) -> str:
    """The report's colours while they last; else hues spread round the wheel, so a
    per-pattern model's twenty-odd terms stay apart."""
    if n <= len(COLOURS):
        return COLOURS[i]
    return f"hsl({round(360 * i / n)},{65 if i % 2 else 45}%,{45 if i % 3 else 60}%)"


def breakdowns(evaluation: Mapping[str, Any]) -> dict[str, list[tuple[str, dict[str, float]]]]:
    """{device: [(variant and size, term shares at the variant's largest size)]}."""
    out: dict[str, list[tuple[str, dict[str, float]]]] = defaultdict(list)
    for r in evaluation["results"]:
        points = [p for p in r["points"] if p.get("terms")]
        if points:
            p = max(points, key=lambda p: _size(p["sizes"])[1])
            name, value = _size(p["sizes"])
            out[r["device"]].append((f"{r['variant']} {name}={_fmt(value)}", p["terms"]))
    return dict(out)


def model_figures(evaluation: Mapping[str, Any]) -> dict[str, str]:
    """{file name: SVG text} for an evaluation's JSON: ``<family>-<device>.svg`` (Figures
    7-9) and ``breakdown-<device>.svg``."""
    files = {}
    for (family, device), drawn in sorted(curves(evaluation).items()):
        xlabel = next(iter(_first_sizes(evaluation, drawn[0].variant)), "size")
        title = f"{family} on {device}: measured and predicted"
        files[f"{family}-{_slug(device)}.svg"] = _standalone(variant_figure(title, xlabel, drawn))
    for device, rows in sorted(breakdowns(evaluation).items()):
        title = f"Share of each model term in the prediction, {device}"
        files[f"breakdown-{_slug(device)}.svg"] = _standalone(breakdown_figure(title, rows))
    return files


def _first_sizes(evaluation: Mapping[str, Any], variant: str) -> Mapping[str, Any]:
    for r in evaluation["results"]:
        if r["variant"] == variant and r["points"]:
            sizes: Mapping[str, Any] = r["points"][0]["sizes"]
            return sizes
    return {}
