"""Every figure README.md and docs/*.md quote is tied to where it comes from, and still agrees.

A figure is a number with a unit a reader takes as measured (``95.2%``, ``2.17 ms``, ``1.5x``,
``779 nodes``, ``0.890``). ``tests/data/figures.toml`` lists each one: the doc, a short exact
quote holding exactly that figure, and its source, one of

- ``json`` + ``select``: values picked from a results page's JSON (a key path, below), times
  ``scale``, optionally reduced (``mean``, ``min``, ``max``);
- ``run``: a cheap regeneration (a function of ``RUNS`` below; ``slow = true`` when it takes
  more than a few seconds);
- ``page`` + ``contains``: a results page (or an experiment's README) whose text holds the
  figure, for figures recorded nowhere more machine-readable;
- ``not_measured``: a goal, a default or a parameter, with the reason;
- ``unsourced``: a measured figure with no stored source, with the reason; reported.

A single quoted number must match its value within half a unit of its last digit (the quoted
rounding); a range ``a-b`` must match the least and the greatest value. Whitespace is
normalised, so re-wrapping a paragraph changes nothing; editing a figure makes its quote
vanish (and the edited figure unregistered) until the registry and its source move with it.

    python tests/test_figures.py        # list every figure and its source, and what fails
"""

from __future__ import annotations

import fnmatch
import functools
import json
import math
import re
import sys
import tempfile
import tomllib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[1]
REGISTRY = Path(__file__).parent / "data" / "figures.toml"
DOCS = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))

_NUM = r"\d[\d,]*(?:\.\d+)?"
# A number (or a range a-b) with a unit, or a bare fraction such as 0.890; not inside a word,
# a path, a version (3.0-rc2) or an exponent (10^7).
FIGURE = re.compile(
    rf"(?<![\w.^/-])(?P<num>{_NUM}(?: ?- ?{_NUM})?)"
    r"(?P<unit> ?%|x\b| ms\b| ns\b| s\b| points?\b| nodes\b| tests\b| leaves\b"
    r"| scenarios\b| evaluations\b| configurations\b)"
    rf"|(?<![\w.^/-])(?P<frac>0\.\d{{2,}}(?:-0?\.\d+)?)(?![\w.])"
)
FENCED = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)


class Kind(Enum):
    JSON = "json"
    RUN = "run"
    PAGE = "page"
    NOT_MEASURED = "not_measured"
    UNSOURCED = "unsourced"


@dataclass(frozen=True)
class Figure:
    """One quoted figure of a doc and where it comes from."""

    doc: str
    quote: str
    kind: Kind
    spec: dict[str, Any] = field(hash=False, compare=False)

    @property
    def ident(self) -> str:
        return f"{self.doc}:{self.quote}"


def normalise(text: str) -> str:
    """Prose only (fenced code removed), whitespace collapsed, so re-wrapping moves nothing."""
    return re.sub(r"\s+", " ", FENCED.sub(" ", text))


def load_registry(path: Path = REGISTRY) -> list[Figure]:
    entries = tomllib.loads(path.read_text())["figure"]
    figures = []
    for entry in entries:
        kinds = [k for k in Kind if k.value in entry]
        assert len(kinds) == 1, (
            f"{entry}: name exactly one source kind of {[k.value for k in Kind]}"
        )
        figures.append(Figure(entry["doc"], normalise(entry["quote"]), kinds[0], entry))
    return figures


def quoted_numbers(quote: str) -> list[str]:
    """The figure tokens in a quote (a range is one token)."""
    return [m.group("num") or m.group("frac") for m in FIGURE.finditer(quote)]


def parse_figure(token: str) -> tuple[list[float], float]:
    """The number(s) of a token (one, or a range's two ends) and the tolerance of its rounding."""
    ends = re.split(r" ?- ?", token) if re.search(r"\d ?- ?\d|\d ?- ?\.", token) else [token]
    values = [float(e.replace(",", "")) for e in ends]
    decimals = max(len(e.split(".")[1]) if "." in e else 0 for e in ends)
    return values, 0.5 * 10.0**-decimals + 1e-9


def select(data: Any, path: str) -> list[Any]:
    """Values at a key path: ``a.b`` keys; ``[k=v,k2=v2]`` keeps the objects of a list whose
    values match those globs; ``[glob|glob]`` keeps an object's values whose keys match one;
    ``*`` every value or element."""
    current = [data]
    for segment in re.findall(r"[^.\[\]]+|\[[^\]]*\]", path):
        found: list[Any] = []
        for item in current:
            if segment == "*":
                found.extend(item.values() if isinstance(item, dict) else item)
            elif segment.startswith("[") and "=" in segment:
                pairs = [p.split("=", 1) for p in segment[1:-1].split(",")]
                found.extend(
                    x for x in item if all(fnmatch.fnmatchcase(str(x.get(k)), v) for k, v in pairs)
                )
            elif segment.startswith("["):
                globs = segment[1:-1].split("|")
                found.extend(
                    v for k, v in item.items() if any(fnmatch.fnmatchcase(k, g) for g in globs)
                )
            else:
                found.append(item[segment])
        current = found
    return current


def json_values(spec: dict[str, Any]) -> list[float]:
    sources = spec["json"] if isinstance(spec["json"], list) else [spec["json"]]
    values = []
    for source in sources:
        data = json.loads((ROOT / source).read_text())
        picked = [float(v) for v in select(data, spec["select"])]
        if "minus" in spec:  # a difference of two figures, element by element
            picked = [
                a - float(b) for a, b in zip(picked, select(data, spec["minus"]), strict=True)
            ]
        values.extend(v * spec.get("scale", 1.0) for v in picked)
    return values


def reduce(values: list[float], how: str | None) -> list[float]:
    if how is None:
        return values
    return [{"mean": sum(values) / len(values), "min": min(values), "max": max(values)}[how]]


def wg_scenarios() -> list[float]:
    from perfport.wg import load_dataset

    return [float(len(load_dataset(ROOT / "src/perfport/datasets/wg/stencils.npz").features))]


def space_legal(kernel: str) -> list[float]:
    from perfport import builtin
    from perfport.space import kernel_space

    return [float(len(kernel_space(builtin(kernel))))]


@functools.cache
def _default_bundle() -> dict[str, float]:
    from perfport.select.deploy import fit_bundle
    from perfport.select.table_file import load_csv

    table = load_csv(ROOT / "src/perfport/datasets/lawson-gemm/h100-nvidia-opencl.csv.gz")
    with tempfile.TemporaryDirectory() as out:
        fit_bundle(table, 8, out)
        tree = json.loads((Path(out) / "bundle.json").read_text())["tree"]
        # The tree's tests: NAME_select's, not those of NAME_legal after it.
        select = (Path(out) / "selector.c").read_text().split("_legal(int index")[0]
        tests = select.count("if (")
    left, right = tree["left"], tree["right"]

    def depth(node: int) -> int:
        return 0 if left[node] < 0 else 1 + max(depth(left[node]), depth(right[node]))

    leaves = sum(1 for child in left if child < 0)
    return {"nodes": len(left), "leaves": leaves, "depth": depth(0), "tests": tests}


def select_fit(key: str) -> list[float]:
    """The default bundle's tree for k = 8 on the shipped OpenCL table (about 7 s here)."""
    return [float(_default_bundle()[key])]


RUNS: dict[str, Callable[..., list[float]]] = {
    "wg_scenarios": wg_scenarios,
    "space_legal": space_legal,
    "select_fit": select_fit,
}


def source_values(figure: Figure) -> list[float]:
    spec = figure.spec
    if figure.kind is Kind.JSON:
        values = json_values(spec)
    else:
        values = RUNS[spec["run"]](*spec.get("args", []))
    return reduce(values, spec.get("reduce"))


def check(figure: Figure, docs: dict[str, str]) -> list[str]:
    """What is wrong with one registered figure: empty when its doc and source agree."""
    where = f"{figure.doc}: {figure.quote!r}"
    tokens = quoted_numbers(figure.quote)
    if len(tokens) != 1:
        return [f"{where}: a quote must hold exactly one figure, found {tokens}"]
    if figure.quote not in docs[figure.doc]:
        return [f"{where}: not in the doc any more (edit the registry with the figure)"]
    if figure.kind is Kind.PAGE:
        page = normalise((ROOT / figure.spec["page"]).read_text())
        contains = normalise(figure.spec.get("contains", tokens[0]))
        if contains not in page or tokens[0] not in contains:
            return [f"{where}: {figure.spec['page']} no longer says {contains!r}"]
        return []
    if figure.kind in (Kind.NOT_MEASURED, Kind.UNSOURCED):
        return []
    quoted, tolerance = parse_figure(tokens[0])
    values = source_values(figure)
    if not values:
        return [f"{where}: the source gives no values"]
    ends = [min(values), max(values)] if len(quoted) == 2 else values
    if len(ends) != len(quoted) or any(
        abs(q - v) > tolerance for q, v in zip(quoted, ends, strict=True)
    ):
        shown = ", ".join(f"{v:.6g}" for v in ends)
        return [f"{where}: the source now gives {shown}"]
    return []


def unregistered(docs: dict[str, str], figures: list[Figure]) -> list[str]:
    """Figures in the docs that no registered quote covers."""
    missing = []
    for doc, text in docs.items():
        spans = []
        for quote in {f.quote for f in figures if f.doc == doc}:
            spans.extend((m.start(), m.end()) for m in re.finditer(re.escape(quote), text))
        for match in FIGURE.finditer(text):
            if not any(a <= match.start() and match.end() <= b for a, b in spans):
                context = text[max(0, match.start() - 50) : match.end() + 20]
                missing.append(f"{doc}: {match.group(0)!r} in ...{context}...")
    return missing


def read_docs() -> dict[str, str]:
    return {doc: normalise((ROOT / doc).read_text()) for doc in DOCS}


FIGURES = load_registry()
CHECKED = [f for f in FIGURES if f.kind in (Kind.JSON, Kind.RUN, Kind.PAGE)]


@pytest.fixture(scope="module")
def docs() -> dict[str, str]:
    return read_docs()


def test_every_quoted_figure_is_registered(docs: dict[str, str]) -> None:
    missing = unregistered(docs, FIGURES)
    assert not missing, "figures with no entry in tests/data/figures.toml:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    "figure",
    [
        pytest.param(f, id=f.ident[:90], marks=[pytest.mark.slow] if f.spec.get("slow") else [])
        for f in CHECKED
    ],
)
def test_figure_matches_its_source(figure: Figure, docs: dict[str, str]) -> None:
    problems = check(figure, docs)
    assert not problems, "\n".join(problems)


def test_unchecked_figures_say_why_and_are_reported(docs: dict[str, str]) -> None:
    unchecked = [f for f in FIGURES if f.kind in (Kind.NOT_MEASURED, Kind.UNSOURCED)]
    for figure in unchecked:
        assert figure.spec[figure.kind.value].strip(), f"{figure.ident}: give the reason"
        assert not check(figure, docs), check(figure, docs)
    unsourced = [
        f"{f.ident} ({f.spec['unsourced']})" for f in unchecked if f.kind is Kind.UNSOURCED
    ]
    if unsourced:
        warnings.warn(
            "quoted figures with no stored source:\n" + "\n".join(unsourced), stacklevel=1
        )


def test_editing_a_quoted_figure_fails(docs: dict[str, str]) -> None:
    # Every kind of check must catch an edit: the doc's figure, then the source's value.
    figure = next(f for f in CHECKED if f.kind is Kind.JSON and f.doc == "docs/wg.md")
    token = quoted_numbers(figure.quote)[0]
    edited_text = docs[figure.doc].replace(figure.quote, figure.quote.replace(token, "12.3"))
    edited = {**docs, figure.doc: edited_text}
    assert check(figure, edited), "an edited figure still passed"
    assert any("'12.3" in m for m in unregistered(edited, FIGURES))
    moved = Figure(figure.doc, figure.quote, figure.kind, {**figure.spec, "scale": 50.0})
    assert check(moved, docs), "a moved source value still passed"
    page = next(f for f in CHECKED if f.kind is Kind.PAGE)
    wrong = Figure(page.doc, page.quote, page.kind, {**page.spec, "contains": "no such text"})
    assert check(wrong, docs)


def test_figure_parsing() -> None:
    assert parse_figure("97.1-97.2") == ([97.1, 97.2], pytest.approx(0.05 + 1e-9))
    assert parse_figure("4,362")[0] == [4362.0]
    assert quoted_numbers("at 0.890 (0.864-0.915) and 9.5 ns") == ["0.890", "0.864-0.915", "9.5"]
    assert quoted_numbers("PoCL 3.0-rc2, a 10^7-point space, w(32x4)") == []
    assert select({"r": [{"m": "a", "d": {"x1": 1, "y": 2}}]}, "r[m=a].d[x*]") == [1]
    assert math.isclose(reduce([1.0, 2.0, 6.0], "mean")[0], 3.0)


def main() -> int:
    docs = read_docs()
    failing = [p for f in CHECKED if not f.spec.get("slow") for p in check(f, docs)]
    for f in FIGURES:
        source = f.spec.get("json") or f.spec.get("run") or f.spec.get("page") or f.kind.value
        print(f"{f.doc:18} {quoted_numbers(f.quote)[0]:>14}  {f.kind.value:12} {source}")
    for line in unregistered(docs, FIGURES) + failing:
        print("FAIL", line)
    return 1 if failing or unregistered(docs, FIGURES) else 0


if __name__ == "__main__":
    sys.exit(main())
