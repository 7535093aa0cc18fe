"""Issue 24: what the tile-load kernels say, and whether pricing tile loads apart fixes FD's
guided search. Two steps:

    python experiments/2026-11-26-model-tile/analyse.py --table-only OUT   # gpu_run.sh's end
    python experiments/2026-11-26-model-tile/analyse.py [--data CSV]       # no GPU, minutes

``--table-only`` reads ``OUT/collect-tile-*.json`` and prints, per lsize, halo and size, the
time per work-item (one tile load, one store) and per row segment, beside the work-groups
resident per SM if the limits are 2048 threads and 32 groups (H100, H200; an assumption).

The full step (after ``make_data.py``) runs, for each model (default ``paper-linear-resident``
and ``paper-linear-tile``) unconstrained and with costs bounded at 0, the two commands the
resident-groups study ran (``../2026-11-26-model-resident/README.md``), writing their outputs
to ``--out-dir`` (default here):

    perfport model evaluate --data CSV --model M [--nonnegative] --json
    python benchmarks/model_guided.py replay --db GUIDED --data CSV --model M [--nonnegative]
        --sizes matmul=2048,dg=131072,fd=8960 --json ...

and prints the geometric-mean error, misranked pairs and evaluations to 95% on matmul, DG
and FD against the default strategy's median, FD's predictions before any refit, and the
tile costs. ``GUIDED`` defaults to GPU session d's ``guided.db.gz``, unzipped.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
MODELS = ROOT / "src/perfport/datasets/model"
GUIDED = ROOT / "experiments/2026-11-26-gpu-session-d/callB/model/guided.db.gz"
SIZES = "matmul=2048,dg=131072,fd=8960"
THREADS_PER_SM, GROUPS_PER_SM = 2048, 32
SHOWN = ("p_gload", "p_tload", "p_trow", "p_uFD16", "p_uFD18", "p_barrier", "p_exposed")


def resident(group: int) -> int:
    return min(GROUPS_PER_SM, THREADS_PER_SM // (-(-group // 32) * 32))  # whole sub-groups


def table(out: Path) -> str:
    rows = []
    for path in sorted(out.glob("collect-tile-*.json")):
        rows += [r for r in json.loads(path.read_text())["results"] if r.get("time_ms")]
    if not rows:
        return f"{out}: no measured tile_halo_pattern kernel"
    rows.sort(key=lambda r: (r["args"]["halo"], r["args"]["lsize"], r["args"]["ng"]))
    lines = ["| lsize | halo | ng | work-items | resident per SM | ms | ps per work-item | "
             "ps per row segment |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        a = r["args"]
        w, ng, seconds = a["lsize"], a["ng"], r["time_ms"] * 1e-3
        items, segments = (w * ng) ** 2, w * ng * ng
        lines.append(f"| {w} | {a['halo']} | {ng} | {items:.3g} | {resident(w * w)} | "
                     f"{r['time_ms']:.4g} | {seconds / items * 1e12:.3g} | "
                     f"{seconds / segments * 1e12:.3g} |")  # fmt: skip
    return "\n".join(lines)


def _run(argv: list[str], log: Path) -> str:
    """Run one command from the repository root; its stdout, also written to ``log``."""
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    log.write_text(done.stdout)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-400:]}")
    return done.stdout


def evaluate_and_replay(
    model: str, bounded: bool, args: argparse.Namespace, guided_db: Path
) -> dict[str, Any]:
    label = model + ("-nonnegative" if bounded else "")
    flag = ["--nonnegative"] if bounded else []
    path = str(MODELS / f"{model}.json")
    evaluated = _run(
        [sys.executable, "-m", "perfport", "model", "evaluate", "--data", str(args.data),
         "--model", path, *flag, "--json"],
        args.out_dir / f"evaluate-{label}.json",
    )  # fmt: skip
    evaluation = json.loads(evaluated)
    guided = args.out_dir / f"guided-{label}.json"
    smoke = ["--smoke"] if args.smoke else ["--sizes", args.sizes, "--seeds", str(args.seeds)]
    _run(
        [sys.executable, str(ROOT / "benchmarks/model_guided.py"), "replay", "--db",
         str(guided_db), "--data", str(args.data), "--model", path, *flag, *smoke,
         "--json", str(guided)],
        guided.with_suffix(".txt"),
    )  # fmt: skip
    return {"label": label, "evaluate": evaluation, "replay": json.loads(guided.read_text())}


def summary(results: list[dict[str, Any]]) -> str:
    from perfport.strategies import DEFAULT_STRATEGY

    lines = ["| model | geomean error | misranked (of pairs) | guided: matmul | DG | FD | "
             "default median: matmul | DG | FD |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    fd_lines: list[str] = []
    costs: list[str] = []
    for r in results:
        ev, spaces = r["evaluate"], {s["space"]: s for s in r["replay"]["spaces"]}
        cell = [
            str(spaces[k]["model_guided"]) if k in spaces else "-" for k in ("matmul", "dg", "fd")
        ]
        default = [f"{spaces[k][DEFAULT_STRATEGY]['median']:g}" if k in spaces else "-"
                   for k in ("matmul", "dg", "fd")]  # fmt: skip
        lines.append(f"| {r['label']} | {ev['geomean_rel_error']:.1%} | "
                     f"{len(ev['misranked'])} ({ev['ranked_pairs']}) | {' | '.join(cell)} | "
                     f"{' | '.join(default)} |")  # fmt: skip
        if "fd" in spaces:
            fd_lines.append(f"{r['label']}: " + ", ".join(
                f"lsize {row['config']['lsize']} {row['measured_ms']:.3f}/"
                f"{row['predicted_ms']:.3f}" for row in spaces["fd"]["rows"]
                if row["measured_ms"] is not None and row["predicted_ms"] is not None))  # fmt: skip
        for cal in ev["calibrations"]:
            shown = ", ".join(f"{p} {cal['parameters'][p]:.3g}" for p in SHOWN
                              if p in cal["parameters"])  # fmt: skip
            costs.append(f"{r['label']} ({cal['device']}): {shown} s")
    return "\n".join([*lines, "", "FD before any refit, measured/predicted ms:", *fd_lines,
                      "", "costs:", *costs])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="gpu_run.sh's OUT (--table-only)")
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument("--data", type=Path, default=HERE / "data.csv")
    parser.add_argument("--guided-db", type=Path, help=f"default: {GUIDED.name} of session d")
    parser.add_argument(
        "--models", nargs="+", default=["paper-linear-resident", "paper-linear-tile"]
    )
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="replay --smoke (PoCL checks)")
    parser.add_argument("--out-dir", type=Path, default=HERE)
    args = parser.parse_args()
    if args.table_only:
        if args.out is None:
            parser.error("--table-only needs gpu_run.sh's OUT")
        print(table(args.out))
        return
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        guided_db = args.guided_db
        if guided_db is None:
            guided_db = Path(tmp) / "guided.db"
            with gzip.open(GUIDED) as src, guided_db.open("wb") as dst:
                shutil.copyfileobj(src, dst)
        results = [evaluate_and_replay(m, bounded, args, guided_db)
                   for m in args.models for bounded in (False, True)]  # fmt: skip
    text = summary(results)
    (args.out_dir / "analyse.txt").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
