"""The page's building blocks shared by every section: table cells and sortable tables."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def num(value: float | None, fmt: str = ".4g") -> str:
    """A right-aligned number cell; ``data-v`` holds the exact value the sorter compares."""
    if value is None or value != value:  # None or NaN: nothing to show or sort by
        return '<td class="num" data-v="">-</td>'
    return f'<td class="num" data-v="{value!r}">{value:{fmt}}</td>'


def td(text: str) -> str:
    return f"<td>{escape(text)}</td>"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A sortable table; each row's cells are ready-made <td> elements."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
