"""Figures as inline SVG text, written by hand: the report opens offline with no plotting
library installed and no script to draw it (the browser renders the markup as it stands)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 420, 220
LEFT, RIGHT, TOP, BOTTOM = 58, 12, 22, 38  # room for tick labels and axis titles
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")


@dataclass(frozen=True)
class Series:
    """One line of a chart: points in drawing order."""

    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e7 else f"{v:.3g}"


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    """About five round tick values spanning [lo, hi]."""
    if log:  # 1-2-5 in each decade while that gives few enough, else the decades alone
        first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        for mantissas in ((1, 2, 5), (1,)):
            ticks = [m * 10.0**e for e in range(first, last + 1) for m in mantissas]
            inside = [t for t in ticks if lo <= t <= hi]
            if len(inside) <= 7:
                return inside if len(inside) >= 2 else [lo, hi]
        return [10.0**e for e in range(first, last + 1, max(1, (last - first) // 5))]
    span = hi - lo or abs(hi) or 1.0
    step = 10 ** math.floor(math.log10(span / 5))
    step *= next(m for m in (1, 2, 5, 10) if span / (step * m) <= 6)
    start = math.floor(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step) + 2)]


class _Axes:
    """Maps data to pixels on one chart's plotting area."""

    def __init__(self, xs: Sequence[float], ys: Sequence[float], log_y: bool) -> None:
        self.log_y = log_y and min(ys) > 0
        self.x0, self.x1 = min(xs), max(xs)
        if self.x1 == self.x0:
            self.x1 = self.x0 + 1
        lo, hi = min(ys), max(ys)
        if self.log_y:
            self.y0, self.y1 = math.log10(lo), math.log10(hi)
        else:
            self.y0, self.y1 = min(0.0, lo), hi
        if self.y1 == self.y0:
            self.y1 = self.y0 + 1

    def x(self, v: float) -> float:
        return LEFT + (v - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT)

    def y(self, v: float) -> float:
        t = math.log10(v) if self.log_y else v
        return HEIGHT - BOTTOM - (t - self.y0) / (self.y1 - self.y0) * (HEIGHT - TOP - BOTTOM)

    def frame(self, xlabel: str, ylabel: str) -> list[str]:
        bottom, right = HEIGHT - BOTTOM, WIDTH - RIGHT
        parts = [f'<path d="M{LEFT},{TOP} V{bottom} H{right}" class="axis"/>']
        lo, hi = (10**self.y0, 10**self.y1) if self.log_y else (self.y0, self.y1)
        for t in _ticks(lo, hi, self.log_y):
            if lo * 0.999 <= t <= hi * 1.001 or (not self.log_y and self.y0 <= t <= self.y1):
                y = self.y(t)
                parts.append(
                    f'<text x="{LEFT - 4}" y="{y + 4:.1f}" class="tick end">{_fmt(t)}</text>'
                )
                parts.append(f'<path d="M{LEFT},{y:.1f} H{right}" class="grid"/>')
        for t in _ticks(self.x0, self.x1, False):
            if self.x0 <= t <= self.x1:
                x = self.x(t)
                parts.append(
                    f'<text x="{x:.1f}" y="{bottom + 14}" class="tick mid">{_fmt(t)}</text>'
                )
        parts.append(f'<text x="{(LEFT + right) / 2}" y="{HEIGHT - 6}" class="label mid">'
                     f"{escape(xlabel)}</text>")  # fmt: skip
        parts.append(f'<text x="12" y="{(TOP + bottom) / 2}" class="label mid" '
                     f'transform="rotate(-90 12 {(TOP + bottom) / 2})">{escape(ylabel)}</text>')  # fmt: skip
        return parts


def _svg(title: str, body: list[str], height: int = HEIGHT) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" class="figure">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def step_chart(
    title: str, series: Sequence[Series], xlabel: str, ylabel: str, log_y: bool = True
) -> str:
    """Lines drawn as steps (a best-so-far only changes at a new best), one per series."""
    drawn = [s for s in series if s.xs]
    if not drawn:
        return _svg(title, [f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" class="label mid">'
                            "no successful results</text>"])  # fmt: skip
    axes = _Axes([x for s in drawn for x in s.xs], [y for s in drawn for y in s.ys], log_y)
    body = axes.frame(xlabel, ylabel)
    for i, s in enumerate(drawn):
        colour = COLOURS[i % len(COLOURS)]
        d = f"M{axes.x(s.xs[0]):.1f},{axes.y(s.ys[0]):.1f}"
        for x, y in zip(s.xs[1:], s.ys[1:], strict=True):
            d += f" H{axes.x(x):.1f} V{axes.y(y):.1f}"
        d += f" H{axes.x(axes.x1):.1f}"
        body.append(f'<path d="{d}" class="line" stroke="{colour}"/>')
        if len(drawn) > 1:
            body.append(f'<text x="{WIDTH - RIGHT}" y="{TOP + 12 * i}" class="tick end" '
                        f'fill="{colour}">{escape(s.label)}</text>')  # fmt: skip
    return _svg(title, body)


def bar_chart(title: str, labels: Sequence[str], values: Sequence[float], unit: str) -> str:
    """Horizontal bars, one per label, with the value printed at the bar's end."""
    row, label_w = 18, 130
    height = TOP + row * max(1, len(labels)) + 8
    top = max(values, default=0.0) or 1.0
    body = []
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = TOP + i * row
        w = value / top * (WIDTH - label_w - 70)
        body.append(f'<text x="{label_w - 6}" y="{y + 12}" class="tick end">{escape(label)}</text>')
        body.append(f'<rect x="{label_w}" y="{y + 2}" width="{max(w, 1):.1f}" height="{row - 5}" '
                    f'fill="{COLOURS[i % len(COLOURS)]}"/>')  # fmt: skip
        body.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 12}" class="tick">'
                    f"{_fmt(value)} {escape(unit)}</text>")  # fmt: skip
    body.append(f'<text x="{WIDTH / 2}" y="14" class="label mid">{escape(title)}</text>')
    return _svg(title, body, height)


def stacked_bar(title: str, parts: Sequence[tuple[str, float]]) -> str:
    """One bar split into shares (a split plan's work per device), each share labelled."""
    total = sum(v for _, v in parts) or 1.0
    x, body = float(LEFT), []
    span = WIDTH - LEFT - RIGHT
    for i, (label, value) in enumerate(parts):
        w = value / total * span
        body.append(f'<rect x="{x:.1f}" y="28" width="{max(w, 1):.1f}" height="26" '
                    f'fill="{COLOURS[i % len(COLOURS)]}"/>')  # fmt: skip
        body.append(f'<text x="{x + 3:.1f}" y="70" class="tick">{escape(label)} '
                    f"{value / total:.0%}</text>")  # fmt: skip
        x += w
    body.append(f'<text x="{WIDTH / 2}" y="16" class="label mid">{escape(title)}</text>')
    return _svg(title, body, 80)


@dataclass(frozen=True)
class Mark:
    """A vertical line at ``x`` with a ringed dot at ``y`` (the computed split on a sweep)."""

    x: float
    y: float
    label: str


def line_chart(
    title: str,
    series: Sequence[Series],
    xlabel: str,
    ylabel: str,
    log_y: bool = False,
    dashed: frozenset[str] = frozenset(),
    mark: Mark | None = None,
) -> str:
    """Straight lines through dotted points, one per series (``dashed`` names those drawn
    dashed), the title on top and a legend under the axes, so many lines stay readable."""
    drawn = [s for s in series if s.xs]
    if not drawn:
        return _svg(title, [f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" class="label mid">'
                            "nothing to draw</text>"])  # fmt: skip
    xs = [x for s in drawn for x in s.xs] + ([mark.x] if mark else [])
    ys = [y for s in drawn for y in s.ys] + ([mark.y] if mark else [])
    axes = _Axes(xs, ys, log_y)
    body = axes.frame(xlabel, ylabel)
    legend = HEIGHT + 4
    for i, s in enumerate(drawn):
        colour = COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="5,3"' if s.label in dashed else ""
        d = "M" + " L".join(
            f"{axes.x(x):.1f},{axes.y(y):.1f}" for x, y in zip(s.xs, s.ys, strict=True)
        )
        body.append(f'<path d="{d}" class="line" stroke="{colour}"{dash}/>')
        body += [f'<circle cx="{axes.x(x):.1f}" cy="{axes.y(y):.1f}" r="2.5" fill="{colour}"/>'
                 for x, y in zip(s.xs, s.ys, strict=True)]  # fmt: skip
        if len(drawn) > 1:
            lx, ly = 10 + (i % 2) * (WIDTH // 2), legend + (i // 2) * 13
            body.append(f'<path d="M{lx},{ly - 4} h14" stroke="{colour}" stroke-width="2"{dash}/>'
                        f'<text x="{lx + 18}" y="{ly}" class="tick">{escape(s.label)}</text>')  # fmt: skip
    if mark is not None:
        mx, my = axes.x(mark.x), axes.y(mark.y)
        body.append(f'<path d="M{mx:.1f},{TOP} V{HEIGHT - BOTTOM}" stroke="#555" '
                    f'stroke-dasharray="2,2"/><circle cx="{mx:.1f}" cy="{my:.1f}" r="5" '
                    f'fill="none" stroke="#000" stroke-width="1.5"/><text x="{mx + 4:.1f}" '
                    f'y="{TOP + 10}" class="tick">{escape(mark.label)}</text>')  # fmt: skip
    body.append(f'<text x="{WIDTH / 2}" y="14" class="label mid">{escape(title)}</text>')
    rows = (len(drawn) + 1) // 2 if len(drawn) > 1 else 0
    return _svg(title, body, HEIGHT + 13 * rows + (6 if rows else 0))
