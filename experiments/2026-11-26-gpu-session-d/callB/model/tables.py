"""The tables of docs/results/2026-11-26-model-h200-d.md from this folder's evaluate-*.json
and guided*.json (run from the repository root: python3 <this file>)."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
MODELS = [("matmul-linear", "evaluate"), ("paper-linear", "evaluate-paper"),
          ("paper-linear-groups", "evaluate-paper-groups"),
          ("paper-linear-lstride", "evaluate-paper-lstride"),
          ("matmul-overlap", "evaluate-overlap"), ("paper-overlap", "evaluate-paper-overlap")]  # fmt: skip


def _load(name: str) -> dict:
    return json.loads((HERE / f"{name}.json").read_text())


def errors() -> str:
    runs = {m: _load(f) for m, f in MODELS}
    variants = sorted({r["variant"] for e in runs.values() for r in e["results"]})
    lines = ["| variant | sizes | " + " | ".join(f"`{m}`" for m in runs) + " |",
             "|---|---:|" + "---:|" * len(runs)]  # fmt: skip
    for v in variants:
        cells = []
        for e in runs.values():
            (r,) = [r for r in e["results"] if r["variant"] == v]
            cells.append(f"{100 * r['geomean_rel_error']:.1f}%")
            n = r["n_sizes"]
        lines.append(f"| {v} | {n} | " + " | ".join(cells) + " |")
    n = sum(r["n_sizes"] for r in next(iter(runs.values()))["results"])
    lines.append(f"| **all {n} points** | | "
                 + " | ".join(f"**{100 * e['geomean_rel_error']:.1f}%**" for e in runs.values())
                 + " |")  # fmt: skip
    lines.append("| misranked pairs | | " + " | ".join(
        f"{len(e['misranked'])} of {e['ranked_pairs']}" for e in runs.values()) + " |")  # fmt: skip
    same = all(
        _load(f"{f}-nonnegative")["geomean_rel_error"] == runs[m]["geomean_rel_error"]
        for m, f in MODELS
    )
    lines.append("")
    lines.append(f"`--nonnegative` gives the same numbers for every model: {same}.")
    return "\n".join(lines)


def guided() -> str:
    lines = ["| model | space | configurations | model-guided | default (`prior`) median "
             "| random median | ratio |", "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for m, f in [("matmul-linear", "guided"), ("paper-linear", "guided-paper-linear"),
                 ("paper-linear-groups", "guided-paper-linear-groups")]:  # fmt: skip
        path = HERE / f"{f}.json"
        if not path.is_file():
            continue
        for s in json.loads(path.read_text())["spaces"]:
            lines.append(f"| `{m}` | {s['space']} | {s['measured']} | {s['model_guided']} | "
                         f"{s['prior']['median']:g} | {s['random']['median']:g} | "
                         f"{s['ratio_guided_default']:.2f} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    print(errors())
    print()
    print(guided())
